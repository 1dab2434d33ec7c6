package main

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/dshkit/dsh/cmd/dshgen/internal/cli"
	"github.com/dshkit/dsh/spec"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"dshgen": func() {
			os.Exit(cli.Main(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
		},
	})
}

// TestScripts runs the CLI scripts in testdata/script. Each script starts in a work
// directory holding a copy of the real spec tree (spec.FS) in spec/: the canonical spec and
// the wire packages in spec/wire.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			// replace OLD NEW FILE replaces the first occurrence of OLD in FILE.
			"replace": func(ts *testscript.TestScript, neg bool, args []string) {
				if neg || len(args) != 3 {
					ts.Fatalf("usage: replace OLD NEW FILE")
				}
				file := ts.MkAbs(args[2])
				data, err := os.ReadFile(file)
				ts.Check(err)
				if !strings.Contains(string(data), args[0]) {
					ts.Fatalf("replace: %q not found in %s", args[0], args[2])
				}
				ts.Check(os.WriteFile(file, []byte(strings.Replace(string(data), args[0], args[1], 1)), 0o644))
			},
		},
		Setup: func(env *testscript.Env) error {
			dir := filepath.Join(env.WorkDir, "spec")
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return err
			}
			return fs.WalkDir(spec.FS, ".", func(p string, d fs.DirEntry, err error) error {
				if err != nil || d.IsDir() {
					return err
				}
				data, err := spec.FS.ReadFile(p)
				if err != nil {
					return err
				}
				dst := filepath.Join(dir, filepath.FromSlash(p))
				if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
					return err
				}
				return os.WriteFile(dst, data, 0o644)
			})
		},
	})
}
