// Package hookmap emits generated/hookmap: the bridge mapping tables of spec/bridges as
// Go data, with a strict output decoder per event bound to the generated wire types. The
// bridges (bridges/hookproto and the dialect packages) interpret these tables; nothing
// about a dialect's protocol behaviour is hand-written there.
package hookmap

import (
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/dave/jennifer/jen"

	"github.com/dshkit/dsh/gen/emit"
	"github.com/dshkit/dsh/gen/emit/gofile"
	"github.com/dshkit/dsh/gen/ir"
)

// pkg is the package name of the generated tables.
const pkg = "hookmap"

// Emit writes <outDir>/hookmap.go (the table types) and one <dialect file>.go per bridge
// file. wireImport maps a wire package name to its Go import path.
func Emit(bridges []*ir.Bridge, outDir string, wireImport func(pkg string) string) ([]emit.File, error) {
	if len(bridges) == 0 {
		return nil, nil
	}
	var files []emit.File
	add := func(name string, f *jen.File) error {
		p := path.Join(outDir, name)
		src, err := gofile.Render(p, f)
		if err != nil {
			return fmt.Errorf("hookmap: %w", err)
		}
		files = append(files, emit.File{Path: p, Data: src})
		return nil
	}
	if err := add("hookmap.go", typesFile()); err != nil {
		return nil, err
	}
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
		for _, b := range byFile[name] {
			all = append(all, b.GoName)
		}
		if err := add(strings.TrimSuffix(name, ".cue")+".go", tableFile(name, byFile[name], wireImport)); err != nil {
			return nil, err
		}
	}
	sort.Strings(all)
	if err := add("index.go", indexFile(all)); err != nil {
		return nil, err
	}
	emit.Sort(files)
	return files, nil
}

