package gen

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"

	"github.com/dshkit/dsh/gen/emit"
	"github.com/dshkit/dsh/gen/ir"
	"github.com/dshkit/dsh/gen/load"
)

// Unit is one generated package: a loaded spec and where its outputs go.
type Unit struct {
	// Spec is the loaded spec.
	Spec *ir.Spec
	// Layout says where its outputs go, relative to the output root.
	Layout Layout
}

// WireDir is the spec subdirectory holding the external hook protocols, one CUE package
// per protocol (spec/wire/claudecode.cue is package claudecode).
const WireDir = "wire"

var packageClause = regexp.MustCompile(`(?m)^package\s+([A-Za-z_][A-Za-z0-9_]*)`)

// wirePackages lists the CUE packages of the wire directory of fsys, sorted.
func wirePackages(fsys fs.FS) ([]string, error) {
	names, err := fs.Glob(fsys, WireDir+"/*.cue")
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var pkgs []string
	for _, n := range names {
		data, err := fs.ReadFile(fsys, n)
		if err != nil {
			return nil, err
		}
		m := packageClause.FindSubmatch(data)
		if m == nil {
			return nil, fmt.Errorf("%s: no package clause", n)
		}
		if p := string(m[1]); !seen[p] {
			seen[p] = true
			pkgs = append(pkgs, p)
		}
	}
	sort.Strings(pkgs)
	return pkgs, nil
}

// WireLayout is where the outputs of wire package pkg go, next to the canonical surface's
// layout l: Go in <generated>/wire/<pkg>, schemas in <schemas>/<pkg>; no catalog.
func WireLayout(l Layout, pkg string) Layout {
	base := path.Dir(l.GoDir)
	return Layout{GoDir: path.Join(base, WireDir, pkg), SchemaDir: path.Join(l.SchemaDir, pkg)}
}

// LoadTree loads the spec in dir (shown as display in errors) and every wire package in
// dir/wire, returning one Unit each: the canonical surface first, with layout main.
func LoadTree(dir, display string, main func(pkg string) Layout) ([]Unit, error) {
	s, err := load.Dir(dir, display)
	if err != nil {
		return nil, err
	}
	units := []Unit{{Spec: s, Layout: main(s.Package)}}
	pkgs, err := wirePackages(os.DirFS(dir))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	for _, p := range pkgs {
		ws, err := load.Package(filepath.Join(dir, WireDir), p, path.Join(display, WireDir))
		if err != nil {
			return nil, err
		}
		units = append(units, Unit{Spec: ws, Layout: WireLayout(units[0].Layout, p)})
	}
	return units, nil
}

// LoadTreeFS is LoadTree over a file system such as the embedded spec (spec.FS).
func LoadTreeFS(fsys fs.FS, display string, main func(pkg string) Layout) ([]Unit, error) {
	s, err := load.FS(fsys, display)
	if err != nil {
		return nil, err
	}
	units := []Unit{{Spec: s, Layout: main(s.Package)}}
	pkgs, err := wirePackages(fsys)
	if err != nil {
		return nil, err
	}
	for _, p := range pkgs {
		ws, err := load.FSPackage(fsys, WireDir, p, path.Join(display, WireDir))
		if err != nil {
			return nil, err
		}
		units = append(units, Unit{Spec: ws, Layout: WireLayout(units[0].Layout, p)})
	}
	return units, nil
}

// TreeFiles runs every emitter over every unit and returns all files, sorted by path.
func TreeFiles(units []Unit) ([]emit.File, error) {
	var all []emit.File
	for _, u := range units {
		fs, err := Files(u.Spec, u.Layout)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", u.Spec.Package, err)
		}
		all = append(all, fs...)
	}
	emit.Sort(all)
	return all, nil
}
