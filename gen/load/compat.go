package load

import (
	"bytes"
	"errors"
	"io/fs"
	"regexp"
	"strings"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/cuecontext"
	"cuelang.org/go/cue/format"

	"github.com/dshkit/dsh/gen/ir"
)

// semver is the form of the spec's version: MAJOR.MINOR.PATCH, no leading zeros.
var semver = regexp.MustCompile(`^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$`)

// version reads the top-level field version, the spec's semantic version, if the package
// declares one.
func (w *walker) version() {
	v := w.root.LookupPath(cue.ParsePath("version"))
	if !v.Exists() {
		return
	}
	pos := entryPos(v) // the declaration, not meta.cue's constraint
	s, err := v.String()
	if err != nil || !v.IsConcrete() {
		w.errorf(pos, "version must be a concrete string such as \"1.0.0\"")
		return
	}
	if !semver.MatchString(s) {
		w.errorf(pos, "version %q is not MAJOR.MINOR.PATCH", s)
		return
	}
	w.spec.Version, w.spec.VersionPos = s, pos
}

// Context is a CUE context shared by the spec loads whose definitions are compared
// (dshgen breaking): CUE only compares values built in one context.
type Context struct{ ctx *cue.Context }

// NewContext returns an empty context.
func NewContext() *Context { return &Context{ctx: cuecontext.New()} }

// Schemas are the CUE definitions of one loaded spec package, kept so that another
// version of the package can be compared with them by CUE itself.
type Schemas struct {
	ctx  *Context
	defs map[string]cue.Value
}

// FSPackage is the package function FSPackage in c; it also returns the package's
// definitions.
func (c *Context) FSPackage(fsys fs.FS, dir, pkg, display string) (*ir.Spec, *Schemas, error) {
	sp, v, err := fsPackage(c.ctx, fsys, dir, pkg, display)
	if err != nil {
		return nil, nil, err
	}
	s := &Schemas{ctx: c, defs: map[string]cue.Value{}}
	it, err := v.Fields(cue.Definitions(true))
	if err != nil {
		return nil, nil, err
	}
	for it.Next() {
		if sel := it.Selector(); sel.IsDefinition() {
			s.defs[strings.TrimPrefix(sel.String(), "#")] = it.Value()
		}
	}
	return sp, s, nil
}

// ErrOtherContext is returned by Accepts for schemas loaded in different contexts.
var ErrOtherContext = errors.New("load: schemas of different contexts cannot be compared")

// Accepts reports whether definition name of s accepts every value that definition name
// of old accepted (CUE subsumption: s's definition subsumes old's). It returns nil when
// it does, or when either side does not declare name (that is a removal or an addition,
// which the caller sees in the IR), and otherwise CUE's reason in one line.
//
// Subsumption answers for field sets, required markers, scalar types, enum values,
// disjunctions and constraints (bounds, patterns). It does not see JSON names, the
// elements of lists, defaults, or a closed record replacing an open one, nor a newly
// required field; the IR comparison covers those. A definition CUE cannot decide (one
// that does not subsume itself) is reported as accepting.
func (s *Schemas) Accepts(old *Schemas, name string) error {
	if s.ctx != old.ctx {
		return ErrOtherContext
	}
	nv, ok1 := s.defs[name]
	ov, ok2 := old.defs[name]
	if !ok1 || !ok2 {
		return nil
	}
	err := nv.Subsume(ov)
	if err == nil {
		return nil
	}
	if ov.Subsume(ov) != nil || sameSource(ov, nv) {
		// CUE cannot decide this definition: it does not subsume itself, or it does not
		// subsume an identical copy (it misjudges open structs embedding definitions).
		// The IR comparison answers alone.
		return nil
	}
	msg := strings.Join(strings.Fields(err.Error()), " ")
	if i := strings.Index(msg, " in {"); i > 0 {
		msg = msg[:i] // CUE goes on with the whole struct
	}
	return errors.New("CUE subsumption fails: " + msg)
}

// sameSource reports whether two definitions evaluate to the same CUE syntax, comments
// aside (cue.Docs(false) keeps those of the definitions the syntax inlines, so that a
// reworded doc comment of a referenced definition would otherwise count as a change).
func sameSource(a, b cue.Value) bool {
	fa, err1 := format.Node(noComments(a.Syntax(cue.Docs(false))))
	fb, err2 := format.Node(noComments(b.Syntax(cue.Docs(false))))
	return err1 == nil && err2 == nil && bytes.Equal(fa, fb)
}

// noComments drops every comment of n and its descendants, and returns n.
func noComments(n ast.Node) ast.Node {
	ast.Walk(n, func(n ast.Node) bool {
		ast.SetComments(n, nil)
		return true
	}, nil)
	return n
}