// typesFile declares the table types (Bridge, Event, Rule, Rewrite, Notice) and
// Bridge.Lookup.
func typesFile() *jen.File {
	f := gofile.New(pkg, emit.Header("bridges/bridges.cue"))
	for _, line := range strings.Split(`Package hookmap holds the mapping tables of dsh's hook bridges, generated from
spec/bridges: for each dialect, which external event maps to which extension point, how
a hook's exit code and stdout become an outcome, and how several hooks' outcomes merge.
The bridges interpret these tables; see bridges/hookproto.`, "\n") {
		f.PackageComment(line) // one // line each: jennifer makes a multi-line comment a /* */ block
	}
	strs := func() *jen.Statement { return jen.Index().String() }
	f.Add(gofile.Comment("Bridge is the table of one dialect.").Type().Id("Bridge").Struct(
		gofile.Comment(`Dialect names the protocol ("claude-code", "codex" or "gemini").`).Id("Dialect").String(),
		gofile.Comment(`Plugin is the source stamped on every message the bridge adds (plugin{plugin}).`).Id("Plugin").String(),
		gofile.Comment(`DefaultTimeoutSec is a command handler's timeout when it sets none.`).Id("DefaultTimeoutSec").Int(),
		gofile.Comment(`EventTimeoutSec gives the command handlers at the events it names another default
timeout.`).Id("EventTimeoutSec").Map(jen.String()).Int(),
		gofile.Comment(`Exit2EmptyStderr is what exit 2 with blank stderr does: "block" (with the event's
fallback reason) or "failed".`).Id("Exit2EmptyStderr").String(),
		gofile.Comment(`JSONPrefixes are the first characters that make (trimmed) stdout count as JSON.`).Id("JSONPrefixes").Add(strs()),
		gofile.Comment(`InvalidJSON is the outcome ("error" or "failed"; "plain": unparsable stdout is plain
stdout, undecodable JSON an error) of JSON-looking stdout that does
not parse or does not decode as the event's output.`).Id("InvalidJSON").String(),
		gofile.Comment(`StdinNewline says whether the stdin JSON ends with a newline.`).Id("StdinNewline").Bool(),
		gofile.Comment(`Exit2ReadsJSON says whether JSON stdout still counts on exit 2: its contexts join,
and its block or deny reason replaces stderr as the reason.`).Id("Exit2ReadsJSON").Bool(),
		gofile.Comment(`Events maps each supported external event to its table, sorted by name.`).Id("Events").Index().Id("Event"),
		gofile.Comment(`SystemContextModels are the models (path.Match patterns on the name) for which the
engine sends hook contexts on the Messages API as "system" messages (each context's bare
text) rather than as <system-reminder> user text.`).Id("SystemContextModels").Add(strs()),
		gofile.Comment(`EffortModels are the models (path.Match patterns on the name) for which the engine
writes its effort setting on a hook's stdin ("effort":{"level":LEVEL}), each with the level
it writes by default.`).Id("EffortModels").Map(jen.String()).String(),
		gofile.Comment(`EffortEvents are the events whose stdin carries that effort field.`).Id("EffortEvents").Add(strs()),
		gofile.Comment(`Shell is the argv prefix a hook's command runs under; nil: the dialect's own.`).Id("Shell").Add(strs()),
		gofile.Comment(`TimeoutUnit is the unit of a configured timeout: "s" or "ms".`).Id("TimeoutUnit").String(),
		gofile.Comment(`NonPositiveTimeout is what a configured timeout of 0 or less does: "default" (the
default timeout, with a diagnostic) or "expire" (the hook times out at once).`).Id("NonPositiveTimeout").String(),
		gofile.Comment(`ReadAnyExit says output is read whatever the exit code: stdout, or stderr when
stdout is blank, decoded as JSON (a JSON string holding JSON included); plain text
is plain output on exit 0, a WarningPrefix notice on exit 1, and the event's Exit2
outcome on any other exit; no text on a non-zero exit makes the hook failed.`).Id("ReadAnyExit").Bool(),
		gofile.Comment(`WarningPrefix prefixes the notice of plain text on exit 1 (ReadAnyExit).`).Id("WarningPrefix").String(),
		gofile.Comment(`PlainNotice makes plain exit-0 text that is no context a user-facing notice.`).Id("PlainNotice").Bool(),
		gofile.Comment(`SequentialGroups says a group may set "sequential": true, which runs every matched
hook of the event in order, each seeing the previous one's rewrite.`).Id("SequentialGroups").Bool(),
		gofile.Comment(`DedupeByName says identical hooks (same name and command) run once.`).Id("DedupeByName").Bool(),
		gofile.Comment(`RegexDialect is the syntax of the engine's regex matchers: "ecmascript" (a JavaScript
RegExp without flags) or "re2" (a linear-time engine without lookaround or backreferences).`).Id("RegexDialect").String(),
		gofile.Comment(`InvalidRegexExact makes a regex matcher that does not compile an exact string.`).Id("InvalidRegexExact").Bool(),
		gofile.Comment(`CommandVars maps each $NAME substituted (shell-quoted) in a command and exported
to it to the top-level stdin field that gives its value.`).Id("CommandVars").Map(jen.String()).String(),
		gofile.Comment(`SettingsBlock is the top-level settings key of the {enabled, disabled} block; ""
when the dialect has none.`).Id("SettingsBlock").String(),
		gofile.Comment(`Unfired maps each event of the engine that dsh never fires to why (the end of
"hooks for EVENT never fire in dsh: ..."): its hooks load and never run.`).Id("Unfired").Map(jen.String()).String(),
		gofile.Comment(`Pending maps each event of the engine whose capability dsh has but that it does not
fire yet to where it would fire: a hooks file naming one fails to load.`).Id("Pending").Map(jen.String()).String(),
		gofile.Comment(`ToolInputs are, per tool of the engine's own, how the engine writes its input to a
hook (tool_input): its keys in order, and the defaults it fills in for absent ones.`).Id("ToolInputs").Map(jen.String()).Id("ToolInput"),
		gofile.Comment(`SuspectCapture is what JSON output counts for when a process the hook left running
kept its output open past its exit: "honour" reads it as usual; "harmlessOnly" honours
it only when it grants, rewrites and adds nothing, and otherwise refuses it as an error.`).Id("SuspectCapture").String(),
		gofile.Comment(`Handlers are the handler types the engine runs besides "command", by type ("http");
a handler of another type is refused at load.`).Id("Handlers").Map(jen.String()).Id("HandlerType"),
		gofile.Comment(`RuleTools are, per tool of the engine's own, where a permission rule's specifier (a
handler's "if") is read in the tool's input and how it is matched.`).Id("RuleTools").Map(jen.String()).Id("RuleTool"),
		gofile.Comment(`IfEvents are the events at which a handler's "if" rule is tested against the tool
call; a handler with "if" elsewhere never runs. Empty: the dialect has no "if".`).Id("IfEvents").Add(strs()),
		gofile.Comment(`OnFailure is what a handler's "onFailure": "block" does: a failed hook gets the
event's exit-2 outcome; nil: the dialect has no onFailure.`).Id("OnFailure").Op("*").Id("OnFailure"),
		gofile.Comment(`ContextLimit is how a command handler's "additionalContextLimit" spills a longer
context of its hook to a file; nil: the dialect has no such field.`).Id("ContextLimit").Op("*").Id("ContextLimit"),
		gofile.Comment(`AsyncRewake says a command handler may set "asyncRewake": the engine awaits it and
only its exit 2 counts, as the event's exit 2 does.`).Id("AsyncRewake").Bool(), gofile.Comment(`Instructions are the engine's instruction files (CLAUDE.md, AGENTS.md, GEMINI.md)
and where their text goes; nil: the engine has none.`).Id("Instructions").Op("*").Id("Instructions"),
		gofile.Comment(`Commands are the engine's custom slash commands; nil: none that dsh expands.`).Id("Commands").Op("*").Id("Commands"),
		gofile.Comment(`Permissions are the engine's permission settings and modes (runtime/permrule reads
its rules); nil: the engine has none dsh reads.`).Id("Permissions").Op("*").Id("Permissions"),
		gofile.Comment(`ToolPolicy is how the engine's settings lists and policy files narrow its toolset
(bridges/toolpolicy reads it); nil: the engine has none dsh reads.`).Id("ToolPolicy").Op("*").Id("ToolPolicy"),
		gofile.Comment(`MCPToolName is the name the engine gives an MCP server's tool: {server} and {tool},
each character outside [A-Za-z0-9_-] replaced by _; empty: "mcp__{server}__{tool}".`).Id("MCPToolName").String(),
	))
	f.Line()
	f.Add(gofile.Comment(`ToolPolicy is how an engine's settings lists and policy files narrow its toolset, as
one list of rules ranked by priority: the first rule (highest priority; of equal ones, the
first loaded) whose tool, server, modes and arguments match a call decides it (allow,
deny or ask_user). A shell call a rule allows or asks for is decided again for each
simple command of a compound command. A tool the first rule matching it, its arguments
aside, denies is not offered (a rule with arguments that denies is passed over there).`).Type().Id("ToolPolicy").Struct(
		gofile.Comment(`Key is the top-level key of a settings file holding the lists ("tools").`).Id("Key").String(),
		gofile.Comment(`Core names the list of the only tools offered (a later file's replaces an earlier
one's): each entry an allow rule at CorePriority, "SHELL(PREFIX)" one for the commands
starting with PREFIX; a deny rule for every tool follows at CoreOthersPriority.`).Id("Core").String(),
		gofile.Comment(`CorePriority ranks a core entry's allow rule.`).Id("CorePriority").Float64(),
		gofile.Comment(`CoreOthersPriority ranks the core list's deny rule for every tool.`).Id("CoreOthersPriority").Float64(),
		gofile.Comment(`Exclude names the list of tools not offered (every file's adds up): each entry a
deny rule at ExcludePriority.`).Id("Exclude").String(),
		gofile.Comment(`ExcludePriority ranks an exclude entry's deny rule.`).Id("ExcludePriority").Float64(),
		gofile.Comment(`Shell are the names of the shell tool, whose rules may narrow its commands.`).Id("Shell").Add(strs()),
		gofile.Comment(`Denied is the text the model reads of a denied call.`).Id("Denied").String(),
		gofile.Comment(`DeniedWith is the text of a call denied by a rule with a message ({message}).`).Id("DeniedWith").String(),
		gofile.Comment(`Unanswered is the text of a call a rule asks for, which no one answers in a headless
run: {tool} is the tool's display name (DisplayNames, else its name).`).Id("Unanswered").String(),
		gofile.Comment(`DisplayNames are the tools' display names.`).Id("DisplayNames").Map(jen.String()).String(),
		gofile.Comment(`Dirs are the directories of policy files (each *.toml file in name order), in load
order.`).Id("Dirs").Index().Id("PolicyDir"),
		gofile.Comment(`MaxPriority bounds a policy rule's priority (0 to it): priority p ranks as its
directory's tier + p/(MaxPriority+1).`).Id("MaxPriority").Int(),
		gofile.Comment(`Mode is the approval mode dsh's runs stand for: a rule whose modes do not name it never
matches. Runs are headless: a rule with interactive true never matches.`).Id("Mode").String(),
		gofile.Comment(`CatchAll is the engine's own rule for every tool in Mode, below every rule dsh reads.`).Id("CatchAll").Id("PolicyRule"),
		gofile.Comment(`MCPPrefix begins an MCP tool's name in the toolset, before "<server>_<tool>".`).Id("MCPPrefix").String(),
		gofile.Comment(`Unsupported are the engine's settings that restrict what runs and that dsh does not
honour, by dotted path in a settings file, each with why: a file that sets one is refused.`).Id("Unsupported").Map(jen.String()).String(),
	))
	f.Line()
	f.Add(gofile.Comment(`PolicyDir is one directory of policy files.`).Type().Id("PolicyDir").Struct(
		gofile.Comment(`Path is the directory under its base: "home" (the user's home directory) or "root"
(the file system's root).`).Id("Path").String(),
		gofile.Comment(`Base is "home" or "root".`).Id("Base").String(),
		gofile.Comment(`Tier ranks its rules: a higher tier's outrank a lower one's whatever their priorities.`).Id("Tier").Int(),
		gofile.Comment(`Name is the tier's name, in a rule's source.`).Id("Name").String(),
		gofile.Comment(`Secure says the files are read only when root owns the directory and neither group
nor others may write it (else it is skipped with a notice).`).Id("Secure").Bool(),
	))
	f.Line()
	f.Add(gofile.Comment(`PolicyRule is a rule the engine adds itself.`).Type().Id("PolicyRule").Struct(
		gofile.Comment(`Decision is "allow", "deny" or "ask_user".`).Id("Decision").String(),
		gofile.Comment(`Priority ranks the rule.`).Id("Priority").Float64(),
	))
	f.Line()
	f.Add(gofile.Comment(`Permissions are an engine's permission rules and modes. A call is decided in this
order: a deny rule denies; an ask rule asks; the mode's Refuse rules refuse; an allow
rule, or the mode's Allow rules, allow; else the mode's Otherwise.`).Type().Id("Permissions").Struct(
		gofile.Comment(`Key is the top-level settings key of the {allow, ask, deny, defaultMode} block.`).Id("Key").String(),
		gofile.Comment(`Untrusted are the lists of Key a project's own settings file may set only when the
project is trusted ("allow", "defaultMode"); the others apply whatever the trust.`).Id("Untrusted").Add(strs()),
		gofile.Comment(`Modes are the permission modes, by name (--permission-mode, defaultMode).`).Id("Modes").Map(jen.String()).Id("PermissionMode"),
		gofile.Comment(`Unsupported are the engine's modes dsh does not have, each with why: naming one is an
error that says so.`).Id("Unsupported").Map(jen.String()).String(),
		gofile.Comment(`Denied is the text the model reads of a call a deny rule denies, per tool ("*": any
other); {tool} is the tool's name, {FIELD} a top-level string of its input.`).Id("Denied").Map(jen.String()).String(),
		gofile.Comment(`WholeDenied is the text of a call to a tool a deny rule names whole.`).Id("WholeDenied").String(),
		gofile.Comment(`WholeDeniedHidden says a tool a deny rule names whole is not offered to the model: the
requests' tools leave it out.`).Id("WholeDeniedHidden").Bool(),
		gofile.Comment(`Unanswered is the text of a call the mode asks for and that no one answers, per tool ("*":
any other), with Denied's placeholders.`).Id("Unanswered").Map(jen.String()).String(),
		gofile.Comment(`RuleAsked is the text of a call an ask rule asks for and that no one answers, per
tool ("*": any other).`).Id("RuleAsked").Map(jen.String()).String(),
		gofile.Comment(`RulesAs names, per tool, the tool whose rules with a specifier decide its calls (a
Write by the Edit rules); a rule naming the tool whole still counts.`).Id("RulesAs").Map(jen.String()).String(),
	))
	f.Line()
	f.Add(gofile.Comment(`PermissionMode is what one permission mode does with a call the rules do not decide.`).Type().Id("PermissionMode").Struct(
		gofile.Comment(`Allow are permission rules whose calls run without asking.`).Id("Allow").Add(strs()),
		gofile.Comment(`Refuse are permission rules whose calls the mode refuses, with Refused's text.`).Id("Refuse").Add(strs()),
		gofile.Comment(`Refused is the text of a call the mode refuses (Denied's placeholders).`).Id("Refused").String(),
		gofile.Comment(`Otherwise is "allow", "ask" or "deny": what the mode does with any other call.`).Id("Otherwise").String(),
		gofile.Comment(`Unanswered, when set, is the text of every call that asks under the mode: the engine
refuses it without asking anyone.`).Id("Unanswered").String(),
	))
	f.Line()
	f.Add(gofile.Comment(`RuleTool is where a permission rule's specifier is read in one tool's input.`).Type().Id("RuleTool").Struct(
		gofile.Comment(`Field is the top-level input key the specifier is matched against.`).Id("Field").String(),
		gofile.Comment(`Kind is how: "command", "path", "glob", "domain" or "exact" (permrule.Kind).`).Id("Kind").String(),
	))
	f.Line()
	f.Add(gofile.Comment(`OnFailure is how "onFailure": "block" turns a failed hook into a block.`).Type().Id("OnFailure").Struct(
		gofile.Comment(`IgnoredOn are the events at which the option does nothing.`).Id("IgnoredOn").Add(strs()),
		gofile.Comment(`Failed begins the reason of a hook that failed; TimedOut of one that timed out.`).Id("Failed").String(),
		gofile.Comment(`TimedOut begins the reason of a hook that timed out.`).Id("TimedOut").String(),
		gofile.Comment(`Because follows them after "; ", then a newline and the hook's stderr, if any.`).Id("Because").String(),
	))
	f.Line()
	f.Add(gofile.Comment("Instructions is how an engine reads its instruction files and places their text.").Type().Id("Instructions").Struct(
		gofile.Comment(`Files are the files the engine reads, in its order.`).Id("Files").Index().Id("InstructionFile"),
		gofile.Comment(`Dirs is where the files of base "dirs" are looked for: "workspace", or "parents"
(every directory from the root's child down to the workspace, outermost first).`).Id("Dirs").String(),
		gofile.Comment(`ImportDepth is how many "@path" hops a file may import (0: "@path" is plain text).`).Id("ImportDepth").Int(),
		gofile.Comment(`MaxBytes caps the bytes read of all the files together (0: no cap).`).Id("MaxBytes").Int(),
		gofile.Comment(`Entry is one file's text ({path}, {label}, {content}, {trimmed}), Separator joins
the entries and Wrap is the whole ({text}, {cwd}), one context before the first prompt.`).List(jen.Id("Entry"), jen.Id("Separator"), jen.Id("Wrap")).String(),
	))
	f.Line()
	f.Add(gofile.Comment("InstructionFile is one instruction file an engine reads.").Type().Id("InstructionFile").Struct(
		gofile.Comment(`Path is the file's path under its base.`).Id("Path").String(),
		gofile.Comment(`Base is "home" (the user's home directory) or "dirs" (each directory of Dirs).`).Id("Base").String(),
		gofile.Comment(`Kind is the engine's name for the file's scope (User, Project, Local).`).Id("Kind").String(),
		gofile.Comment(`Label is the kind's label in the entry.`).Id("Label").String(),
	))
	f.Line()
	f.Add(gofile.Comment("Commands is how an engine reads and expands its custom slash commands.").Type().Id("Commands").Struct(
		gofile.Comment(`Dirs are the directories of command files, in lookup order.`).Id("Dirs").Index().Id("CommandDir"),
		gofile.Comment(`Separator joins a subdirectory to a command's name.`).Id("Separator").String(),
		gofile.Comment(`Texts are the text blocks an expanded prompt becomes ({name}, {args}, {argsLine},
{body}).`).Id("Texts").Index().String(),
		gofile.Comment(`ArgsLine is {argsLine} when there are arguments; without, it is empty.`).Id("ArgsLine").String(),
		gofile.Comment(`AppendArgs is added to a body without placeholders when arguments are given.`).Id("AppendArgs").String(),
	))
	f.Line()
	f.Add(gofile.Comment("CommandDir is one directory of command files.").Type().Id("CommandDir").Struct(
		gofile.Comment(`Path is the directory under its base.`).Id("Path").String(),
		gofile.Comment(`Base is "home" or "workspace".`).Id("Base").String(),
		gofile.Comment(`Source is the command_source the engine reports for a command found here.`).Id("Source").String(),
		gofile.Comment(`Trust says the directory is the project's: read only when its files are trusted.`).Id("Trust").Bool(),
	))
	f.Line()
	f.Add(gofile.Comment(`HandlerType is what a dialect says about one handler type other than "command".`).Type().Id("HandlerType").Struct(
		gofile.Comment(`DefaultTimeoutSec is the timeout of a handler of the type that sets none.`).Id("DefaultTimeoutSec").Int(),
		gofile.Comment(`EventTimeoutSec gives the handlers of the type at the events it names another
default timeout.`).Id("EventTimeoutSec").Map(jen.String()).Int(),
		gofile.Comment(`Refused, when set, says why dsh does not run the type although the engine does: a
handler of it is refused at load with this reason.`).Id("Refused").String(),
		gofile.Comment(`RefusedAt are the events at which a handler of the type is refused at load, each
with why.`).Id("RefusedAt").Map(jen.String()).String(),
		gofile.Comment(`Placeholders is how an mcp_tool handler's input reads ${path} from the hook's input:
"text" (every placeholder text; missing: empty; an object: its JSON) or "typed" (a string
that is one placeholder is the value itself; a missing path fails the hook).`).Id("Placeholders").String(),
		gofile.Comment(`OnFailure says a handler of the type may set "onFailure": "block", which makes a
call that fails block where exit 2 would.`).Id("OnFailure").Bool(),
		gofile.Comment(`OnFailureBecause replaces the table's OnFailure.Because for a handler of the type
("" keeps it).`).Id("OnFailureBecause").String(),
		gofile.Comment(`PlainAnswer replaces the text of an answer that is not JSON where the event takes
plain output as a context, "{hook}" standing for the hook's name; "" keeps the text.`).Id("PlainAnswer").String(),
		gofile.Comment(`SystemPrompt is a prompt handler's system prompt.`).Id("SystemPrompt").String(),
		gofile.Comment(`AnswerSchema is the JSON Schema of a prompt handler's answer, sent as the request's
structured output format where the provider has one.`).Id("AnswerSchema").String(),
		gofile.Comment(`Conversation, when set, is how a prompt handler judges the session's conversation at
the events it names.`).Id("Conversation").Op("*").Id("ConversationPrompt"),
		gofile.Comment(`Verifier, when set, is how an agent handler's verifier agent runs (its system prompt
is SystemPrompt, its answer tool's input schema AnswerSchema).`).Id("Verifier").Op("*").Id("AgentVerifier"),
	))
	f.Line()
	f.Add(gofile.Comment(`AgentVerifier is how an agent handler judges: a child agent over the session's tools,
read-only, whose system prompt is the handler type's SystemPrompt ("{intro}": Intro, or
StopIntro at StopEvents, "{event}" the hook's event; "{transcript}": Transcript, "{path}"
the session's transcript, or NoTranscript) and whose task is the handler's prompt with
$ARGUMENTS replaced by the hook's input. Its answer is its call of AnswerTool ({ok,
reason}); ok false blocks with NotMet ("{reason}").`).Type().Id("AgentVerifier").Struct(
		gofile.Comment(`Intro opens the system prompt; StopIntro replaces it at StopEvents.`).Id("Intro").String(),
		gofile.Comment(`StopEvents are the events whose verifier checks a stop condition.`).Id("StopEvents").Index().String(),
		gofile.Comment(`StopIntro is the intro at StopEvents.`).Id("StopIntro").String(),
		gofile.Comment(`Transcript says where the session's transcript is ("{path}").`).Id("Transcript").String(),
		gofile.Comment(`NoTranscript says there is none.`).Id("NoTranscript").String(),
		gofile.Comment(`AnswerTool is the name of the verdict's tool.`).Id("AnswerTool").String(),
		gofile.Comment(`AnswerDescription is its description.`).Id("AnswerDescription").String(),
		gofile.Comment(`WithoutTools are the session's tools the verifier is not offered.`).Id("WithoutTools").Index().String(),
		gofile.Comment(`MaxTurns bounds the verifier's model requests.`).Id("MaxTurns").Int(),
		gofile.Comment(`Enforce is the user message that continues a verifier whose turn ended without
calling AnswerTool, EnforceTimes times at most.`).Id("Enforce").String(),
		gofile.Comment(`EnforceTimes is how many times Enforce continues it.`).Id("EnforceTimes").Int(),
		gofile.Comment(`NotMet is the block reason of an ok:false answer ("{reason}").`).Id("NotMet").String(),
		gofile.Comment(`AgentID is the verifier's agent id as the hooks fired for its own calls see it
("{uuid}": a random UUID; "": they see none).`).Id("AgentID").String(),
	))
	f.Line()
	f.Add(gofile.Comment(`ConversationPrompt is how a prompt handler judges the session's conversation (a stop
condition): its evaluator gets SystemPrompt, the conversation as the session's last model
request sent it followed by that request's answer, then the user message Condition. An
ok:false answer there blocks without ending the turn, whatever continueOnBlock says, and
impossible:true lets the action go ahead as ok:true does.`).Type().Id("ConversationPrompt").Struct(
		gofile.Comment(`Events are the events at which the handler judges the conversation.`).Id("Events").Index().String(),
		gofile.Comment(`SystemPrompt replaces the handler type's system prompt there.`).Id("SystemPrompt").String(),
		gofile.Comment(`Condition is the user message after the conversation: "{prompt}" stands for the
handler's prompt, whose $ARGUMENTS is then replaced by the hook's input.`).Id("Condition").String(),
	))
	f.Line()
	f.Add(gofile.Comment("ToolInput is how an engine writes one of its own tools' input to a hook.").Type().Id("ToolInput").Struct(
		gofile.Comment(`Keys are the input's keys in the order the engine writes them; keys it does not
list follow, in the model's order.`).Id("Keys").Index().String(),
		gofile.Comment(`Defaults are the JSON values the engine fills in for keys the model left out.`).Id("Defaults").Map(jen.String()).String(),
	))
	f.Line()
	f.Add(gofile.Comment("Event maps one external event onto one extension point.").Type().Id("Event").Struct(
		gofile.Comment(`Name is the external event, e.g. "PreToolUse".`).Id("Name").String(),
		gofile.Comment(`Point is the canonical extension point, e.g. "tools/pre-execute".`).Id("Point").String(),
		gofile.Comment(`Input and Output name the wire types of stdin and stdout.`).List(jen.Id("Input"), jen.Id("Output")).String(),
		gofile.Comment(`Matcher is the stdin field a group's matcher tests; "" means matchers are ignored.`).Id("Matcher").String(),
		gofile.Comment(`MatcherKind is how the matcher tests it: "regex" (unanchored), "exact", or "" for
the dialect's own rule.`).Id("MatcherKind").String(),
		gofile.Comment(`PlainStdoutContext says whether plain (non-JSON) stdout on exit 0 is context.`).Id("PlainStdoutContext").Bool(),
		gofile.Comment(`BlockInjects says a block here adds to the turn (continues it, or feeds back after a
result) rather than stopping something: a suspect capture's block is refused.`).Id("BlockInjects").Bool(),
		gofile.Comment(`CommandsOnly says the event fires at its point (agent/pre-step) only for a prompt the
table's commands expand, after the point's other event and before the expansion.`).Id("CommandsOnly").Bool(),
		gofile.Comment(`Relayed says the event fires at its point (agent/pre-step) for the prompt a
turn-stopping block of the same table relays into the turn too (a message of form
"relay"), its prompt that message's text.`).Id("Relayed").Bool(),
		gofile.Comment(`HarmlessContexts says contexts on exit 0 here are harmless in a suspect capture.`).Id("HarmlessContexts").Bool(),
		gofile.Comment(`FallbackReason is the reason of a block that carries none.`).Id("FallbackReason").String(),
		gofile.Comment(`Scope is the output path of the event name that gates the event-specific fields
(those under its parent); "" means no gate.`).Id("Scope").String(),
		gofile.Comment(`Halt says whether continue:false halts the turn at this event.`).Id("Halt").Bool(),
		gofile.Comment(`HaltReason is the halt reason when continue:false comes without a stopReason.`).Id("HaltReason").String(),
		gofile.Comment(`Exit2 is the outcome of exit 2 with a non-blank stderr (the reason): "deny" at the
tool gate, "block" elsewhere, "error" where exit 2 is not honoured.`).Id("Exit2").String(),
		gofile.Comment(`Contexts are the output paths of context strings, in order.`).Id("Contexts").Add(strs()),
		gofile.Comment(`JoinReasons is how several blocking hooks' reasons combine: "all" (joined by a
blank line), "first" (configuration order) or "every" (every deciding hook's
reason, allowing ones included, joined by a newline).`).Id("JoinReasons").String(),
		gofile.Comment(`Rules decide the outcome of a parsed output: the first that holds wins; none: pass.`).Id("Rules").Index().Id("Rule"),
		gofile.Comment(`Notices are fields recorded as user-facing notices when set.`).Id("Notices").Index().Id("Notice"),
		gofile.Comment(`Rewrite reads a hook's rewrite of the call's arguments; nil: the event rewrites
nothing.`).Id("Rewrite").Op("*").Id("Rewrite"),
		gofile.Comment(`Subject is the value the event's matcher field and its input's kind carry at Point
where the point gives none itself (the notification_type of Claude Code's and Gemini
CLI's Notification at approval/prompt); "" means the point's own, or none.`).Id("Subject").String(),
		gofile.Comment(`Results limits an event at tools/post-execute to "success" (successful results)
or "failure" (calls that ran and failed) or "ran" (calls that ran, successful or failed);
"" means every result.`).Id("Results").String(),
		gofile.Comment(`Also are further extension points the event fires at, besides Point.`).Id("Also").Index().Id("Also"),
		gofile.Comment(`PassOn is what a hook of a sequential group passes on to the hooks after it, when
it exits 0; nil: the rewrite's Stdin field, or nothing.`).Id("PassOn").Op("*").Id("PassOn"),
		gofile.Comment(`Tail is where an event at tools/post-execute reads a tail call in its hooks'
output; nil: nowhere.`).Id("Tail").Op("*").Id("TailCall"),
		gofile.Comment(`DecodeOutput decodes stdout strictly as the event's wire output type and returns
it; an error makes the hook's outcome the bridge's InvalidJSON.`).Id("DecodeOutput").Func().Params(jen.Id("data").Index().Byte()).Params(jen.Any(), jen.Error()),
	))
	f.Line()
	f.Add(gofile.Comment("Also is a further extension point an event fires at.").Type().Id("Also").Struct(
		gofile.Comment(`Point is the extension point: agent/status, where the event fires besides its own
point, or compaction/post-compact, where the session start that follows a committed
compaction fires instead of at agent/session-start.`).Id("Point").String(),
		gofile.Comment(`Status is the agent/status value the event fires at; "" means any.`).Id("Status").String(),
		gofile.Comment(`Subject is the value the event's matcher field carries there.`).Id("Subject").String(),
		gofile.Comment(`Interactive says the event fires there only when the host waits for the user's
input between turns (dsh acp), never in a headless run.`).Id("Interactive").Bool(),
		gofile.Comment(`Before names the event of the table at Point that this one fires before there
(hooks and contexts first); "" means after it.`).Id("Before").String(),
		gofile.Comment(`Engine says the entry is where the real engine departs from dsh's canonical
mapping: a bridge following the canonical mapping leaves it out.`).Id("Engine").Bool(),
	))
	f.Line()
	f.Add(gofile.Comment("PassOn is what a sequential hook passes on: a field of its output, into a field of the next hooks' stdin.").Type().Id("PassOn").Struct(
		gofile.Comment(`Output is the output path of what the hook passes on.`).Id("Output").String(),
		gofile.Comment(`Stdin is the top-level stdin field it updates.`).Id("Stdin").String(),
		gofile.Comment(`Join, when set, appends the output (a string) to the stdin field (a string) after
it; "" merges the output (an object) shallowly into the field.`).Id("Join").String(),
	))
	f.Line()
	f.Add(gofile.Comment("ContextLimit is how a context longer than its handler's additionalContextLimit is spilled to a file.").Type().Id("ContextLimit").Struct(
		gofile.Comment(`BytesPerToken is the bytes of one token of the engine's estimate (a text's tokens are
its UTF-8 bytes over it, rounded up).`).Id("BytesPerToken").Int(),
		gofile.Comment(`Dir is the directory of the files under the system's temporary directory: each is
<Dir>/<session id>/<random UUID>.txt.`).Id("Dir").String(),
		gofile.Comment(`SessionField is the stdin field holding the session id.`).Id("SessionField").String(),
		gofile.Comment(`Text is what the model reads before the footer: {tokens} the context's tokens,
{lines} its lines, {kept} its head, the marker and its tail.`).Id("Text").String(),
		gofile.Comment(`Marker stands for the cut middle: {tokens} the tokens cut.`).Id("Marker").String(),
		gofile.Comment(`Footer follows the text: {path} the file; its bytes count against the limit.`).Id("Footer").String(),
	))
	f.Line()
	f.Add(gofile.Comment("TailCall is where a hook's output asks for a tail call (a tools/post-execute tail decision).").Type().Id("TailCall").Struct(
		gofile.Comment(`Output is the output path of the request object; the last hook's that has one wins.`).Id("Output").String(),
		gofile.Comment(`Name is the request's field naming the tool (not a string: no tool).`).Id("Name").String(),
		gofile.Comment(`Arguments is the request's field holding the arguments (absent: null).`).Id("Arguments").String(),
	))
	f.Line()
	f.Add(gofile.Comment("Rule is one row of an event's decision table.").Type().Id("Rule").Struct(
		gofile.Comment(`When is the dotted output path the rule tests.`).Id("When").String(),
		gofile.Comment(`Is is the JSON literal the field must equal; "" means the field is set, not null
and not empty.`).Id("Is").String(),
		gofile.Comment(`Then is the outcome when the rule holds: allow, deny, ask, block, halt or failed.`).Id("Then").String(),
		gofile.Comment(`Reason is the output path of the outcome's reason.`).Id("Reason").String(),
		gofile.Comment(`NeedsReason makes a rule whose reason is blank an outcome "failed" instead.`).Id("NeedsReason").Bool(),
		gofile.Comment(`Unless is an output path that must be unset (absent, null or empty) for the rule to
hold; "" means no condition.`).Id("Unless").String(),
	))
	f.Line()
	f.Add(gofile.Comment("Rewrite reads a hook's rewrite of the call's arguments (tools/rewrite-input).").Type().Id("Rewrite").Struct(
		gofile.Comment(`Input is the output path of the new arguments.`).Id("Input").String(),
		gofile.Comment(`Mode is the output path whose value "merge" makes the new arguments a JSON merge
patch over the current ones; "" means always a replacement.`).Id("Mode").String(),
		gofile.Comment(`Requires is the output path that must equal RequiresIs (a string) for the rewrite
to count; "" means no condition.`).List(jen.Id("Requires"), jen.Id("RequiresIs")).String(),
		gofile.Comment(`Stdin is the stdin field a sequential hook's rewrite updates (shallowly merged) for
the next hook; "" means none.`).Id("Stdin").String(),
		gofile.Comment(`Note is appended to the tool's result when a rewrite was applied; "" for none.`).Id("Note").String(),
		gofile.Comment(`NonObjectBlocks makes an input that is present but not a JSON object block the call
(the event's blocking outcome, fail closed) instead of failing the output.`).Id("NonObjectBlocks").Bool(),
	))
	f.Line()
	f.Add(gofile.Comment("Notice is a field recorded as a user-facing notice (never model-visible).").Type().Id("Notice").Struct(
		gofile.Comment(`When is the output path of the field.`).Id("When").String(),
		gofile.Comment(`Text is the notice; "{value}" stands for the field's value.`).Id("Text").String(),
	))
	f.Line()
	f.Add(gofile.Comment("Lookup returns the table of the named event, or false.").
		Func().Params(jen.Id("b").Op("*").Id("Bridge")).Id("Lookup").Params(jen.Id("event").String()).Params(jen.Id("Event"), jen.Bool()).Block(
		jen.For(jen.List(jen.Id("_"), jen.Id("e")).Op(":=").Range().Id("b").Dot("Events")).Block(
			jen.If(jen.Id("e").Dot("Name").Op("==").Id("event")).Block(jen.Return(jen.Id("e"), jen.True())),
		),
		jen.Return(jen.Id("Event").Values(), jen.False()),
	))
	return f
}

