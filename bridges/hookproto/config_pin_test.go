package hookproto

import (
	"errors"
	"testing"
)

// A diagnostic reads "file: path: cause (what skipped)", each part only when it is set.
func TestDiagnosticError(t *testing.T) {
	bad := errors.New("bad timeout")
	for _, c := range []struct {
		d    Diagnostic
		want string
	}{
		{Diagnostic{File: "hooks.json", Path: "hooks.Stop[0]", Skipped: "group", Err: bad}, "hooks.json: hooks.Stop[0]: bad timeout (group skipped)"},
		{Diagnostic{Path: "hooks.Stop[0]", Err: bad}, "hooks.Stop[0]: bad timeout"},
		{Diagnostic{File: "hooks.json", Err: bad}, "hooks.json: bad timeout"},
		{Diagnostic{Err: bad, Skipped: "file"}, "bad timeout (file skipped)"},
	} {
		if got := c.d.Error(); got != c.want {
			t.Errorf("Error() = %q, want %q", got, c.want)
		}
	}
}
