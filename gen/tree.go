package gen

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"regexp"
	"sort"

	"github.com/dshkit/dsh/gen/emit"
	"github.com/dshkit/dsh/gen/emit/scenarios"
	"github.com/dshkit/dsh/gen/ir"
	"github.com/dshkit/dsh/gen/load"
)

// The spec subdirectories beside the canonical surface (spec/*.cue).
const (
	// WireDir holds the external hook protocols, one CUE package per protocol
	// (spec/wire/claudecode.cue is package claudecode).
	WireDir = "wire"
	// BridgesDir holds the bridge mapping tables (spec/bridges).
	BridgesDir = "bridges"
	// ConformanceDir holds the conformance scenarios (spec/conformance).
	ConformanceDir = "conformance"
)

// Module is the Go module path of the generated packages.
const Module = "github.com/dshkit/dsh"

// Unit is one generated package: a loaded spec and where its outputs go.
type Unit struct {
	// Spec is the loaded spec.
	Spec *ir.Spec
	// Layout says where its outputs go, relative to the output root.
	Layout Layout
	// SpecDir is the spec's directory relative to spec/ ("" for the canonical surface).
	SpecDir string
}

// Tree is a whole spec: the canonical surface, the wire packages, the bridge tables and
// the conformance scenarios, each checked against the others.
type Tree struct {
	// Units are the generated packages: the canonical surface first, then the wire
	// packages (sorted), then the conformance package when there is one.
	Units []Unit
	// Bridges are the bridge mapping tables.
	Bridges []*ir.Bridge

	// schemas are the CUE definitions of each unit, keyed by unitKey; set by LoadCompare.
	schemas map[string]*load.Schemas
}

// unitKey names a unit among a tree's units: its spec subdirectory and package.
func unitKey(specDir, pkg string) string { return path.Join(specDir, pkg) }

// Schemas returns the CUE definitions of u, or nil when t was not loaded by LoadCompare.
func (t *Tree) Schemas(u Unit) *load.Schemas { return t.schemas[unitKey(u.SpecDir, u.Spec.Package)] }

// Main is the canonical surface's unit.
func (t *Tree) Main() Unit { return t.Units[0] }

// Load loads the spec tree in dir (shown as display in errors), laying the canonical
// surface out with main (DefaultLayout for the dsh repository).
func Load(dir, display string, main func(pkg string) Layout) (*Tree, error) {
	return loadTree(os.DirFS(dir), display, main, fileLoader{dir: dir}, true)
}

// LoadFS is Load over a file system such as the embedded spec (spec.FS).
func LoadFS(fsys fs.FS, display string, main func(pkg string) Layout) (*Tree, error) {
	return loadTree(fsys, display, main, fsLoader{fsys: fsys}, true)
}

// LoadCompare loads the spec tree of fsys (laid out with DefaultLayout) in the CUE
// context ctx and keeps each unit's CUE definitions (Tree.Schemas), so that two trees
// loaded in one context can be compared by CUE subsumption (dshgen breaking). Without
// scenarios it leaves the conformance scenarios out (about a third of the work), which
// only matter to a comparison for its notes.
func LoadCompare(ctx *load.Context, fsys fs.FS, display string, scenarios bool) (*Tree, error) {
	l := fsLoader{fsys: fsys, ctx: ctx, schemas: map[string]*load.Schemas{}}
	t, err := loadTree(fsys, display, DefaultLayout, l, scenarios)
	if err != nil {
		return nil, err
	}
	t.schemas = l.schemas
	return t, nil
}

// loader loads one CUE package of a spec subdirectory; dir "" is the spec root.
type loader interface {
	pkg(dir, pkg, display string) (*ir.Spec, error)
	bridges(dir, display string) ([]*ir.Bridge, error)
}

type fileLoader struct{ dir string }

func (l fileLoader) pkg(dir, pkg, display string) (*ir.Spec, error) {
	return load.Package(path.Join(l.dir, dir), pkg, display)
}

func (l fileLoader) bridges(dir, display string) ([]*ir.Bridge, error) {
	return load.Bridges(path.Join(l.dir, dir), display)
}

// fsLoader loads from a file system; with ctx set it loads in that context and records
// each package's definitions in schemas.
type fsLoader struct {
	fsys    fs.FS
	ctx     *load.Context
	schemas map[string]*load.Schemas
}

