// Package gotypes emits the Go types of a dsh spec: one `<spec>_types.go` per spec file
// holding its records, enums and unions, plus the shared `meta_codec.go` (the compile-time
// check of the codec runtime's version, and the decoding errors re-exported from it) and
// `meta_handles.go` (the runtime handles the spec uses).
//
// The contract it implements is docs/generated-api.md ("Files", "Field types", "Records",
// "Enums", "Unions", "Handles"). It reads only the IR (gen/ir); its output imports only the
// standard library and github.com/dshkit/dsh/codec (the codec runtime the generated
// encoders and decoders call), is gofmt'ed, and is byte-for-byte deterministic for a given
// IR.
package gotypes

import (
	"bytes"
	"fmt"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/dave/jennifer/jen"

	"github.com/dshkit/dsh/gen/emit"
	"github.com/dshkit/dsh/gen/ir"
)

// metaSpecFile is the spec file the shared meta_*.go files are attributed to.
const metaSpecFile = "meta.cue"

// Emit renders the Go types of s into files under outDir (e.g. "generated/dsh"), sorted by
// path. It fails on an IR it cannot render faithfully: an unknown handle, an Agent handle
// without a UserMessage record, a bad default, an exclusive group naming a non-optional
// field, or two generated declarations with the same name.
func Emit(s *ir.Spec, outDir string) ([]emit.File, error) {
	return EmitWith(s, outDir, emit.Options{})
}

// EmitWith is Emit for a spec described by o (e.g. a wire package, whose headers name
// spec/wire/<file>).
func EmitWith(s *ir.Spec, outDir string, o emit.Options) ([]emit.File, error) {
	e, err := newEmitter(s)
	if err != nil {
		return nil, err
	}
	e.opts = o
	outDir = filepath.ToSlash(outDir)
	var files []emit.File
	for _, specFile := range e.specFiles() {
		data, err := e.typesFile(specFile)
		if err != nil {
			return nil, err
		}
		base := strings.TrimSuffix(path.Base(specFile), ".cue")
		files = append(files, emit.File{Path: path.Join(outDir, base+"_types.go"), Data: data})
		acc, err := e.accessorsFile(specFile)
		if err != nil {
			return nil, err
		}
		if acc != nil {
			files = append(files, emit.File{Path: path.Join(outDir, base+"_accessors.go"), Data: acc})
		}
	}
	metas, err := e.metaFiles(outDir)
	if err != nil {
		return nil, err
	}
	files = append(files, metas...)
	emit.Sort(files)
	if err := checkFiles(files); err != nil {
		return nil, err
	}
	return files, nil
}

// unionOf records the union a variant record belongs to.
type unionOf struct {
	union   *ir.Type
	variant *ir.Variant
}

// emitter holds what every rendering step needs to know about the whole spec.
type emitter struct {
	spec *ir.Spec
	// variants maps each variant record to its union.
	variants map[*ir.Type]unionOf
	// handles is the set of handle names some field uses.
	handles map[string]bool
	// opts says where the spec's files live, for headers.
	opts emit.Options
}

// newEmitter indexes s and rejects what the emitter cannot render.
func newEmitter(s *ir.Spec) (*emitter, error) {
	if s.Package == "" {
		return nil, fmt.Errorf("gotypes: spec has no Go package name")
	}
	e := &emitter{spec: s, variants: map[*ir.Type]unionOf{}, handles: map[string]bool{}}
	for _, t := range s.Types {
		if t.File == "" {
			return nil, fmt.Errorf("gotypes: %s: type %s has no spec file", t.Pos, t.Name)
		}
		for _, v := range t.Variants {
			if prev, ok := e.variants[v.Type]; ok {
				return nil, fmt.Errorf("gotypes: %s: %s is a variant of both %s and %s", v.Type.Pos, v.Type.Name, prev.union.Name, t.Name)
			}
			e.variants[v.Type] = unionOf{union: t, variant: v}
		}
	}
	for _, t := range s.Types {
		if err := e.checkType(t); err != nil {
			return nil, err
		}
	}
	return e, e.checkHandles()
}

// checkType validates what one type's rendering relies on.
func (e *emitter) checkType(t *ir.Type) error {
	for _, f := range t.Fields {
		if err := e.checkRef(f.Type, f.Pos, true); err != nil {
			return err
		}
		if err := e.checkDefault(f); err != nil {
			return err
		}
	}
	for _, f := range e.fields(t) {
		if _, isVariant := e.variants[t]; methodNames[f.GoName] || isVariant && f.GoName == "Kind" {
			return fmt.Errorf("gotypes: %s: field %s.%s clashes with a generated method", f.Pos, t.Name, f.GoName)
		}
	}
	for _, group := range t.Exclusive {
		for _, name := range group {
			f := fieldByJSON(t, name)
			if f == nil || !f.Optional || f.Runtime {
				return fmt.Errorf("gotypes: %s: exclusive group of %s names %q, which is not an optional field", t.Pos, t.Name, name)
			}
		}
	}
	return nil
}

