// Package hookmap emits generated/hookmap: the bridge mapping tables of spec/bridges as
// Go data, with a strict output decoder per event bound to the generated wire types. The
// bridges (bridges/hookproto and the dialect packages) interpret these tables; nothing
// about a dialect's protocol behaviour is hand-written there.
package hookmap

import (
	"fmt"
	"path"
	"sort"
	"strconv"
	"strings"
	"text/template"

	"github.com/dshkit/dsh/gen/emit"
	"github.com/dshkit/dsh/gen/ir"
)

// Emit writes <outDir>/hookmap.go (the table types) and one <dialect file>.go per bridge
// file. wireImport maps a wire package name to its Go import path.
func Emit(bridges []*ir.Bridge, outDir string, wireImport func(pkg string) string) ([]emit.File, error) {
	if len(bridges) == 0 {
		return nil, nil
	}
	var files []emit.File
	src, err := render(typesTmpl, map[string]any{"Header": emit.Header("bridges/bridges.cue")})
	if err != nil {
		return nil, err
	}
	files = append(files, emit.File{Path: path.Join(outDir, "hookmap.go"), Data: src})
	byFile := map[string][]*ir.Bridge{}
	var names []string
	for _, b := range bridges {
		if byFile[b.File] == nil {
			names = append(names, b.File)
		}
		byFile[b.File] = append(byFile[b.File], b)
	}
	sort.Strings(names)
	var all []string
	for _, name := range names {
		imports := map[string]string{}
		for _, b := range byFile[name] {
			imports[b.Wire] = wireImport(b.Wire)
			all = append(all, b.GoName)
		}
		src, err := render(tableTmpl, map[string]any{
			"Header":  emit.Header("bridges/" + name),
			"Imports": imports,
			"Bridges": byFile[name],
		})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		files = append(files, emit.File{Path: path.Join(outDir, strings.TrimSuffix(name, ".cue")+".go"), Data: src})
	}
	sort.Strings(all)
	src, err = render(indexTmpl, map[string]any{"Header": emit.Header("bridges/bridges.cue"), "All": all})
	if err != nil {
		return nil, err
	}
	files = append(files, emit.File{Path: path.Join(outDir, "index.go"), Data: src})
	emit.Sort(files)
	return files, nil
}

var funcs = template.FuncMap{
	"q": strconv.Quote,
	"lines": func(s string) []string {
		return strings.Split(s, "\n")
	},
	"strs": func(ss []string) string {
		q := make([]string, len(ss))
		for i, s := range ss {
			q[i] = strconv.Quote(s)
		}
		return "[]string{" + strings.Join(q, ", ") + "}"
	},
}

func render(t *template.Template, data any) ([]byte, error) { return emit.RenderGo(t, data) }