// tableFile declares the table of each bridge of one spec file (name, e.g.
// "claudecode.cue"), in the order the file declares them.
func tableFile(name string, bridges []*ir.Bridge, wireImport func(pkg string) string) *jen.File {
	f := gofile.New(pkg, emit.Header("bridges/"+name))
	for i, b := range bridges {
		f.ImportName(wireImport(b.Wire), b.Wire)
		if i > 0 {
			f.Line()
		}
		f.Add(gofile.Comment(b.Doc).Var().Id(b.GoName).Op("=").Id("Bridge").Add(bridgeValues(b, wireImport(b.Wire))))
	}
	return f
}

// bridgeValues is the composite literal of b's table, one field a line; wire is the
// import path of b's wire package, whose types decode the events' outputs.
func bridgeValues(b *ir.Bridge, wire string) *jen.Statement {
	fields := []jen.Code{
		kv("Dialect", jen.Lit(b.Dialect)),
		kv("Plugin", jen.Lit(b.Plugin)),
		kv("DefaultTimeoutSec", jen.Lit(b.DefaultTimeoutSec)),
		kv("Exit2EmptyStderr", jen.Lit(b.Exit2EmptyStderr)),
		kv("JSONPrefixes", strs(b.JSONPrefixes)),
		kv("InvalidJSON", jen.Lit(b.InvalidJSON)),
		kv("StdinNewline", jen.Lit(b.StdinNewline)),
		kv("Exit2ReadsJSON", jen.Lit(b.Exit2ReadsJSON)),
	}
	if len(b.EventTimeoutSec) > 0 {
		fields = append(fields, kv("EventTimeoutSec", intMap(b.EventTimeoutSec)))
	}
	if len(b.Shell) > 0 {
		fields = append(fields, kv("Shell", strs(b.Shell)))
	}
	if len(b.SystemContextModels) > 0 {
		fields = append(fields, kv("SystemContextModels", strs(b.SystemContextModels)))
	}
	if len(b.EffortModels) > 0 {
		fields = append(fields, kv("EffortModels", stringMap(b.EffortModels)))
	}
	if len(b.EffortEvents) > 0 {
		fields = append(fields, kv("EffortEvents", strs(b.EffortEvents)))
	}
	fields = append(fields,
		kv("TimeoutUnit", jen.Lit(b.TimeoutUnit)),
		kv("NonPositiveTimeout", jen.Lit(b.NonPositiveTimeout)),
		kv("ReadAnyExit", jen.Lit(b.ReadAnyExit)),
		kv("WarningPrefix", jen.Lit(b.WarningPrefix)),
		kv("PlainNotice", jen.Lit(b.PlainNotice)),
		kv("SequentialGroups", jen.Lit(b.SequentialGroups)),
		kv("DedupeByName", jen.Lit(b.DedupeByName)),
		kv("RegexDialect", jen.Lit(b.RegexDialect)),
		kv("InvalidRegexExact", jen.Lit(b.InvalidRegexExact)),
		kv("SuspectCapture", jen.Lit(b.SuspectCapture)),
	)
	if len(b.CommandVars) > 0 {
		fields = append(fields, kv("CommandVars", stringMap(b.CommandVars)))
	}
	events := make([]jen.Code, len(b.Events))
	for i, e := range b.Events {
		events[i] = gofile.Comment(e.Doc).Add(eventValues(e, wire))
	}
	fields = append(fields,
		kv("SettingsBlock", jen.Lit(b.SettingsBlock)),
	)
	if len(b.Unfired) > 0 {
		fields = append(fields, kv("Unfired", stringMap(b.Unfired)))
	}
	if len(b.Pending) > 0 {
		fields = append(fields, kv("Pending", stringMap(b.Pending)))
	}
	if len(b.ToolInputs) > 0 {
		tools := make([]string, 0, len(b.ToolInputs))
		for t := range b.ToolInputs {
			tools = append(tools, t)
		}
		sort.Strings(tools)
		entries := make([]jen.Code, len(tools))
		for i, t := range tools {
			ti := b.ToolInputs[t]
			vals := []jen.Code{kv("Keys", strs(ti.Keys))}
			if len(ti.Defaults) > 0 {
				defaults := make(map[string]string, len(ti.Defaults))
				for k, v := range ti.Defaults {
					defaults[k] = string(v)
				}
				vals = append(vals, kv("Defaults", stringMap(defaults)))
			}
			entries[i] = jen.Lit(t).Op(":").Values(vals...)
		}
		fields = append(fields, kv("ToolInputs", jen.Map(jen.String()).Id("ToolInput").Add(lines(entries))))
	}
	if len(b.Handlers) > 0 {
		fields = append(fields, kv("Handlers", handlerTypes(b.Handlers)))
	}
	if len(b.RuleTools) > 0 {
		tools := make([]string, 0, len(b.RuleTools))
		for t := range b.RuleTools {
			tools = append(tools, t)
		}
		sort.Strings(tools)
		entries := make([]jen.Code, len(tools))
		for i, t := range tools {
			rt := b.RuleTools[t]
			entries[i] = jen.Lit(t).Op(":").Values(kv("Field", jen.Lit(rt.Field)), kv("Kind", jen.Lit(rt.Kind)))
		}
		fields = append(fields, kv("RuleTools", jen.Map(jen.String()).Id("RuleTool").Add(lines(entries))))
	}
	if len(b.IfEvents) > 0 {
		fields = append(fields, kv("IfEvents", strs(b.IfEvents)))
	}
	if o := b.OnFailure; o != nil {
		fields = append(fields, kv("OnFailure", jen.Op("&").Id("OnFailure").Add(lines([]jen.Code{
			kv("IgnoredOn", strs(o.IgnoredOn)), kv("Failed", jen.Lit(o.Failed)),
			kv("TimedOut", jen.Lit(o.TimedOut)), kv("Because", jen.Lit(o.Because)),
		}))))
	}
	if b.AsyncRewake {
		fields = append(fields, kv("AsyncRewake", jen.True()))
	}
	if cl := b.ContextLimit; cl != nil {
		fields = append(fields, kv("ContextLimit", jen.Op("&").Id("ContextLimit").Add(lines([]jen.Code{
			kv("BytesPerToken", jen.Lit(cl.BytesPerToken)), kv("Dir", jen.Lit(cl.Dir)), kv("SessionField", jen.Lit(cl.SessionField)),
			kv("Text", jen.Lit(cl.Text)), kv("Marker", jen.Lit(cl.Marker)), kv("Footer", jen.Lit(cl.Footer)),
		}))))
	}
	if in := b.Instructions; in != nil {
		files := make([]jen.Code, len(in.Files))
		for i, f := range in.Files {
			files[i] = jen.Values(kv("Path", jen.Lit(f.Path)), kv("Base", jen.Lit(f.Base)), kv("Kind", jen.Lit(f.Kind)), kv("Label", jen.Lit(f.Label)))
		}
		fields = append(fields, kv("Instructions", jen.Op("&").Id("Instructions").Add(lines([]jen.Code{
			kv("Files", jen.Index().Id("InstructionFile").Add(lines(files))),
			kv("Dirs", jen.Lit(in.Dirs)), kv("ImportDepth", jen.Lit(in.ImportDepth)), kv("MaxBytes", jen.Lit(in.MaxBytes)),
			kv("Entry", jen.Lit(in.Entry)), kv("Separator", jen.Lit(in.Separator)), kv("Wrap", jen.Lit(in.Wrap)),
		}))))
	}
	if c := b.Commands; c != nil {
		dirs := make([]jen.Code, len(c.Dirs))
		for i, d := range c.Dirs {
			dirs[i] = jen.Values(kv("Path", jen.Lit(d.Path)), kv("Base", jen.Lit(d.Base)), kv("Source", jen.Lit(d.Source)), kv("Trust", jen.Lit(d.Trust)))
		}
		fields = append(fields, kv("Commands", jen.Op("&").Id("Commands").Add(lines([]jen.Code{
			kv("Dirs", jen.Index().Id("CommandDir").Add(lines(dirs))),
			kv("Separator", jen.Lit(c.Separator)), kv("Texts", strs(c.Texts)), kv("ArgsLine", jen.Lit(c.ArgsLine)), kv("AppendArgs", jen.Lit(c.AppendArgs)),
		}))))
	}
	if p := b.Permissions; p != nil {
		fields = append(fields, kv("Permissions", permissionValues(p)))
	}
	if p := b.ToolPolicy; p != nil {
		fields = append(fields, kv("ToolPolicy", toolPolicyValues(p)))
	}
	if b.MCPToolName != "" {
		fields = append(fields, kv("MCPToolName", jen.Lit(b.MCPToolName)))
	}
	fields = append(fields, kv("Events", jen.Index().Id("Event").Add(lines(events))))
	return lines(fields)
}

