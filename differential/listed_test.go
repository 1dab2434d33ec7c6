package differential

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDifferencesTableReads reads the table of allowed differences the suite checks
// against, so that a malformed row fails even where the engines do not run (-short).
func TestDifferencesTableReads(t *testing.T) {
	listed, err := ReadListed(filepath.Join("testdata", "differences.md"))
	if err != nil {
		t.Fatal(err)
	}
	if len(listed) == 0 {
		t.Fatal("testdata/differences.md lists no difference")
	}
	for _, l := range listed {
		if l.Case == "" || l.Aspect == "" {
			t.Errorf("differences.md:%d: a row needs a case and an aspect", l.Line)
		}
	}
}

// TestReadListedRejectsBadRows checks that the reader refuses what the suite could not
// apply: a wrong cell count, an unknown kind or engine, a row without a reason, and a table
// without its end marker.
func TestReadListedRejectsBadRows(t *testing.T) {
	for name, row := range map[string]string{
		"cells":  "| `a` | claude | `sent` | deliberate |",
		"kind":   "| `a` | claude | `sent` | maybe | why |",
		"engine": "| `a` | cursor | `sent` | deliberate | why |",
		"reason": "| `a` | claude | `sent` | deliberate |  |",
		"no end": "",
	} {
		t.Run(name, func(t *testing.T) {
			body := "<!-- differential:begin -->\n| case | engine | aspect | kind | reason |\n| --- | --- | --- | --- | --- |\n" + row + "\n"
			if name != "no end" {
				body += "<!-- differential:end -->\n"
			}
			path := filepath.Join(t.TempDir(), "d.md")
			if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := ReadListed(path)
			if err == nil {
				t.Fatalf("ReadListed accepted %q", row)
			}
			if !strings.Contains(err.Error(), "d.md") {
				t.Errorf("the error %q does not name the file", err)
			}
		})
	}
}
