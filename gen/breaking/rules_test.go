package breaking_test

import (
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/dshkit/dsh/gen"
	"github.com/dshkit/dsh/gen/breaking"
	"github.com/dshkit/dsh/gen/load"
	"github.com/dshkit/dsh/spec"
)

var update = flag.Bool("update", false, "rewrite the .want sections of testdata/rules")

// Every rule has one case file, testdata/rules/<RULE_ID>.txtar, holding a pair: an edit of
// testdata/base.txtar that the rule reports (breaking.edit) and a neighbouring edit that is
// compatible (compatible.edit). An optional old.edit first shapes the old tree. The
// .want sections are the findings and notes (as `dshgen breaking --verbose` prints them);
// go test ./gen/breaking -update rewrites them.
//
// An edit is a list of hunks: "@@ path" names a file of the tree, then the lines to
// replace (prefixed "-", found exactly once) and their replacement (prefixed "+"); a hunk
// without "-" lines appends its "+" lines to the file.
func TestRules(t *testing.T) {
	base := readTree(t, "testdata/base.txtar")
	cases, err := filepath.Glob("testdata/rules/*.txtar")
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, c := range cases {
		ids = append(ids, strings.TrimSuffix(filepath.Base(c), ".txtar"))
	}
	for _, r := range breaking.Rules {
		if !slices.Contains(ids, r.ID) {
			t.Errorf("rule %s has no case file testdata/rules/%s.txtar", r.ID, r.ID)
		}
	}
	if len(breaking.Rules) < 20 {
		t.Errorf("%d rules, want at least 20", len(breaking.Rules))
	}
	for _, c := range cases {
		id := strings.TrimSuffix(filepath.Base(c), ".txtar")
		t.Run(id, func(t *testing.T) {
			rule, ok := breaking.RuleByID(id)
			if !ok {
				t.Fatalf("%s names no rule", c)
			}
			a, err := txtar.ParseFile(c)
			if err != nil {
				t.Fatal(err)
			}
			sec := map[string]string{}
			for _, f := range a.Files {
				sec[f.Name] = string(f.Data)
			}
			old := applyEdit(t, base, sec["old.edit"])
			changed := false
			for _, side := range []string{"breaking", "compatible"} {
				edit, ok := sec[side+".edit"]
				if !ok {
					t.Fatalf("no %s.edit section", side)
				}
				rep := compare(t, old, applyEdit(t, old, edit))
				got := render(rep)
				switch side {
				case "breaking":
					if !slices.ContainsFunc(rep.Findings, func(f breaking.Finding) bool { return f.Rule == rule.ID && f.Category == rule.Category }) {
						t.Errorf("breaking.edit: no %s finding; got:\n%s", rule.ID, got)
					}
				case "compatible":
					if len(rep.Findings) > 0 {
						t.Errorf("compatible.edit: breaking findings:\n%s", got)
					}
				}
				if *update {
					if sec[side+".want"] != got {
						sec[side+".want"] = got
						changed = true
					}
					continue
				}
				if want := sec[side+".want"]; want != got {
					t.Errorf("%s: output differs from %s.want (go test ./gen/breaking -update, then review)\ngot:\n%swant:\n%s", side, side, got, want)
				}
			}
			if changed {
				var files []txtar.File
				for _, n := range []string{"old.edit", "breaking.edit", "breaking.want", "compatible.edit", "compatible.want"} {
					if s, ok := sec[n]; ok {
						files = append(files, txtar.File{Name: n, Data: []byte(s)})
					}
				}
				a.Files = files
				if err := os.WriteFile(c, txtar.Format(a), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// TestUnchangedTreeIsCompatible compares the real spec with itself: nothing to report,
// not even a note.
func TestUnchangedTreeIsCompatible(t *testing.T) {
	ctx := load.NewContext()
	a, err := gen.LoadCompare(ctx, spec.FS, "spec", true)
	if err != nil {
		t.Fatal(err)
	}
	b, err := gen.LoadCompare(ctx, spec.FS, "spec", true)
	if err != nil {
		t.Fatal(err)
	}
	rep := breaking.Compare(a, b, "spec")
	if len(rep.Findings)+len(rep.Notes) > 0 {
		t.Fatalf("unchanged spec:\n%s", render(rep))
	}
}

func render(r breaking.Report) string {
	var b strings.Builder
	for _, f := range r.Findings {
		fmt.Fprintln(&b, f)
	}
	for _, f := range r.Notes {
		fmt.Fprintln(&b, f)
	}
	return b.String()
}

// readTree reads the files of a txtar archive, adding the real spec/meta.cue.
func readTree(t *testing.T, name string) map[string]string {
	t.Helper()
	a, err := txtar.ParseFile(name)
	if err != nil {
		t.Fatal(err)
	}
	tree := map[string]string{}
	for _, f := range a.Files {
		tree[f.Name] = string(f.Data)
	}
	meta, err := fs.ReadFile(spec.FS, "meta.cue")
	if err != nil {
		t.Fatal(err)
	}
	tree["spec/meta.cue"] = string(meta)
	return tree
}

// applyEdit returns a copy of tree with the hunks of edit applied.
func applyEdit(t *testing.T, tree map[string]string, edit string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for k, v := range tree {
		out[k] = v
	}
	if strings.TrimSpace(edit) == "" {
		return out
	}
	type hunk struct {
		file       string
		minus, add []string
	}
	var hunks []*hunk
	for _, line := range strings.Split(strings.TrimSuffix(edit, "\n"), "\n") {
		switch {
		case strings.HasPrefix(line, "@@ "):
			hunks = append(hunks, &hunk{file: strings.TrimSpace(line[3:])})
		case len(hunks) == 0:
			t.Fatalf("edit line %q before any @@ path", line)
		case strings.HasPrefix(line, "-"):
			hunks[len(hunks)-1].minus = append(hunks[len(hunks)-1].minus, line[1:])
		case strings.HasPrefix(line, "+"):
			hunks[len(hunks)-1].add = append(hunks[len(hunks)-1].add, line[1:])
		default:
			t.Fatalf("edit line %q: want @@, - or +", line)
		}
	}
	for _, h := range hunks {
		src, ok := out[h.file]
		if !ok && len(h.minus) > 0 {
			t.Fatalf("edit: no file %s", h.file)
		}
		add := strings.Join(h.add, "\n")
		if len(h.add) > 0 {
			add += "\n"
		}
		if len(h.minus) == 0 {
			out[h.file] = src + add
			continue
		}
		find := strings.Join(h.minus, "\n") + "\n"
		if n := strings.Count(src, find); n != 1 {
			t.Fatalf("edit of %s: the - lines occur %d times, want once:\n%s", h.file, n, find)
		}
		out[h.file] = strings.Replace(src, find, add, 1)
	}
	return out
}

func mapFS(tree map[string]string) fs.FS {
	m := fstest.MapFS{}
	for k, v := range tree {
		m[strings.TrimPrefix(k, "spec/")] = &fstest.MapFile{Data: []byte(v)}
	}
	return m
}

func compare(t *testing.T, old, new map[string]string) breaking.Report {
	t.Helper()
	ctx := load.NewContext()
	o, err := gen.LoadCompare(ctx, mapFS(old), "spec", true)
	if err != nil {
		t.Fatalf("old tree: %v", err)
	}
	n, err := gen.LoadCompare(ctx, mapFS(new), "spec", true)
	if err != nil {
		t.Fatalf("new tree: %v", err)
	}
	return breaking.Compare(o, n, "spec")
}