// permissionValues is the literal of a table's permissions, the modes in name order.
func permissionValues(p *ir.Permissions) *jen.Statement {
	names := make([]string, 0, len(p.Modes))
	for n := range p.Modes {
		names = append(names, n)
	}
	sort.Strings(names)
	modes := make([]jen.Code, len(names))
	for i, n := range names {
		m := p.Modes[n]
		var vals []jen.Code
		if len(m.Allow) > 0 {
			vals = append(vals, kv("Allow", strs(m.Allow)))
		}
		if len(m.Refuse) > 0 {
			vals = append(vals, kv("Refuse", strs(m.Refuse)), kv("Refused", jen.Lit(m.Refused)))
		}
		vals = append(vals, kv("Otherwise", jen.Lit(m.Otherwise)))
		if m.Unanswered != "" {
			vals = append(vals, kv("Unanswered", jen.Lit(m.Unanswered)))
		}
		modes[i] = jen.Lit(n).Op(":").Values(vals...)
	}
	return jen.Op("&").Id("Permissions").Add(lines([]jen.Code{
		kv("Key", jen.Lit(p.Key)), kv("Untrusted", strs(p.Untrusted)),
		kv("Modes", jen.Map(jen.String()).Id("PermissionMode").Add(lines(modes))), kv("Unsupported", stringMap(p.Unsupported)),
		kv("Denied", stringMap(p.Denied)), kv("WholeDenied", jen.Lit(p.WholeDenied)), kv("WholeDeniedHidden", jen.Lit(p.WholeDeniedHidden)),
		kv("Unanswered", stringMap(p.Unanswered)), kv("RuleAsked", stringMap(p.RuleAsked)), kv("RulesAs", stringMap(p.RulesAs)),
	}))
}

