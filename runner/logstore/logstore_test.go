package logstore_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runner/logstore"
)

// TestFileAndMemory: a log in memory or in a new file starts empty; a file that holds
// events resumes; a torn last line is cut and told.
func TestFileAndMemory(t *testing.T) {
	ctx := context.Background()
	mem, err := logstore.Open(ctx, logstore.Options{})
	if err != nil || mem.Resume || mem.Session != "" {
		t.Fatalf("memory: %+v, %v", mem, err)
	}
	mem.Close()

	path := filepath.Join(t.TempDir(), "s.jsonl")
	first, err := logstore.Open(ctx, logstore.Options{Path: path})
	if err != nil || first.Resume {
		t.Fatalf("new file: %+v, %v", first, err)
	}
	if _, err := first.Log.Append(ctx, dsh.SessionCreated{SessionID: "ses_x", AgentID: "main"}); err != nil {
		t.Fatal(err)
	}
	first.Close()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"type":"turn/st`)
	f.Close()
	var repaired string
	again, err := logstore.Open(ctx, logstore.Options{Path: path, Repaired: func(p, reason string) { repaired = p }})
	if err != nil || !again.Resume {
		t.Fatalf("existing file: %+v, %v", again, err)
	}
	defer again.Close()
	if repaired != path {
		t.Errorf("Repaired told %q, want %q", repaired, path)
	}
	if !logstore.IsURL("postgres://u@h/db") || logstore.IsURL(path) {
		t.Error("IsURL")
	}
}
