// Package examples_test checks that the example plugins' generated glue is fresh.
package examples_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/dshkit/dsh/gen"
	"github.com/dshkit/dsh/gen/emit/scaffold"
	"github.com/dshkit/dsh/spec"
)

// TestScaffoldsAreFresh regenerates each example's plugin_gen.go in memory, as its
// //go:generate line would, and requires the committed file to be identical.
func TestScaffoldsAreFresh(t *testing.T) {
	tree, err := gen.LoadFS(spec.FS, "spec", gen.DefaultLayout)
	if err != nil {
		t.Fatal(err)
	}
	main := tree.Main()
	for pkg, events := range map[string][]string{
		"rmguard":   {"tools/guard"},
		"editnotes": {"tools/post-execute"},
		"redact":    {"agent/request"},
		"toolallow": {"agent/request"},
		"respcache": {"agent/request", "agent/response"},
	} {
		want, err := scaffold.Emit(main.Spec, scaffold.Options{Package: pkg, Type: "Plugin", Events: events, Import: gen.Module + "/" + main.Layout.GoDir})
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(pkg, "plugin_gen.go"))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s/plugin_gen.go is stale: run go generate ./examples/...", pkg)
		}
	}
}