// toolPolicyValues is the literal of a table's tool policy.
func toolPolicyValues(p *ir.ToolPolicy) *jen.Statement {
	dirs := make([]jen.Code, len(p.Dirs))
	for i, d := range p.Dirs {
		dirs[i] = jen.Values(kv("Path", jen.Lit(d.Path)), kv("Base", jen.Lit(d.Base)), kv("Tier", jen.Lit(d.Tier)),
			kv("Name", jen.Lit(d.Name)), kv("Secure", jen.Lit(d.Secure)))
	}
	return jen.Op("&").Id("ToolPolicy").Add(lines([]jen.Code{
		kv("Key", jen.Lit(p.Key)), kv("Core", jen.Lit(p.Core)), kv("CorePriority", jen.Lit(p.CorePriority)),
		kv("CoreOthersPriority", jen.Lit(p.CoreOthersPriority)), kv("Exclude", jen.Lit(p.Exclude)),
		kv("ExcludePriority", jen.Lit(p.ExcludePriority)), kv("Shell", strs(p.Shell)),
		kv("Denied", jen.Lit(p.Denied)), kv("DeniedWith", jen.Lit(p.DeniedWith)), kv("Unanswered", jen.Lit(p.Unanswered)),
		kv("DisplayNames", stringMap(p.DisplayNames)), kv("Dirs", jen.Index().Id("PolicyDir").Add(lines(dirs))),
		kv("MaxPriority", jen.Lit(p.MaxPriority)), kv("Mode", jen.Lit(p.Mode)),
		kv("CatchAll", jen.Id("PolicyRule").Values(kv("Decision", jen.Lit(p.CatchAll.Decision)), kv("Priority", jen.Lit(p.CatchAll.Priority)))),
		kv("MCPPrefix", jen.Lit(p.MCPPrefix)), kv("Unsupported", stringMap(p.Unsupported)),
	}))
}