// methodNames are the methods generated on every record, which no field may be named
// (variants also have Kind).
var methodNames = map[string]bool{"MarshalJSON": true, "UnmarshalJSON": true, "Validate": true}

// checkRef checks that Named references resolve, records the handles used and rejects
// durations nested in lists or maps (they have no element codec).
func (e *emitter) checkRef(r *ir.TypeRef, at ir.Pos, top bool) error {
	switch r.Kind {
	case ir.Named:
		if e.named(r) == nil {
			return fmt.Errorf("gotypes: %s: reference to undeclared type %q", at, r.Name)
		}
	case ir.Handle:
		e.handles[r.Name] = true
	case ir.Duration:
		if !top {
			return fmt.Errorf("gotypes: %s: a duration inside a list or map is not supported", at)
		}
	case ir.List, ir.Map:
		return e.checkRef(r.Elem, at, false)
	}
	return nil
}

// checkHandles rejects unknown handles and an Agent handle without its UserMessage record.
func (e *emitter) checkHandles() error {
	for _, name := range sortedKeys(e.handles) {
		if handleDecls[name] == nil {
			return fmt.Errorf("gotypes: unknown handle %q (known: Agent, Token)", name)
		}
	}
	if e.handles["Agent"] {
		if t := e.spec.Lookup("UserMessage"); t == nil || t.Kind != ir.Record {
			return fmt.Errorf("gotypes: the Agent handle is used but the spec declares no UserMessage record")
		}
	}
	return nil
}

// specFiles lists the spec files that declare types, sorted.
func (e *emitter) specFiles() []string {
	seen := map[string]bool{}
	for _, t := range e.spec.Types {
		seen[t.File] = true
	}
	return sortedKeys(seen)
}

// typesOf returns the types declared in specFile in source order (name order for types
// without a position, after the others), so the Go reads like the CUE it comes from.
func (e *emitter) typesOf(specFile string) []*ir.Type {
	var ts []*ir.Type
	for _, t := range e.spec.Types {
		if t.File == specFile {
			ts = append(ts, t)
		}
	}
	line := func(t *ir.Type) int {
		if t.Pos.Line == 0 {
			return int(^uint(0) >> 1)
		}
		return t.Pos.Line
	}
	sort.SliceStable(ts, func(i, j int) bool {
		if li, lj := line(ts[i]), line(ts[j]); li != lj {
			return li < lj
		}
		return ts[i].Name < ts[j].Name
	})
	return ts
}

// typesFile renders `<spec>_types.go` for one spec file.
func (e *emitter) typesFile(specFile string) ([]byte, error) {
	f := jen.NewFile(e.spec.Package)
	f.HeaderComment(e.opts.Header(specFile))
	for _, t := range e.typesOf(specFile) {
		var decls []jen.Code
		switch t.Kind {
		case ir.Record:
			decls = e.record(t)
		case ir.Enum:
			decls = e.enum(t)
		case ir.Union:
			decls = e.union(t)
		default:
			return nil, fmt.Errorf("gotypes: %s: type %s has unknown kind %s", t.Pos, t.Name, t.Kind)
		}
		for _, d := range decls {
			f.Add(d)
			f.Line()
		}
	}
	return render(f, specFile)
}

// render formats a jennifer file, reporting a failure against the spec file it renders.
func render(f *jen.File, specFile string) ([]byte, error) {
	var buf bytes.Buffer
	if err := f.Render(&buf); err != nil {
		return nil, fmt.Errorf("gotypes: rendering the types of %s: %w", specFile, err)
	}
	return buf.Bytes(), nil
}

// named returns the type a Named reference designates (linked, or looked up by name), or nil.
func (e *emitter) named(r *ir.TypeRef) *ir.Type {
	if r.Type != nil {
		return r.Type
	}
	return e.spec.Lookup(r.Name)
}

// fieldByJSON returns t's field with the given JSON name, or nil.
func fieldByJSON(t *ir.Type, name string) *ir.Field {
	for _, f := range t.Fields {
		if f.JSONName == name {
			return f
		}
	}
	return nil
}

// sortedKeys returns the keys of m in increasing order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
