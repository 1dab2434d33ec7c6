package doclinks

import (
	"bufio"
	"bytes"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"sort"
	"strings"
)

// LayoutFile and LayoutHeading locate the layout table: the README's "## Layout" section.
const (
	LayoutFile    = "README.md"
	LayoutHeading = "## Layout"
)

// codeSpanRE matches a code span in a table row: `path`.
var codeSpanRE = regexp.MustCompile("`([^`]+)`")

// CheckLayout checks that the layout table names every Go package of the tree: each
// directory holding a .go file (testdata, hidden and node_modules trees aside) must appear
// in the first column of a row of the README's "## Layout" section as a code span, either
// as its own path (`runtime/loop`, `cli`) or under a parent written as `dir/*`
// (`gen/emit/*` covers every package below gen/emit). A row naming a directory that holds
// no package, or a path that does not exist, is a problem too, so the table cannot go stale
// in either direction.
func CheckLayout(fsys fs.FS) ([]Problem, error) {
	readme, err := fs.ReadFile(fsys, LayoutFile)
	if err != nil {
		return nil, err
	}
	type entry struct {
		path string
		line int
		glob bool
	}
	var entries []entry
	in := false
	sc := bufio.NewScanner(bytes.NewReader(readme))
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.HasPrefix(line, "## ") {
			in = line == LayoutHeading
			continue
		}
		if !in || !strings.HasPrefix(line, "|") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		for _, m := range codeSpanRE.FindAllStringSubmatch(cells[0], -1) {
			p := strings.TrimSuffix(m[1], "/")
			if strings.ContainsAny(p, " .") && !strings.HasSuffix(p, "/*") {
				continue // a file (`spec/*.cue`, `meta.cue`) or prose, not a package path
			}
			e := entry{path: p, line: n}
			if strings.HasSuffix(p, "/*") {
				e.path, e.glob = strings.TrimSuffix(p, "/*"), true
			}
			entries = append(entries, e)
		}
	}
	if len(entries) == 0 {
		return nil, fmt.Errorf("%s: no %q table", LayoutFile, LayoutHeading)
	}
	pkgs := map[string]bool{}
	err = walk(fsys, ".", []string{".go"}, func(p string) error {
		pkgs[path.Dir(p)] = true
		return nil
	})
	if err != nil {
		return nil, err
	}
	var probs []Problem
	for dir := range pkgs {
		covered := false
		for _, e := range entries {
			if dir == e.path || (e.glob && strings.HasPrefix(dir, e.path+"/")) {
				covered = true
				break
			}
		}
		if !covered {
			probs = append(probs, Problem{File: LayoutFile, Line: 0, Ref: dir,
				Msg: "a package the layout table does not list (add a row, or name it under a `dir/*` row)"})
		}
	}
	for _, e := range entries {
		has := pkgs[e.path]
		for dir := range pkgs {
			if strings.HasPrefix(dir, e.path+"/") {
				has = true
			}
		}
		if !has {
			if _, err := fs.Stat(fsys, e.path); err == nil {
				continue // a directory of data the table describes (spec/wire, docs/design)
			}
			probs = append(probs, Problem{File: LayoutFile, Line: e.line, Ref: e.path, Msg: "the layout table names a path that does not exist"})
		}
	}
	sort.Slice(probs, func(i, j int) bool { return probs[i].Ref < probs[j].Ref })
	return probs, nil
}