// intMap is the map literal of m, one key a line in key order.
func intMap(m map[string]int) *jen.Statement { return litMap(m, jen.Int()) }

// stringMap is the map literal of m, one key a line in key order.
func stringMap(m map[string]string) *jen.Statement { return litMap(m, jen.String()) }

// litMap is the literal of m, a map from strings to elem, one key a line in key order.
func litMap[V int | string](m map[string]V, elem *jen.Statement) *jen.Statement {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	entries := make([]jen.Code, len(keys))
	for i, k := range keys {
		entries[i] = jen.Lit(k).Op(":").Lit(m[k])
	}
	return jen.Map(jen.String()).Add(elem).Add(lines(entries))
}

// handlerTypes is the map literal of a table's handler types, one a line in type order.
func handlerTypes(m map[string]*ir.HandlerType) *jen.Statement {
	types := make([]string, 0, len(m))
	for k := range m {
		types = append(types, k)
	}
	sort.Strings(types)
	entries := make([]jen.Code, len(types))
	for i, k := range types {
		h := m[k]
		fields := []jen.Code{kv("DefaultTimeoutSec", jen.Lit(h.DefaultTimeoutSec))}
		if len(h.EventTimeoutSec) > 0 {
			fields = append(fields, kv("EventTimeoutSec", intMap(h.EventTimeoutSec)))
		}
		if h.Refused != "" {
			fields = append(fields, kv("Refused", jen.Lit(h.Refused)))
		}
		if len(h.RefusedAt) > 0 {
			fields = append(fields, kv("RefusedAt", stringMap(h.RefusedAt)))
		}
		if h.Placeholders != "" {
			fields = append(fields, kv("Placeholders", jen.Lit(h.Placeholders)))
		}
		if h.OnFailure {
			fields = append(fields, kv("OnFailure", jen.True()))
		}
		if h.PlainAnswer != "" {
			fields = append(fields, kv("PlainAnswer", jen.Lit(h.PlainAnswer)))
		}
		if h.OnFailureBecause != "" {
			fields = append(fields, kv("OnFailureBecause", jen.Lit(h.OnFailureBecause)))
		}
		if h.SystemPrompt != "" {
			fields = append(fields, kv("SystemPrompt", jen.Lit(h.SystemPrompt)))
		}
		if h.AnswerSchema != "" {
			fields = append(fields, kv("AnswerSchema", jen.Lit(h.AnswerSchema)))
		}
		if c := h.Conversation; c != nil {
			events := make([]jen.Code, len(c.Events))
			for i, e := range c.Events {
				events[i] = jen.Lit(e)
			}
			fields = append(fields, kv("Conversation", jen.Op("&").Id("ConversationPrompt").Add(lines([]jen.Code{
				kv("Events", jen.Index().String().Values(events...)),
				kv("SystemPrompt", jen.Lit(c.SystemPrompt)),
				kv("Condition", jen.Lit(c.Condition)),
			}))))
		}
		if v := h.Verifier; v != nil {
			fields = append(fields, kv("Verifier", jen.Op("&").Id("AgentVerifier").Add(lines([]jen.Code{
				kv("Intro", jen.Lit(v.Intro)),
				kv("StopEvents", strs(v.StopEvents)),
				kv("StopIntro", jen.Lit(v.StopIntro)),
				kv("Transcript", jen.Lit(v.Transcript)),
				kv("NoTranscript", jen.Lit(v.NoTranscript)),
				kv("AnswerTool", jen.Lit(v.AnswerTool)),
				kv("AnswerDescription", jen.Lit(v.AnswerDescription)),
				kv("WithoutTools", strs(v.WithoutTools)),
				kv("MaxTurns", jen.Lit(v.MaxTurns)),
				kv("Enforce", jen.Lit(v.Enforce)),
				kv("EnforceTimes", jen.Lit(v.EnforceTimes)),
				kv("NotMet", jen.Lit(v.NotMet)),
				kv("AgentID", jen.Lit(v.AgentID)),
			}))))
		}
		entries[i] = jen.Lit(k).Op(":").Add(lines(fields))
	}
	return jen.Map(jen.String()).Id("HandlerType").Add(lines(entries))
}

