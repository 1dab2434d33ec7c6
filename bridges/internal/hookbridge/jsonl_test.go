package hookbridge

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestJSONLTail: Tail reads the end of the file through the handle OpenJSONL opened,
// from the first line that begins within the bound: a file swapped for another at the
// same path afterwards is not what it reads.
func TestJSONLTail(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.jsonl")
	first := `{"sessionId":"s","uuid":"a"}` + "\n"
	if err := os.WriteFile(path, []byte(first+`{"uuid":"b"}`+"\n"+`{"uuid":"c"}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	j, fresh, err := OpenJSONL("transcript", path, Owner{Field: []string{"sessionId"}, SessionID: "s"})
	if err != nil || fresh {
		t.Fatalf("OpenJSONL: %v, fresh %v", err, fresh)
	}
	defer j.Close()
	if err := os.Rename(path, path+".old"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(`{"uuid":"planted"}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := j.Tail(1 << 20)
	if err != nil || string(got) != first+`{"uuid":"b"}`+"\n"+`{"uuid":"c"}`+"\n" {
		t.Errorf("Tail(whole) = %q, %v", got, err)
	}
	// A bound inside the second line: the lines that begin within it, the third only.
	got, err = j.Tail(int64(len(`{"uuid":"c"}`+"\n") + 3))
	if err != nil || string(got) != `{"uuid":"c"}`+"\n" {
		t.Errorf("Tail(short) = %q, %v", got, err)
	}
	if got, _ := j.Tail(3); strings.TrimSpace(string(got)) != "" {
		t.Errorf("Tail(3) = %q, want nothing (no line begins there)", got)
	}
}