func (l fsLoader) pkg(dir, pkg, display string) (*ir.Spec, error) {
	fsDir := dir
	if fsDir == "" {
		fsDir = "."
	}
	if l.ctx == nil {
		return load.FSPackage(l.fsys, fsDir, pkg, display)
	}
	sp, sch, err := l.ctx.FSPackage(l.fsys, fsDir, pkg, display)
	if err != nil {
		return nil, err
	}
	l.schemas[unitKey(dir, sp.Package)] = sch
	return sp, nil
}

func (l fsLoader) bridges(dir, display string) ([]*ir.Bridge, error) {
	return load.BridgesFS(l.fsys, dir, display)
}

func loadTree(fsys fs.FS, display string, main func(pkg string) Layout, l loader, scenarios bool) (*Tree, error) {
	canon, err := l.pkg("", "", display)
	if err != nil {
		return nil, err
	}
	t := &Tree{Units: []Unit{{Spec: canon, Layout: main(canon.Package)}}}
	pkgs, err := packages(fsys, WireDir)
	if err != nil {
		return nil, err
	}
	for _, p := range pkgs {
		ws, err := l.pkg(WireDir, p, path.Join(display, WireDir))
		if err != nil {
			return nil, err
		}
		t.Units = append(t.Units, Unit{Spec: ws, Layout: WireLayout(t.Main().Layout, p), SpecDir: WireDir})
	}
	if has(fsys, BridgesDir) {
		d := path.Join(display, BridgesDir)
		if t.Bridges, err = l.bridges(BridgesDir, d); err != nil {
			return nil, err
		}
		if err := CheckBridges(t.Bridges, t.Units, d); err != nil {
			return nil, err
		}
	}
	if scenarios && has(fsys, ConformanceDir) {
		d := path.Join(display, ConformanceDir)
		cs, err := l.pkg(ConformanceDir, "", d)
		if err != nil {
			return nil, err
		}
		if err := CheckScenarios(cs, canon, d); err != nil {
			return nil, err
		}
		t.Units = append(t.Units, Unit{Spec: cs, Layout: ConformanceLayout(t.Main().Layout, cs.Package), SpecDir: ConformanceDir})
	}
	return t, nil
}

// has reports whether directory dir of fsys holds .cue files.
func has(fsys fs.FS, dir string) bool {
	names, _ := fs.Glob(fsys, dir+"/*.cue")
	return len(names) > 0
}

var packageClause = regexp.MustCompile(`(?m)^package\s+([A-Za-z_][A-Za-z0-9_]*)`)

// packages lists the CUE packages of directory dir of fsys, sorted.
func packages(fsys fs.FS, dir string) ([]string, error) {
	names, err := fs.Glob(fsys, dir+"/*.cue")
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var pkgs []string
	for _, n := range names {
		data, err := fs.ReadFile(fsys, n)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
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

// ConformanceLayout is where the conformance package pkg goes, next to the canonical
// surface's layout l: Go and the scenarios in <generated>/<pkg>, schemas in
// <schemas>/<pkg>, and the scenario index in conformance/SCENARIOS.md.
func ConformanceLayout(l Layout, pkg string) Layout {
	base := path.Dir(l.GoDir)
	return Layout{
		GoDir:     path.Join(base, pkg),
		SchemaDir: path.Join(l.SchemaDir, pkg),
		Suite: &scenarios.Options{
			IndexFile: path.Join(path.Dir(base), ConformanceDir, "SCENARIOS.md"),
			Harness:   Module + "/" + ConformanceDir,
			Runtime:   Module + "/" + ConformanceDir + "/dshrt",
		},
	}
}

// Files runs every emitter over the tree and returns everything `dshgen generate` writes,
// sorted by path.
func (t *Tree) Files() ([]emit.File, error) {
	var all []emit.File
	for _, u := range t.Units {
		fs, err := Files(u.Spec, u.Layout, emit.Options{SpecDir: u.SpecDir})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", u.Spec.Package, err)
		}
		all = append(all, fs...)
	}
	if len(t.Bridges) > 0 {
		hm, err := BridgeFiles(t.Bridges, t.Main().Layout)
		if err != nil {
			return nil, fmt.Errorf("bridge tables: %w", err)
		}
		all = append(all, hm...)
	}
	emit.Sort(all)
	for i := 1; i < len(all); i++ {
		if all[i].Path == all[i-1].Path {
			return nil, fmt.Errorf("two emitters write %s", all[i].Path)
		}
	}
	return all, nil
}
