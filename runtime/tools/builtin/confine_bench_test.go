//go:build unix

package builtin_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/tools"
	"github.com/dshkit/dsh/runtime/tools/builtin"
)

// BenchmarkReadHugeLine reads a 256 MiB file of one line (sparse, made in the
// benchmark's temporary directory) with limit 1: the read streams the file, keeps 2000
// characters of the line and counts the rest. It reports the process's peak RSS
// (maxrss-MB), which covers the whole benchmark binary.
func BenchmarkReadHugeLine(b *testing.B) {
	ws := b.TempDir()
	f, err := os.Create(filepath.Join(ws, "huge"))
	if err != nil {
		b.Fatal(err)
	}
	if err := f.Truncate(256 << 20); err != nil {
		b.Fatal(err)
	}
	f.Close()
	reg := tools.NewRegistry()
	if _, err := builtin.Register(reg, builtin.Options{Workspace: ws}); err != nil {
		b.Fatal(err)
	}
	rt := tools.New(reg, dsh.NewRegistry())
	in := tools.Input{CallID: "c1", Name: "Read", Arguments: json.RawMessage(`{"file_path":"huge","limit":1}`)}
	b.ResetTimer()
	for b.Loop() {
		r := rt.Execute(context.Background(), in)
		if r.IsError() || !strings.Contains(text(r), "line truncated") {
			b.Fatalf("Read: %v", r.Outcome)
		}
	}
	b.StopTimer()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err == nil {
		b.ReportMetric(float64(ru.Maxrss)/1024, "maxrss-MB") // Linux reports KiB
	}
}