var typesTmpl = template.Must(template.New("types").Funcs(funcs).Parse(`// {{.Header}}

// Package hookmap holds the mapping tables of dsh's hook bridges, generated from
// spec/bridges: for each dialect, which external event maps to which extension point, how
// a hook's exit code and stdout become an outcome, and how several hooks' outcomes merge.
// The bridges interpret these tables; see bridges/hookproto.
package hookmap

// Bridge is the table of one dialect.
type Bridge struct {
	// Dialect names the protocol ("claude-code" or "codex").
	Dialect string
	// Plugin is the source stamped on every message the bridge adds (plugin{plugin}).
	Plugin string
	// DefaultTimeoutSec is a handler's timeout when it sets none.
	DefaultTimeoutSec int
	// Exit2EmptyStderr is what exit 2 with blank stderr does: "block" (with the event's
	// fallback reason) or "failed".
	Exit2EmptyStderr string
	// JSONPrefixes are the first characters that make (trimmed) stdout count as JSON.
	JSONPrefixes []string
	// InvalidJSON is the outcome ("error" or "failed"; "plain": unparsable stdout is plain
	// stdout, undecodable JSON an error) of JSON-looking stdout that does
	// not parse or does not decode as the event's output.
	InvalidJSON string
	// StdinNewline says whether the stdin JSON ends with a newline.
	StdinNewline bool
	// Exit2ReadsJSON says whether JSON stdout still counts on exit 2: its contexts join,
	// and its block or deny reason replaces stderr as the reason.
	Exit2ReadsJSON bool
	// Events maps each supported external event to its table, sorted by name.
	Events []Event
	// Shell is the argv prefix a hook's command runs under; nil: the dialect's own.
	Shell []string
	// TimeoutUnit is the unit of a configured timeout: "s" or "ms".
	TimeoutUnit string
	// NonPositiveTimeout is what a configured timeout of 0 or less does: "default" (the
	// default timeout, with a diagnostic) or "expire" (the hook times out at once).
	NonPositiveTimeout string
	// ReadAnyExit says output is read whatever the exit code: stdout, or stderr when
	// stdout is blank, decoded as JSON (a JSON string holding JSON included); plain text
	// is plain output on exit 0, a WarningPrefix notice on exit 1, and the event's Exit2
	// outcome on any other exit; no text on a non-zero exit makes the hook failed.
	ReadAnyExit bool
	// WarningPrefix prefixes the notice of plain text on exit 1 (ReadAnyExit).
	WarningPrefix string
	// PlainNotice makes plain exit-0 text that is no context a user-facing notice.
	PlainNotice bool
	// SequentialGroups says a group may set "sequential": true, which runs every matched
	// hook of the event in order, each seeing the previous one's rewrite.
	SequentialGroups bool
	// DedupeByName says identical hooks (same name and command) run once.
	DedupeByName bool
	// InvalidRegexExact makes a regex matcher that does not compile an exact string.
	InvalidRegexExact bool
	// CommandVars maps each $NAME substituted (shell-quoted) in a command and exported
	// to it to the top-level stdin field that gives its value.
	CommandVars map[string]string
	// SettingsBlock is the top-level settings key of the {enabled, disabled} block; ""
	// when the dialect has none.
	SettingsBlock string
}

// Event maps one external event onto one extension point.
type Event struct {
	// Name is the external event, e.g. "PreToolUse".
	Name string
	// Point is the canonical extension point, e.g. "tools/pre-execute".
	Point string
	// Input and Output name the wire types of stdin and stdout.
	Input, Output string
	// Matcher is the stdin field a group's matcher tests; "" means matchers are ignored.
	Matcher string
	// MatcherKind is how the matcher tests it: "regex" (unanchored), "exact", or "" for
	// the dialect's own rule.
	MatcherKind string
	// PlainStdoutContext says whether plain (non-JSON) stdout on exit 0 is context.
	PlainStdoutContext bool
	// FallbackReason is the reason of a block that carries none.
	FallbackReason string
	// Scope is the output path of the event name that gates the event-specific fields
	// (those under its parent); "" means no gate.
	Scope string
	// Halt says whether continue:false halts the turn at this event.
	Halt bool
	// HaltReason is the halt reason when continue:false comes without a stopReason.
	HaltReason string
	// Exit2 is the outcome of exit 2 with a non-blank stderr (the reason): "deny" at the
	// tool gate, "block" elsewhere, "error" where exit 2 is not honoured.
	Exit2 string
	// Contexts are the output paths of context strings, in order.
	Contexts []string
	// JoinReasons is how several blocking hooks' reasons combine: "all" (joined by a
	// blank line), "first" (configuration order) or "every" (every deciding hook's
	// reason, allowing ones included, joined by a newline).
	JoinReasons string
	// Rules decide the outcome of a parsed output: the first that holds wins; none: pass.
	Rules []Rule
	// Notices are fields recorded as user-facing notices when set.
	Notices []Notice
	// Rewrite reads a hook's rewrite of the call's arguments; nil: the event rewrites
	// nothing.
	Rewrite *Rewrite
	// DecodeOutput decodes stdout strictly as the event's wire output type and returns
	// it; an error makes the hook's outcome the bridge's InvalidJSON.
	DecodeOutput func(data []byte) (any, error)
}

// Rule is one row of an event's decision table.
type Rule struct {
	// When is the dotted output path the rule tests.
	When string
	// Is is the JSON literal the field must equal; "" means the field is set, not null
	// and not empty.
	Is string
	// Then is the outcome when the rule holds: allow, deny, ask, block, halt or failed.
	Then string
	// Reason is the output path of the outcome's reason.
	Reason string
	// NeedsReason makes a rule whose reason is blank an outcome "failed" instead.
	NeedsReason bool
	// Unless is an output path that must be unset (absent, null or empty) for the rule to
	// hold; "" means no condition.
	Unless string
}

// Rewrite reads a hook's rewrite of the call's arguments (tools/rewrite-input).
type Rewrite struct {
	// Input is the output path of the new arguments.
	Input string
	// Mode is the output path whose value "merge" makes the new arguments a JSON merge
	// patch over the current ones; "" means always a replacement.
	Mode string
	// Requires is the output path that must equal RequiresIs (a string) for the rewrite
	// to count; "" means no condition.
	Requires, RequiresIs string
	// Stdin is the stdin field a sequential hook's rewrite updates (shallowly merged) for
	// the next hook; "" means none.
	Stdin string
	// Note is appended to the tool's result when a rewrite was applied; "" for none.
	Note string
}

// Notice is a field recorded as a user-facing notice (never model-visible).
type Notice struct {
	// When is the output path of the field.
	When string
	// Text is the notice; "{value}" stands for the field's value.
	Text string
}

// Lookup returns the table of the named event, or false.
func (b *Bridge) Lookup(event string) (Event, bool) {
	for _, e := range b.Events {
		if e.Name == event {
			return e, true
		}
	}
	return Event{}, false
}
`))

