package main

import (
	"context"
	"os"
	"slices"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/dshkit/dsh/cmd/dshscaffold/internal/scaffoldcmd"
	"github.com/dshkit/dsh/gen"
	"github.com/dshkit/dsh/gen/emit/scaffold"
	"github.com/dshkit/dsh/spec"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"dshscaffold": func() {
			os.Exit(scaffoldcmd.Main(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
		},
	})
}

// TestScripts runs the CLI scripts in testdata/script: help, usage errors, -list, writing.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{Dir: "testdata/script"})
}

// TestTableMatchesSpec: the event table dshscaffold serves from the generated surface is
// the one dshgen scaffold derives from the spec, so both write the same glue.
func TestTableMatchesSpec(t *testing.T) {
	tree, err := gen.LoadFS(spec.FS, "spec", gen.DefaultLayout)
	if err != nil {
		t.Fatal(err)
	}
	cmp := func(a, b scaffold.Event) int {
		if a.Name < b.Name {
			return -1
		} else if a.Name > b.Name {
			return 1
		}
		return 0
	}
	want := slices.SortedFunc(slices.Values(scaffold.SpecEvents(tree.Main().Spec)), cmp)
	got := slices.SortedFunc(slices.Values(scaffoldcmd.Events()), cmp)
	if !slices.Equal(got, want) {
		t.Errorf("dsh.Events' table differs from the spec's:\n got %v\nwant %v", got, want)
	}
}
