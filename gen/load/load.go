// Package load turns a CUE spec directory into the IR (gen/ir). It is the only package of
// dsh that imports CUE: it evaluates the spec, lets CUE check it against spec/meta.cue,
// then applies the checks CUE cannot express, and reports every problem with the CUE
// file:line:col a reviewer has to edit.
package load

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/cuecontext"
	cueerrors "cuelang.org/go/cue/errors"
	"cuelang.org/go/cue/load"
	"cuelang.org/go/cue/token"

	"github.com/dshkit/dsh/gen/ir"
)

// Problem is one thing wrong with a spec, at a position.
type Problem struct {
	Pos ir.Pos
	Msg string
}

// Error is a spec that could not be turned into IR. It lists every problem found, each
// starting with its position ("spec/tools.cue:12:3: ...").
type Error struct {
	// Dir is the spec directory as the user named it; positions are shown under it.
	Dir      string
	Problems []Problem
}

// ErrSpec is wrapped by every *Error, so that callers can test errors.Is(err, ErrSpec).
var ErrSpec = errors.New("invalid spec")

func (e *Error) Error() string {
	var b strings.Builder
	for i, p := range e.Problems {
		if i > 0 {
			b.WriteByte('\n')
		}
		pos := p.Pos
		if pos.File != "" && e.Dir != "" {
			pos.File = path.Join(filepath.ToSlash(e.Dir), pos.File)
		}
		fmt.Fprintf(&b, "%s: %s", pos, p.Msg)
	}
	return b.String()
}

// Unwrap makes errors.Is(err, ErrSpec) true.
func (e *Error) Unwrap() error { return ErrSpec }

// metaFile is the spec file holding the schema of the spec itself; its definitions are
// not part of the generated surface.
const metaFile = "meta.cue"

// Dir loads the spec in directory dir (only its top-level .cue files: subdirectories such
// as conformance/ are separate packages). display is how positions name the directory in
// errors (e.g. "spec"); "" uses dir.
func Dir(dir, display string) (*ir.Spec, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if display == "" {
		display = dir
	}
	sp, _, err := build(nil, abs, display, "", nil)
	return sp, err
}

// Package loads the CUE package pkg from directory dir, which may hold several packages
// (spec/wire holds claudecode and codex).
func Package(dir, pkg, display string) (*ir.Spec, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if display == "" {
		display = dir
	}
	sp, _, err := build(nil, abs, display, pkg, nil)
	return sp, err
}

// FS loads the spec from the top-level .cue files of fsys (e.g. the embedded spec).
// display is how positions name the directory in errors.
func FS(fsys fs.FS, display string) (*ir.Spec, error) {
	return FSPackage(fsys, ".", "", display)
}

// FSPackage loads the CUE package pkg ("" for the only one) from the .cue files of
// directory dir of fsys.
func FSPackage(fsys fs.FS, dir, pkg, display string) (*ir.Spec, error) {
	sp, _, err := fsPackage(nil, fsys, dir, pkg, display)
	return sp, err
}

// fsPackage is FSPackage in the CUE context ctx (nil: a new one); it also returns the
// evaluated package.
func fsPackage(ctx *cue.Context, fsys fs.FS, dir, pkg, display string) (*ir.Spec, cue.Value, error) {
	names, err := fs.Glob(fsys, path.Join(dir, "*.cue"))
	if err != nil {
		return nil, cue.Value{}, err
	}
	if len(names) == 0 {
		return nil, cue.Value{}, fmt.Errorf("%s: no .cue files", display)
	}
	// cue/load reads overlays by absolute path; the directory need not exist.
	root := filepath.Join(string(filepath.Separator), "dsh-embedded-spec")
	overlay := map[string]load.Source{}
	for _, n := range names {
		data, err := fs.ReadFile(fsys, n)
		if err != nil {
			return nil, cue.Value{}, err
		}
		overlay[filepath.Join(root, path.Base(n))] = load.FromBytes(data)
	}
	return build(ctx, root, display, pkg, overlay)
}