// eventValues is the composite literal of e's table, one field a line.
func eventValues(e *ir.BridgeEvent, wire string) *jen.Statement {
	rules := make([]jen.Code, len(e.Rules))
	for i, r := range e.Rules {
		rules[i] = jen.Values(
			kv("When", jen.Lit(r.When)), kv("Is", jen.Lit(r.Is)), kv("Then", jen.Lit(r.Then)),
			kv("Reason", jen.Lit(r.Reason)), kv("NeedsReason", jen.Lit(r.NeedsReason)), kv("Unless", jen.Lit(r.Unless)),
		)
	}
	notices := make([]jen.Code, len(e.Notices))
	for i, n := range e.Notices {
		notices[i] = jen.Values(kv("When", jen.Lit(n.When)), kv("Text", jen.Lit(n.Text)))
	}
	fields := []jen.Code{
		kv("Name", jen.Lit(e.Event)),
		kv("Point", jen.Lit(e.Point)),
		kv("Input", jen.Lit(e.Input)),
		kv("Output", jen.Lit(e.Output)),
		kv("Matcher", jen.Lit(e.Matcher)),
		kv("MatcherKind", jen.Lit(e.MatcherKind)),
		kv("PlainStdoutContext", jen.Lit(e.PlainStdoutContext)),
		kv("FallbackReason", jen.Lit(e.FallbackReason)),
		kv("Scope", jen.Lit(e.Scope)),
		kv("Halt", jen.Lit(e.Halt)),
		kv("HaltReason", jen.Lit(e.HaltReason)),
		kv("Exit2", jen.Lit(e.Exit2)),
		kv("Contexts", strs(e.Contexts)),
		kv("JoinReasons", jen.Lit(e.JoinReasons)),
		kv("Rules", jen.Index().Id("Rule").Add(lines(rules))),
		kv("Notices", jen.Index().Id("Notice").Add(lines(notices))),
	}
	if r := e.Rewrite; r != nil {
		fields = append(fields, kv("Rewrite", jen.Op("&").Id("Rewrite").Values(
			kv("Input", jen.Lit(r.Input)), kv("Mode", jen.Lit(r.Mode)), kv("Requires", jen.Lit(r.Requires)),
			kv("RequiresIs", jen.Lit(r.RequiresIs)), kv("Stdin", jen.Lit(r.Stdin)), kv("Note", jen.Lit(r.Note)),
			kv("NonObjectBlocks", jen.Lit(r.NonObjectBlocks)),
		)))
	}
	if e.CommandsOnly {
		fields = append(fields, kv("CommandsOnly", jen.True()))
	}
	if e.Relayed {
		fields = append(fields, kv("Relayed", jen.True()))
	}
	if e.BlockInjects {
		fields = append(fields, kv("BlockInjects", jen.True()))
	}
	if e.HarmlessContexts {
		fields = append(fields, kv("HarmlessContexts", jen.True()))
	}
	fields = append(fields, kv("Subject", jen.Lit(e.Subject)), kv("Results", jen.Lit(e.Results)))
	if len(e.Also) > 0 {
		also := make([]jen.Code, len(e.Also))
		for i, a := range e.Also {
			also[i] = jen.Values(kv("Point", jen.Lit(a.Point)), kv("Status", jen.Lit(a.Status)),
				kv("Subject", jen.Lit(a.Subject)), kv("Interactive", jen.Lit(a.Interactive)),
				kv("Before", jen.Lit(a.Before)), kv("Engine", jen.Lit(a.Engine)))
		}
		fields = append(fields, kv("Also", jen.Index().Id("Also").Add(lines(also))))
	}
	if po := e.PassOn; po != nil {
		fields = append(fields, kv("PassOn", jen.Op("&").Id("PassOn").Values(
			kv("Output", jen.Lit(po.Output)), kv("Stdin", jen.Lit(po.Stdin)), kv("Join", jen.Lit(po.Join)),
		)))
	}
	if tc := e.Tail; tc != nil {
		fields = append(fields, kv("Tail", jen.Op("&").Id("TailCall").Values(
			kv("Output", jen.Lit(tc.Output)), kv("Name", jen.Lit(tc.Name)), kv("Arguments", jen.Lit(tc.Arguments)),
		)))
	}
	fields = append(fields, kv("DecodeOutput", jen.Func().Params(jen.Id("data").Index().Byte()).Params(jen.Any(), jen.Error()).Block(
		jen.Var().Id("out").Qual(wire, e.Output),
		jen.If(jen.Err().Op(":=").Id("out").Dot("UnmarshalJSON").Call(jen.Id("data")), jen.Err().Op("!=").Nil()).Block(
			jen.Return(jen.Nil(), jen.Err()),
		),
		jen.Return(jen.Id("out"), jen.Nil()),
	)))
	return lines(fields)
}

