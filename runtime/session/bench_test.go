package session

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshkit/dsh/generated/dsh"
)

// BenchmarkSessionAppend measures Append of a user/message with a 240-byte text: in
// memory, to a JSONL file without syncing, and to a JSONL file syncing every event.
func BenchmarkSessionAppend(b *testing.B) {
	data := dsh.UserMessageLogged{Message: msg("msg-0001", strings.Repeat("lorem ipsum ", 20))}
	raw, err := json.Marshal(data)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	file := func(b *testing.B) Store {
		f, _, err := OpenFile(filepath.Join(b.TempDir(), "bench.jsonl"))
		if err != nil {
			b.Fatal(err)
		}
		return f
	}
	cases := []struct {
		name   string
		store  func(b *testing.B) Store
		policy SyncPolicy
	}{
		{"jsonl-nofsync", file, SyncNever},
		{"memory", func(*testing.B) Store { return NewMemory() }, SyncNever},
		{"jsonl-fsync-every", file, SyncEveryEvent},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			l := mustOpen(b, c.store(b), WithSyncPolicy(c.policy))
			b.SetBytes(int64(len(raw)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := l.Append(ctx, data); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			if err := l.Close(); err != nil {
				b.Fatal(err)
			}
		})
	}
}
