package builtin_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dshkit/dsh/runtime/tools/builtin"
)

// TestEditCap: Write and Edit refuse a file over EditMaxBytes before reading it whole, as
// found (a file grown outside dsh), as given (Write's content) and as an edit would leave
// it (a replace_all that multiplies the file); the file is left as it was, and a file
// under the cap is edited as usual.
func TestEditCap(t *testing.T) {
	const max = 1 << 20
	rt, ws := setup(t, builtin.Options{EditMaxBytes: max})
	big := filepath.Join(ws, "big.txt")
	// A sparse file far over the cap: reading it whole would take 200 MB.
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(200 << 20); err != nil {
		t.Fatal(err)
	}
	f.Close()
	for name, args := range map[string]string{
		"Edit":  `{"file_path":"big.txt","old_string":"a","new_string":"b"}`,
		"Write": `{"file_path":"big.txt","content":"small"}`,
	} {
		r := run(t, rt, name, args)
		if errCode(r) != builtin.CodeFileTooLarge || !strings.Contains(text(r), "big.txt") {
			t.Errorf("%s of a 200 MB file: code %q, %s", name, errCode(r), text(r))
		}
		if st, _ := os.Stat(big); st.Size() != 200<<20 {
			t.Errorf("%s changed the file: size %d", name, st.Size())
		}
	}
	content := strings.Repeat("x", max+1)
	if r := run(t, rt, "Write", `{"file_path":"new.txt","content":"`+content+`"}`); errCode(r) != builtin.CodeFileTooLarge {
		t.Errorf("Write over the cap: code %q", errCode(r))
	}
	if _, err := os.Stat(filepath.Join(ws, "new.txt")); !os.IsNotExist(err) {
		t.Errorf("a refused Write created its file: %v", err)
	}
	if err := os.WriteFile(filepath.Join(ws, "a.txt"), []byte(strings.Repeat("a", 2000)), 0o644); err != nil {
		t.Fatal(err)
	}
	r := run(t, rt, "Edit", `{"file_path":"a.txt","old_string":"a","new_string":"`+strings.Repeat("b", 1000)+`","replace_all":true}`)
	if errCode(r) != builtin.CodeFileTooLarge {
		t.Errorf("a replace_all growing the file to 2 MB: code %q, %s", errCode(r), text(r))
	}
	if data, _ := os.ReadFile(filepath.Join(ws, "a.txt")); len(data) != 2000 {
		t.Errorf("the refused edit changed the file to %d bytes", len(data))
	}
	if r := run(t, rt, "Edit", `{"file_path":"a.txt","old_string":"a","new_string":"bb","replace_all":true}`); r.IsError() {
		t.Errorf("an edit under the cap: %s", text(r))
	}
}

// TestBashTimeoutRange: a call's timeout too large for a duration is the maximum, not an
// overflow into a negative timeout that kills the command at once.
func TestBashTimeoutRange(t *testing.T) {
	rt, _ := setup(t, builtin.Options{MaxBashTimeout: 5 * time.Second})
	for _, ms := range []string{"9000000000000000", "9223372036854775807"} {
		r := run(t, rt, "Bash", `{"command":"echo ran","timeout":`+ms+`}`)
		if r.IsError() || !strings.Contains(text(r), "ran") {
			t.Errorf("timeout %s ms: %s (%s)", ms, text(r), errCode(r))
		}
	}
}
