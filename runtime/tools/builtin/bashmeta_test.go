package builtin

import (
	"encoding/json"
	"testing"
)

// TestBashMetaExitCode: a command that exits non-zero carries {"exitCode": N} as its
// presentation metadata (what dsh log marks as a failure); exit 0 carries none.
func TestBashMetaExitCode(t *testing.T) {
	for code, want := range map[int]string{0: "", 1: `{"exitCode":1}`, 127: `{"exitCode":127}`} {
		value, _ := json.Marshal(bashResult{ExitCode: code})
		got, err := bashMeta(nil, value)
		if err != nil || string(got) != want {
			t.Errorf("exit %d: meta %s, %v; want %q", code, got, err, want)
		}
	}
}
