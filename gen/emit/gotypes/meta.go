package gotypes

import (
	"fmt"
	"path"

	"github.com/dave/jennifer/jen"

	"github.com/dshkit/dsh/codec"
	"github.com/dshkit/dsh/gen/emit"
	"github.com/dshkit/dsh/gen/emit/gofile"
	"github.com/dshkit/dsh/gen/ir"
)

// codecPath is the import path of the codec runtime the generated code runs on.
const codecPath = "github.com/dshkit/dsh/codec"

// handleDecls maps each handle the spec may use to the emitter of its declarations.
var handleDecls = map[string]func(e *emitter) []jen.Code{
	"Agent": (*emitter).agentDecls,
	"Token": func(*emitter) []jen.Code { return tokenDecls() },
}

// metaFiles renders meta_codec.go (the compile-time check of the codec runtime's version and
// the re-exported decoding errors), and meta_handles.go when some field uses a handle.
func (e *emitter) metaFiles(outDir string) ([]emit.File, error) {
	codecFile, err := e.metaFile("meta_codec.go", codecDecls())
	if err != nil {
		return nil, err
	}
	files := []emit.File{{Path: path.Join(outDir, "meta_codec.go"), Data: codecFile}}
	if len(e.handles) == 0 {
		return files, nil
	}
	var decls []jen.Code
	for _, name := range sortedKeys(e.handles) {
		decls = append(decls, handleDecls[name](e)...)
	}
	handles, err := e.metaFile("meta_handles.go", decls)
	if err != nil {
		return nil, err
	}
	return append(files, emit.File{Path: path.Join(outDir, "meta_handles.go"), Data: handles}), nil
}

// metaFile renders decls, a blank line between each two, under the meta header.
func (e *emitter) metaFile(name string, decls []jen.Code) ([]byte, error) {
	f := gofile.New(e.spec.Package, emit.Header(metaSpecFile))
	f.ImportName(codecPath, "codec")
	for i, d := range decls {
		if i > 0 {
			f.Line()
		}
		f.Add(d)
	}
	out, err := gofile.Render(name, f)
	if err != nil {
		return nil, fmt.Errorf("gotypes: %w", err)
	}
	return out, nil
}

// codecDecls are the declarations of meta_codec.go: the check that the codec runtime
// supports codec.Version, and the decoding errors re-exported from it.
func codecDecls() []jen.Code {
	cq := func(name string) *jen.Statement { return jen.Qual(codecPath, name) }
	sentinels := [][2]string{
		{"ErrMissingField", "an absent required field"},
		{"ErrUnknownField", "a field the type does not declare"},
		{"ErrMissingKind", "a union value without its discriminator"},
		{"ErrUnknownKind", "a discriminator that names no variant"},
		{"ErrInvalidEnum", "a value outside its enum"},
		{"ErrExclusive", "more than one field of an exclusive group set"},
		{"ErrNilVariant", "a nil union value (or nil pointer variant)"},
	}
	return []jen.Code{
		gofile.Comment(`This package's codec runs on github.com/dshkit/dsh/codec, the runtime of the code dshgen
generates. These constants check at compile time that the two agree (see
codec.EnforceVersion): if they do not, regenerate with the dshgen of the dsh version the
build uses, or upgrade dsh.`).Const().Defs(
			jen.Id("_").Op("=").Add(cq("EnforceVersion")).Call(jen.Lit(codec.Version).Op("-").Add(cq("MinVersion"))),
			jen.Id("_").Op("=").Add(cq("EnforceVersion")).Call(cq("MaxVersion").Op("-").Lit(codec.Version)),
		),
		gofile.Comment(`DecodeError is the error of decoding or validating a generated type. It names the type
and the JSON field at fault and wraps the cause (one of the Err* sentinels, or an
encoding/json error); use errors.Is and errors.As. It is codec.DecodeError, shared by
every generated package.`).Type().Id("DecodeError").Op("=").Add(cq("DecodeError")),
		gofile.Comment(`The causes a DecodeError wraps, for errors.Is: the codec runtime's sentinels, the same
values in every generated package.`).Var().DefsFunc(func(g *jen.Group) {
			for _, s := range sentinels {
				g.Id(s[0]).Op("=").Add(cq(s[0])).Comment(s[1])
			}
		}),
	}
}