// indexFile declares Bridges, every table (all: their Go names, sorted), and Lookup.
func indexFile(all []string) *jen.File {
	f := gofile.New(pkg, emit.Header("bridges/bridges.cue"))
	f.Add(gofile.Comment("Bridges lists every dialect's table, sorted by dialect.").
		Var().Id("Bridges").Op("=").Index().Op("*").Id("Bridge").ValuesFunc(func(g *jen.Group) {
		for _, name := range all {
			g.Op("&").Id(name)
		}
	}))
	f.Line()
	f.Add(gofile.Comment("Lookup returns the table of the named dialect, or nil.").
		Func().Id("Lookup").Params(jen.Id("dialect").String()).Op("*").Id("Bridge").Block(
		jen.For(jen.List(jen.Id("_"), jen.Id("b")).Op(":=").Range().Id("Bridges")).Block(
			jen.If(jen.Id("b").Dot("Dialect").Op("==").Id("dialect")).Block(jen.Return(jen.Id("b"))),
		),
		jen.Return(jen.Nil()),
	))
	return f
}

// kv is the keyed element name: v of a composite literal.
func kv(name string, v jen.Code) *jen.Statement { return jen.Id(name).Op(":").Add(v) }

// strs is a []string literal of ss on one line ([]string{} when ss is empty).
func strs(ss []string) *jen.Statement {
	return jen.Index().String().ValuesFunc(func(g *jen.Group) {
		for _, s := range ss {
			g.Lit(s)
		}
	})
}

// lines is the values of a composite literal, one element a line, each followed by a
// comma; {} when there are none.
func lines(elems []jen.Code) *jen.Statement {
	if len(elems) == 0 {
		return jen.Values()
	}
	items := make([]jen.Code, 0, len(elems)+1)
	for _, e := range elems {
		items = append(items, jen.Line().Add(e))
	}
	return jen.Values(append(items, jen.Line())...)
}
