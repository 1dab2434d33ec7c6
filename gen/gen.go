// Package gen is dshgen's library: it loads a spec (gen/load), runs every emitter over the
// IR (gen/emit/...), and writes or checks the generated tree.
package gen

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/rogpeppe/go-internal/diff"

	"github.com/dshkit/dsh/gen/emit"
	"github.com/dshkit/dsh/gen/emit/dispatch"
	"github.com/dshkit/dsh/gen/emit/docs"
	"github.com/dshkit/dsh/gen/emit/gotests"
	"github.com/dshkit/dsh/gen/emit/gotypes"
	"github.com/dshkit/dsh/gen/emit/scenarios"
	"github.com/dshkit/dsh/gen/emit/schema"
	"github.com/dshkit/dsh/gen/ir"
	"github.com/dshkit/dsh/internal/atomicfile"
)

// Layout says where each kind of output goes, relative to the output root.
type Layout struct {
	// GoDir is the directory of the generated Go package (default "generated/<package>").
	GoDir string
	// SchemaDir is the directory of the JSON Schema files (default "generated/schema").
	SchemaDir string
	// DocsFile is the Markdown catalog (default "docs/catalog.md").
	DocsFile string
	// Suite, when set, says where the conformance suite of a spec with scenarios goes.
	Suite *scenarios.Options
}

// DefaultLayout is the layout of the dsh repository for a spec whose package is pkg.
func DefaultLayout(pkg string) Layout {
	return Layout{GoDir: "generated/" + pkg, SchemaDir: "generated/schema", DocsFile: "docs/catalog.md"}
}

// Files runs every emitter over s and returns all generated files, sorted by path.
// Nothing touches the disk. o.SpecDir names the spec's directory under spec/ for headers. A
// spec without events and session events (a wire package) gets no dispatch files and one
// JSON Schema per record.
func Files(s *ir.Spec, l Layout, o emit.Options) ([]emit.File, error) {
	var all []emit.File
	add := func(fs []emit.File, err error) error {
		if err != nil {
			return err
		}
		all = append(all, fs...)
		return nil
	}
	if err := add(gotypes.EmitWith(s, l.GoDir, o)); err != nil {
		return nil, fmt.Errorf("go types: %w", err)
	}
	if err := add(dispatch.Emit(s, l.GoDir)); err != nil {
		return nil, fmt.Errorf("dispatch: %w", err)
	}
	if err := add(schema.EmitWith(s, l.SchemaDir, o)); err != nil {
		return nil, fmt.Errorf("json schema: %w", err)
	}
	if l.SchemaDir != "" {
		if err := add(gotests.EmitWith(s, l.GoDir, l.SchemaDir, o)); err != nil {
			return nil, fmt.Errorf("go round-trip test: %w", err)
		}
	}
	if l.Suite != nil {
		so := *l.Suite
		so.GoDir = l.GoDir
		if err := add(scenarios.Emit(s, so)); err != nil {
			return nil, fmt.Errorf("conformance suite: %w", err)
		}
	}
	if l.DocsFile != "" {
		f, err := docs.EmitWith(s, l.DocsFile, o)
		if err != nil {
			return nil, fmt.Errorf("docs: %w", err)
		}
		all = append(all, f)
	}
	emit.Sort(all)
	for i := 1; i < len(all); i++ {
		if all[i].Path == all[i-1].Path {
			return nil, fmt.Errorf("two emitters write %s", all[i].Path)
		}
	}
	return all, nil
}

// generatedMarker is how dshgen recognises a file it owns (and may delete when the spec no
// longer produces it).
const generatedMarker = "by dshgen from spec/"

// managedDirs are the directories whose generated files belong to files: a generated file
// found there that files does not produce is stale.
func managedDirs(files []emit.File) []string {
	seen := map[string]bool{}
	var dirs []string
	for _, f := range files {
		d := path.Dir(f.Path)
		if !seen[d] {
			seen[d] = true
			dirs = append(dirs, d)
		}
	}
	return dirs
}

// Stale compares files with the tree under root. It returns one unified diff per file
// that differs, is missing, or is a leftover generated file the spec no longer produces.
func Stale(root string, files []emit.File) ([]string, error) {
	var diffs []string
	want := map[string]bool{}
	for _, f := range files {
		want[f.Path] = true
		old, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(f.Path)))
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
		if !bytes.Equal(old, f.Data) {
			diffs = append(diffs, string(diff.Diff("a/"+f.Path, old, "b/"+f.Path, f.Data)))
		}
	}
	leftovers, err := leftovers(root, files, want)
	if err != nil {
		return nil, err
	}
	for _, p := range leftovers {
		old, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(p)))
		if err != nil {
			return nil, err
		}
		diffs = append(diffs, string(diff.Diff("a/"+p, old, "b/"+p, nil)))
	}
	return diffs, nil
}

// leftovers lists generated files in the managed directories that files does not produce.
func leftovers(root string, files []emit.File, want map[string]bool) ([]string, error) {
	var out []string
	for _, d := range managedDirs(files) {
		entries, err := os.ReadDir(filepath.Join(root, filepath.FromSlash(d)))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			p := path.Join(d, e.Name())
			if e.IsDir() || want[p] {
				continue
			}
			data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(p)))
			if err != nil {
				return nil, err
			}
			head, _, _ := bytes.Cut(data, []byte("\n"))
			if bytes.Contains(head, []byte(generatedMarker)) {
				out = append(out, p)
			}
		}
	}
	return out, nil
}

// Write brings the tree under root in line with files: it writes only files whose content
// changed, each through a temporary file renamed into place, and, with prune, removes
// generated files in the same directories that files no longer contains. It returns the
// paths it changed.
func Write(root string, files []emit.File, prune bool) ([]string, error) {
	var changed []string
	want := map[string]bool{}
	for _, f := range files {
		want[f.Path] = true
		dst := filepath.Join(root, filepath.FromSlash(f.Path))
		if old, err := os.ReadFile(dst); err == nil && bytes.Equal(old, f.Data) {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return changed, err
		}
		if err := atomicfile.Write(dst, f.Data); err != nil {
			return changed, err
		}
		changed = append(changed, f.Path)
	}
	if !prune {
		return changed, nil
	}
	stale, err := leftovers(root, files, want)
	if err != nil {
		return changed, err
	}
	for _, p := range stale {
		if err := os.Remove(filepath.Join(root, filepath.FromSlash(p))); err != nil {
			return changed, err
		}
		changed = append(changed, p+" (removed)")
	}
	return changed, nil
}

// Summary is a one-line account of a set of diffs, e.g. "3 stale files: a, b, c".
func Summary(diffs []string) string {
	var names []string
	for _, d := range diffs {
		line, _, _ := strings.Cut(d, "\n") // "diff a/<path> b/<path>"
		name, _, _ := strings.Cut(strings.TrimPrefix(line, "diff a/"), " ")
		names = append(names, name)
	}
	return fmt.Sprintf("%d stale file(s): %s", len(diffs), strings.Join(names, ", "))
}
