package session

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshkit/dsh/generated/dsh"
)

// TestGoldenLogsReplay opens every golden log of testdata/golden (written by earlier
// specs and kept forever; see gen/breaking's TestWriteGoldenLog), decodes every event
// strictly, checks that each decodes to what was written (re-encoding gives the same
// JSON), and replays it. Together the logs cover every session-event type of today's
// spec: a new type needs a new golden log. A breaking spec change must keep this test
// passing or ship a migration.
func TestGoldenLogsReplay(t *testing.T) {
	logs, err := filepath.Glob("testdata/golden/*.jsonl")
	if err != nil || len(logs) == 0 {
		t.Fatalf("no golden logs: %v", err)
	}
	seen := map[string]bool{}
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
			f, rec, err := OpenFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if rec.Truncated() {
				t.Fatalf("golden log recovered: %+v", rec)
			}
			l, err := Open(context.Background(), f)
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			st, err := Replay(l.Events())
			if err != nil {
				t.Fatal(err)
			}
			if st.Events != int64(bytes.Count(data, []byte("\n"))) {
				t.Fatalf("replayed %d events of %d lines", st.Events, bytes.Count(data, []byte("\n")))
			}
			for ev, err := range l.Events() {
				if err != nil {
					t.Fatal(err)
				}
				v, err := ev.Decode()
				if err != nil {
					t.Fatalf("event %d (%s): %v", ev.Seq, ev.Type, err)
				}
				again, err := json.Marshal(v)
				if err != nil {
					t.Fatal(err)
				}
				if !sameJSON(t, ev.Data, again) {
					t.Errorf("event %d (%s) decodes to something else:\nwritten %s\nnow     %s", ev.Seq, ev.Type, ev.Data, again)
				}
				seen[ev.Type] = true
			}
		})
	}
	for _, typ := range dsh.SessionEventTypes {
		if !seen[typ] {
			t.Errorf("no golden log holds a %s event: write one for the new spec version, keeping the old ones (go test ./gen/breaking -run TestWriteGoldenLog -golden-log $PWD/runtime/session/testdata/golden/spec-X.Y.Z.jsonl)", typ)
		}
	}
}

func sameJSON(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatal(err)
	}
	ja, _ := json.Marshal(x)
	jb, _ := json.Marshal(y)
	return bytes.Equal(ja, jb)
}

// TestOpenChecksTheSpecVersion: a log of this major version opens, older minor or not,
// and so does one written before versions were recorded and one of 1.x or 2.x (2.0.0 and
// 3.0.0 broke hook behaviour, not the log); one of another major version is refused in
// one line naming both versions.
func TestOpenChecksTheSpecVersion(t *testing.T) {
	for _, c := range []struct {
		version string
		ok      bool
	}{{"", true}, {dsh.SpecVersion, true}, {"1.0.7", true}, {"1.6.0", true}, {"2.0.0", true}, {"2.1.0", true}, {"4.0.0", false}, {"0.9.0", false}, {"garbage", false}} {
		t.Run("v"+c.version, func(t *testing.T) {
			data := `{"sessionId":"s","agentId":"a"}`
			if c.version != "" {
				data = `{"sessionId":"s","agentId":"a","specVersion":"` + c.version + `"}`
			}
			line := `{"type":"session/created","seq":0,"time":"2026-12-04T10:00:00Z","data":` + data + "}\n"
			path := filepath.Join(t.TempDir(), "log.jsonl")
			if err := os.WriteFile(path, []byte(line), 0o600); err != nil {
				t.Fatal(err)
			}
			f, _, err := OpenFile(path)
			if err != nil {
				t.Fatal(err)
			}
			l, err := Open(context.Background(), f)
			if c.ok {
				if err != nil {
					t.Fatal(err)
				}
				l.Close()
				return
			}
			f.Close()
			if !errors.Is(err, ErrIncompatibleVersion) || strings.Contains(err.Error(), "\n") ||
				!strings.Contains(err.Error(), "spec "+c.version) || !strings.Contains(err.Error(), "spec "+dsh.SpecVersion) {
				t.Fatalf("err = %v; want one line naming %s and %s", err, c.version, dsh.SpecVersion)
			}
		})
	}
}