// agentDecls declares the Agent handle: with Cancel and Inbox when the spec declares the
// AgentCancelCause union (the canonical spec does), and followed by UserText when the spec
// declares the records and unions it builds.
func (e *emitter) agentDecls() []jen.Code {
	ctx := func() *jen.Statement { return jen.Id("ctx").Qual("context", "Context") }
	methods := []jen.Code{
		gofile.Comment("ID returns the id of the agent.").Id("ID").Params().String(),
		gofile.Comment(`Inject durably appends msg to the agent's next-step inbox without waking it: the
message reaches the model at the agent's next step, whenever that happens.`).
			Id("Inject").Params(ctx(), jen.Id("msg").Id("UserMessage")).Error(),
		gofile.Comment(`Steer durably appends msg to the agent's next-step inbox and wakes the agent: an idle
agent starts a turn, a running one continues its turn with another step.`).
			Id("Steer").Params(ctx(), jen.Id("msg").Id("UserMessage")).Error(),
		gofile.Comment(`Halt ends the agent's current turn as aborted by a hook with the reason, once the
running batch has settled; the inbox is left as it is.`).
			Id("Halt").Params(jen.Id("reason").String()),
	}
	control := false
	if t := e.spec.Lookup("AgentCancelCause"); t != nil && t.Kind == ir.Union {
		control = true
		methods = append(methods,
			gofile.Comment(`Cancel aborts the agent's current turn with cause (nil is the user); the first cause
wins. Unless keepInbox, it also discards the inbox and every context the current tool
batch produces. It never blocks for long and may be called from a listener.`).
				Id("Cancel").Params(jen.Id("cause").Id("AgentCancelCause"), jen.Id("keepInbox").Bool()),
			gofile.Comment("Inbox returns copies of the pending next-turn and next-step messages, in order.").
				Id("Inbox").Params().Params(jen.List(jen.Id("nextTurn"), jen.Id("nextStep")).Index().Id("UserMessage")),
		)
	}
	decls := []jen.Code{gofile.Comment(`Agent is the runtime handle of the agent an event concerns. The runtime puts it in the
payloads it dispatches; it lives only in memory and is never encoded.`).Type().Id("Agent").Interface(methods...)}
	if control && e.hasMessageTypes() {
		decls = append(decls, gofile.Comment(`UserText returns a user message of one text block from source, e.g.
UserText(SourcePlugin{Plugin: "notes"}, "notes.md changed"). Its ID is left empty and
its role is user: the runtime mints the ID wherever a plugin hands it a message (an
agent's Inject and Steer, a tool body's DeferContext, the contexts of a decision or a
tools/execute result).`).Func().Id("UserText").Params(jen.Id("source").Id("MessageSource"), jen.Id("text").String()).Id("UserMessage").Block(
			jen.Return(jen.Id("UserMessage").Values(
				jen.Id("Role").Op(":").Id("UserMessageRoleUser"),
				jen.Id("Content").Op(":").Index().Id("ContentBlock").Values(jen.Id("TextBlock").Values(jen.Id("Text").Op(":").Id("text"))),
				jen.Id("Source").Op(":").Id("source"),
			))))
	}
	return decls
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

// tokenDecls declares the Token handle and NewToken.
func tokenDecls() []jen.Code {
	return []jen.Code{
		gofile.Comment(`Token is the opaque identity of one tool execution. Tokens support equality only
(compare them with ==); the zero Token identifies nothing. A Token is never encoded.`).
			Type().Id("Token").Struct(jen.Id("id").Uint64()),
		gofile.Comment("tokenCounter numbers the tokens NewToken returns.").
			Var().Id("tokenCounter").Qual("sync/atomic", "Uint64"),
		gofile.Comment("NewToken returns a fresh token, distinct from every other token of the process.").
			Func().Id("NewToken").Params().Id("Token").Block(
			jen.Return(jen.Id("Token").Values(jen.Id("id").Op(":").Id("tokenCounter").Dot("Add").Call(jen.Lit(1))))),
		gofile.Comment("IsZero reports whether t is the zero Token, which NewToken never returns.").
			Func().Params(jen.Id("t").Id("Token")).Id("IsZero").Params().Bool().Block(
			jen.Return(jen.Id("t").Dot("id").Op("==").Lit(0))),
	}
}
