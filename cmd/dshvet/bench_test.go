package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/dshkit/dsh/internal/oracle"
)

// BenchmarkVetRepo runs go vet ./... over this repository with go vet's own analyzers
// (govet) and with dshvet's (dshvet, -vettool), each iteration with results go's cache has
// never seen, so every package is analyzed again (the facts of the dependencies and of the
// standard library included); the compiled packages stay in the build cache. govet gets a
// new -printf.funcs value each time; dshvet a copy of its binary with a few bytes appended,
// which changes its build ID and so the cache key. Over the repository both report
// findings (dshvet's exhaustive switches in the runtime, the deliberate misuse in tests),
// so a non-zero exit is expected; a failure to run is not. Run it with -benchtime=3x: one
// iteration is tens of seconds.
func BenchmarkVetRepo(b *testing.B) {
	root := oracle.RepoRoot(b)
	dir := b.TempDir()
	bin := filepath.Join(dir, "dshvet")
	build := exec.Command("go", "build", "-o", bin, "./cmd/dshvet")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("go build ./cmd/dshvet: %v\n%s", err, out)
	}
	vet := func(b *testing.B, args ...string) {
		cmd := exec.Command("go", append([]string{"vet"}, append(args, "./...")...)...)
		cmd.Dir = root
		out, err := cmd.CombinedOutput()
		if _, ok := err.(*exec.ExitError); err != nil && !ok {
			b.Fatalf("go vet: %v\n%s", err, out)
		}
	}
	b.Run("govet", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			vet(b, fmt.Sprintf("-printf.funcs=dshvetbench%d", time.Now().UnixNano()))
		}
	})
	b.Run("dshvet", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			data, err := os.ReadFile(bin)
			if err != nil {
				b.Fatal(err)
			}
			fresh := filepath.Join(dir, fmt.Sprintf("dshvet-%d", i))
			if err := os.WriteFile(fresh, fmt.Appendf(data, "dshvetbench%d", time.Now().UnixNano()), 0o755); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			vet(b, "-vettool="+fresh)
		}
	})
}