var tableTmpl = template.Must(template.New("table").Funcs(funcs).Parse(`// {{.Header}}

package hookmap

import (
{{- range $pkg, $path := .Imports}}
	{{q $path}}
{{- end}}
)
{{range $b := .Bridges}}
{{range lines $b.Doc}}// {{.}}
{{end -}}
var {{$b.GoName}} = Bridge{
	Dialect: {{q $b.Dialect}},
	Plugin: {{q $b.Plugin}},
	DefaultTimeoutSec: {{$b.DefaultTimeoutSec}},
	Exit2EmptyStderr: {{q $b.Exit2EmptyStderr}},
	JSONPrefixes: {{strs $b.JSONPrefixes}},
	InvalidJSON: {{q $b.InvalidJSON}},
	StdinNewline: {{$b.StdinNewline}},
	Exit2ReadsJSON: {{$b.Exit2ReadsJSON}},
	{{- if $b.Shell}}
	Shell: {{strs $b.Shell}},
	{{- end}}
	TimeoutUnit: {{q $b.TimeoutUnit}},
	NonPositiveTimeout: {{q $b.NonPositiveTimeout}},
	ReadAnyExit: {{$b.ReadAnyExit}},
	WarningPrefix: {{q $b.WarningPrefix}},
	PlainNotice: {{$b.PlainNotice}},
	SequentialGroups: {{$b.SequentialGroups}},
	DedupeByName: {{$b.DedupeByName}},
	InvalidRegexExact: {{$b.InvalidRegexExact}},
	{{- if $b.CommandVars}}
	CommandVars: map[string]string{
	{{- range $k, $v := $b.CommandVars}}
		{{q $k}}: {{q $v}},
	{{- end}}
	},
	{{- end}}
	SettingsBlock: {{q $b.SettingsBlock}},
	Events: []Event{
	{{- range $e := $b.Events}}
		{{range lines $e.Doc}}// {{.}}
		{{end -}}
		{
			Name: {{q $e.Event}},
			Point: {{q $e.Point}},
			Input: {{q $e.Input}},
			Output: {{q $e.Output}},
			Matcher: {{q $e.Matcher}},
			MatcherKind: {{q $e.MatcherKind}},
			PlainStdoutContext: {{$e.PlainStdoutContext}},
			FallbackReason: {{q $e.FallbackReason}},
			Scope: {{q $e.Scope}},
			Halt: {{$e.Halt}},
			HaltReason: {{q $e.HaltReason}},
			Exit2: {{q $e.Exit2}},
			Contexts: {{strs $e.Contexts}},
			JoinReasons: {{q $e.JoinReasons}},
			Rules: []Rule{
			{{- range $e.Rules}}
				{When: {{q .When}}, Is: {{q .Is}}, Then: {{q .Then}}, Reason: {{q .Reason}}, NeedsReason: {{.NeedsReason}}, Unless: {{q .Unless}}},
			{{- end}}
			},
			Notices: []Notice{
			{{- range $e.Notices}}
				{When: {{q .When}}, Text: {{q .Text}}},
			{{- end}}
			},
			{{- with $e.Rewrite}}
			Rewrite: &Rewrite{Input: {{q .Input}}, Mode: {{q .Mode}}, Requires: {{q .Requires}}, RequiresIs: {{q .RequiresIs}}, Stdin: {{q .Stdin}}, Note: {{q .Note}}},
			{{- end}}
			DecodeOutput: func(data []byte) (any, error) {
				var out {{$b.Wire}}.{{$e.Output}}
				if err := out.UnmarshalJSON(data); err != nil {
					return nil, err
				}
				return out, nil
			},
		},
	{{- end}}
	},
}
{{end}}`))

var indexTmpl = template.Must(template.New("index").Funcs(funcs).Parse(`// {{.Header}}

package hookmap

// Bridges lists every dialect's table, sorted by dialect.
var Bridges = []*Bridge{ {{- range .All}}&{{.}}, {{end -}} }

// Lookup returns the table of the named dialect, or nil.
func Lookup(dialect string) *Bridge {
	for _, b := range Bridges {
		if b.Dialect == dialect {
			return b
		}
	}
	return nil
}
`))
