package loop

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/session"
)

// TestGoldenLogsResume resumes an agent from every golden session log
// (runtime/session/testdata/golden, written by earlier spec versions and kept forever):
// the log replays through the agent's fold (turn state, request history, compaction
// state), not only through session.Replay.
func TestGoldenLogsResume(t *testing.T) {
	logs, err := filepath.Glob("../session/testdata/golden/*.jsonl")
	if err != nil || len(logs) == 0 {
		t.Fatalf("no golden logs: %v", err)
	}
	for _, p := range logs {
		t.Run(filepath.Base(p), func(t *testing.T) {
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(t.TempDir(), "log.jsonl")
			if err := os.WriteFile(path, data, 0o600); err != nil {
				t.Fatal(err)
			}
			f, _, err := session.OpenFile(path)
			if err != nil {
				t.Fatal(err)
			}
			e := newEnv(t)
			log, err := session.Open(context.Background(), f)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = log.Close() })
			var owner string
			for ev := range log.Events() {
				d, err := ev.Decode()
				if err != nil {
					t.Fatal(err)
				}
				owner = d.(dsh.SessionCreated).AgentID
				break
			}
			cfg := e.config()
			cfg.ID, cfg.Log = owner, log
			a, err := Resume(context.Background(), cfg)
			if err != nil {
				t.Fatalf("resume: %v", err)
			}
			closeWithin(t, a)
		})
	}
}