// build loads, evaluates and walks one CUE package in the context ctx (nil: a new one).
func build(ctx *cue.Context, dir, display, pkg string, overlay map[string]load.Source) (*ir.Spec, cue.Value, error) {
	cfg := &load.Config{Dir: dir, Overlay: overlay}
	arg := "."
	if pkg != "" {
		arg = ".:" + pkg
	}
	insts := load.Instances([]string{arg}, cfg)
	if len(insts) != 1 {
		return nil, cue.Value{}, fmt.Errorf("%s: expected one CUE package, found %d", display, len(insts))
	}
	inst := insts[0]
	if inst.Err != nil {
		return nil, cue.Value{}, cueError(display, inst.Err)
	}
	if ctx == nil {
		ctx = cuecontext.New()
	}
	v := ctx.BuildInstance(inst)
	if err := v.Err(); err != nil {
		return nil, cue.Value{}, cueError(display, err)
	}
	if err := v.Validate(); err != nil {
		return nil, cue.Value{}, cueError(display, err)
	}
	w := &walker{root: v, importPath: inst.ImportPath, spec: &ir.Spec{Package: inst.PkgName}, byName: map[string]*ir.Type{}, kinds: map[*ir.Type]string{}}
	w.walk()
	if len(w.problems) > 0 {
		return nil, cue.Value{}, w.err(display)
	}
	return w.spec, v, nil
}

// cueError converts CUE's errors into an *Error with positions. CUE reports one error per
// failed alternative of a disjunction; those are folded into one problem per path, placed
// at the first position outside meta.cue (where the reviewer made the mistake).
func cueError(display string, err error) error {
	e := &Error{Dir: display}
	type group struct {
		pos  ir.Pos
		msgs []string
	}
	var order []string
	groups := map[string]*group{}
	for _, ce := range cueerrors.Errors(err) {
		format, args := ce.Msg()
		msg := fmt.Sprintf(format, args...)
		key := strings.Join(ce.Path(), ".")
		g := groups[key]
		if g == nil {
			g = &group{}
			groups[key] = g
			order = append(order, key)
		}
		if p := bestPos(ce); g.pos.File == "" || (isSchemaFile(g.pos.File) && p.File != "" && !isSchemaFile(p.File)) {
			g.pos = p
		}
		if len(ce.InputPositions()) > 0 || ce.Position().IsValid() || len(g.msgs) == 0 {
			g.msgs = append(g.msgs, msg)
		}
	}
	for _, key := range order {
		g := groups[key]
		if g.pos.File == "" && hasChild(groups, key) {
			continue // a summary ("N errors in empty disjunction") of errors listed below it
		}
		msg := g.msgs[len(g.msgs)-1]
		if len(g.msgs) > 2 {
			msg = fmt.Sprintf("%s (and %d more alternatives)", msg, len(g.msgs)-2)
		}
		if key != "" {
			msg = key + ": " + msg
		}
		e.Problems = append(e.Problems, Problem{Pos: g.pos, Msg: msg})
	}
	if len(e.Problems) == 0 {
		e.Problems = []Problem{{Msg: err.Error()}}
	}
	sortProblems(e.Problems)
	return e
}

// hasChild reports whether some group's key lies below key.
func hasChild[G any](groups map[string]G, key string) bool {
	for k := range groups {
		if strings.HasPrefix(k, key+".") {
			return true
		}
	}
	return false
}

// schemaFiles are the spec files that only declare the schema other files must satisfy:
// meta.cue of the canonical spec and schema.cue of the conformance scenarios. An error
// is shown at the data that violates them, not at the schema.
var schemaFiles = map[string]bool{metaFile: true, "schema.cue": true}

func isSchemaFile(name string) bool { return schemaFiles[name] }

// bestPos picks the error position a reviewer should look at: the first one outside the
// schema files, else the first valid one.
func bestPos(ce cueerrors.Error) ir.Pos {
	ps := append([]token.Pos{ce.Position()}, ce.InputPositions()...)
	var first ir.Pos
	for _, p := range ps {
		if !p.IsValid() {
			continue
		}
		ip := position(p)
		if !isSchemaFile(ip.File) {
			return ip
		}
		if first.File == "" {
			first = ip
		}
	}
	return first
}

func position(p token.Pos) ir.Pos {
	if !p.IsValid() {
		return ir.Pos{}
	}
	return ir.Pos{File: filepath.Base(p.Filename()), Line: p.Line(), Col: p.Column()}
}

func sortProblems(ps []Problem) {
	sort.SliceStable(ps, func(i, j int) bool {
		a, b := ps[i].Pos, ps[j].Pos
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Col < b.Col
	})
}
