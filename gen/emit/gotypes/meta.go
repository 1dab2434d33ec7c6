package gotypes

import (
	_ "embed"
	"fmt"
	"go/format"
	"path"
	"strconv"
	"strings"

	"github.com/dshkit/dsh/codec"
	"github.com/dshkit/dsh/gen/emit"
	"github.com/dshkit/dsh/gen/ir"
)

// The shared files are fixed Go text, kept in meta/ as templates that hold everything but
// the header, the package clause and (for handles) the imports.
var (
	//go:embed meta/codec.go.tmpl
	codecTemplate string
	//go:embed meta/agent.go.tmpl
	agentTemplate string
	//go:embed meta/token.go.tmpl
	tokenTemplate string
	// agentControlTemplate holds the Agent methods that need the AgentCancelCause union:
	// they are part of the handle when the spec declares it (the canonical spec does).
	//go:embed meta/agent_control.go.tmpl
	agentControlTemplate string
	// messagesTemplate holds the message constructors that follow the Agent handle when the
	// spec declares the records and unions they build (the canonical spec does).
	//go:embed meta/messages.go.tmpl
	messagesTemplate string
)

// agentDecl is the Agent handle's declaration for the spec: with Cancel and Inbox when the
// spec declares the AgentCancelCause union.
func (e *emitter) agentDecl() string {
	if t := e.spec.Lookup("AgentCancelCause"); t == nil || t.Kind != ir.Union {
		return agentTemplate
	}
	i := strings.LastIndex(agentTemplate, "}")
	decl := agentTemplate[:i] + agentControlTemplate + agentTemplate[i:]
	if e.hasMessageTypes() {
		decl += messagesTemplate
	}
	return decl
}

// hasMessageTypes reports whether the spec declares what UserText builds: the UserMessage
// record with Role, Content and Source, the MessageSource and ContentBlock unions and the
// TextBlock record.
func (e *emitter) hasMessageTypes() bool {
	um := e.spec.Lookup("UserMessage")
	if um == nil || um.Kind != ir.Record {
		return false
	}
	for _, name := range []string{"role", "content", "source"} {
		if fieldByJSON(um, name) == nil {
			return false
		}
	}
	for name, kind := range map[string]ir.TypeKind{"MessageSource": ir.Union, "ContentBlock": ir.Union, "TextBlock": ir.Record} {
		if t := e.spec.Lookup(name); t == nil || t.Kind != kind {
			return false
		}
	}
	return true
}

// handleTemplates maps each handle the spec may use to its declaration.
var handleTemplates = map[string]string{"Agent": agentTemplate, "Token": tokenTemplate}

// handleImports maps each handle to the standard packages its declaration imports.
var handleImports = map[string][]string{"Agent": {"context"}, "Token": {"sync/atomic"}}

// metaFiles renders meta_codec.go (the compile-time check of the codec runtime's version and
// the re-exported decoding errors), and meta_handles.go when some field uses a handle.
func (e *emitter) metaFiles(outDir string) ([]emit.File, error) {
	codecFile, err := e.metaFile(strings.ReplaceAll(codecTemplate, "{{VERSION}}", strconv.Itoa(codec.Version)))
	if err != nil {
		return nil, err
	}
	files := []emit.File{{Path: path.Join(outDir, "meta_codec.go"), Data: codecFile}}
	if len(e.handles) == 0 {
		return files, nil
	}
	var imports, decls []string
	for _, name := range sortedKeys(e.handles) {
		imports = append(imports, handleImports[name]...)
		if name == "Agent" {
			decls = append(decls, e.agentDecl())
			continue
		}
		decls = append(decls, handleTemplates[name])
	}
	var body strings.Builder
	body.WriteString("import (\n")
	for _, imp := range imports {
		fmt.Fprintf(&body, "\t%q\n", imp)
	}
	body.WriteString(")\n\n")
	body.WriteString(strings.Join(decls, "\n"))
	handles, err := e.metaFile(body.String())
	if err != nil {
		return nil, err
	}
	return append(files, emit.File{Path: path.Join(outDir, "meta_handles.go"), Data: handles}), nil
}

// metaFile prefixes body with the meta header and the package clause, and formats it.
func (e *emitter) metaFile(body string) ([]byte, error) {
	src := "// " + emit.Header(metaSpecFile) + "\n\npackage " + e.spec.Package + "\n\n" + body
	out, err := format.Source([]byte(src))
	if err != nil {
		return nil, fmt.Errorf("gotypes: formatting a meta file: %w", err)
	}
	return out, nil
}
