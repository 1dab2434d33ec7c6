package differential

import (
	"slices"
	"strings"
	"time"
)

// Hook is one hook of a case: a shell script registered on an event.
type Hook struct {
	Event   string
	Matcher string // "" matches everything
	// Script is the hook's shell script; {{state}} is replaced by a per-run state
	// directory (for hooks that act once or count).
	Script string
	// Timeout is the hook's timeout in seconds (0: the engine's default).
	Timeout int
	// Source is the settings file the hook is in: "" (the file passed to the engine),
	// "user", "project" or "local" (the Claude Code settings hierarchy), "ext:NAME" (a
	// Gemini CLI extension's hooks/hooks.json), or "agent:FILE" (the frontmatter hooks of a
	// Claude Code agent definition, Case.Files' or HomeFiles' FILE, at its {{hooks}}).
	Source string
	// Group puts the hooks of one event with the same non-zero Group in one matcher group
	// (0: a group of its own); Sequential makes the hook's group sequential (Gemini CLI's
	// "sequential": true: its hooks run in order, each seeing the previous one's rewrite).
	Group      int
	Sequential bool
	// RawTimeout, when set, is written as the handler's timeout as it is (a Gemini bad-input
	// case: 0 or a negative number); otherwise Timeout is converted to the dialect's unit
	// (seconds, Gemini CLI milliseconds).
	RawTimeout string
	// Args are further words of the hook's command line, after the wrapper's (the script
	// gets them as $1…; Gemini CLI substitutes its variables into the command text).
	Args string
	// HTTP, when set, makes the hook an http handler (Claude Code) that posts to the run's
	// HookServer, which answers as it says; Script is then unused.
	HTTP *HTTPAnswer
	// Fields are further keys of the handler, written as they are (Claude Code's "if",
	// "once", "async", "asyncRewake", "onFailure").
	Fields map[string]any
	// MCP, when set, makes the hook an mcp_tool handler calling the run's MCP hook server
	// (ServeMCPHooks), which records the call and answers as it says; Script is unused.
	MCP *MCPAnswer
	// Prompt, when set, makes the hook a prompt handler (Claude Code) with this prompt; the
	// mock answers its model request with Case.HookModel. Script is unused.
	Prompt string
	// Model is a prompt handler's model ("" leaves it out).
	Model string
	// ContinueOnBlock sets a prompt handler's continueOnBlock.
	ContinueOnBlock bool
}

// Case is one differential case: hooks and the scripted model turns.
type Case struct {
	Name string
	// Engines are the engines the case runs under ("claude", "codex", "gemini"); empty:
	// claude and codex (whose hook protocols share their event names).
	Engines []string
	Hooks   []Hook
	Turns   []Turn
	// Plugin loads the hooks as a Claude Code plugin (--plugin-dir) instead of a settings
	// file; their scripts run from ${CLAUDE_PLUGIN_ROOT}.
	Plugin bool
	// PluginFiles, with Plugin, is a directory under testdata whose files are copied into
	// the plugin directory first (a real plugin's scripts; its hooks.json is not: the
	// case's hooks replace it).
	PluginFiles string
	// BrokenExtension adds a Gemini CLI extension whose hooks/hooks.json is malformed.
	BrokenExtension bool
	// DisableAll adds "disableAllHooks": true to the settings file.
	DisableAll bool
	// Settings are further top-level keys of the settings file (allowedHttpHookUrls;
	// Gemini CLI's tools).
	Settings map[string]any
	// Sources has dsh load the settings hierarchy (--setting-sources user,project,local
	// --trust), as the engine does by default.
	Sources bool
	// Prompts are further prompts, each sent by a new run that continues the session
	// (claude -p --continue, codex exec resume --last, dsh run on the same --log); "/compact
	// [instructions]" asks for a manual compaction.
	Prompts []string
	// AutoCompact sets a small context window so that a response reporting a large usage
	// (Turn.InputTokens) makes the next request compact first (see AutoCompactArgs).
	AutoCompact bool
	// AskPermission runs the engines so that a shell call needs approval, which no one
	// answers headless: Claude Code under --permission-mode default (instead of
	// --dangerously-skip-permissions; its shell calls that write ask), Codex under
	// --approve-for-me (instead of --dangerously-bypass-approvals-and-sandbox; the turns'
	// Escalate calls ask), and dsh run under --permission-mode default (every call but
	// Read asks). PermissionRequest hooks can answer.
	AskPermission bool
	// Sandbox runs the engine (Codex) and dsh run with their Bash sandbox in this mode
	// (Codex's sandbox_mode, dsh's --sandbox) instead of none.
	Sandbox string
	// Workspace is the name of the workspace directory of each run ("ws" when empty): a
	// case about what the engines make of a directory's name.
	Workspace string
	// EngineUntil names a hook (as hook runs are named: EVENT-N) that the engine
	// sometimes kills before it ends; the engine's run is repeated, up to engineAttempts
	// runs in all, until the hook ran to its end, and the comparison is with that run.
	// A case sets it only for a behaviour of the engine that testdata/differences.md
	// records.
	EngineUntil string
	// Interrupt has each run's main process get SIGINT, as a user's interrupt sends it,
	// once a hook of the case creates {{state}}/interrupt.
	Interrupt bool
	// First, when set, is the first run's prompt instead of Prompt (a slash command).
	First string
	// Files are files written into the workspace before each run (path relative to it:
	// CLAUDE.md, a command file in .claude/commands, AGENTS.md, GEMINI.md), and HomeFiles into the
	// run's HOME (.claude/CLAUDE.md, .claude/commands/…); a path may climb out of the
	// workspace with ../ (a parent directory's instruction file).
	Files, HomeFiles map[string]string
	// DshRefuses, when set, is what dsh run's error says when it refuses to start (exit
	// status 1) where the engine runs: a deliberate difference the rows of
	// testdata/differences.md list; dsh running is then an error.
	DshRefuses string
	// MCPServer mounts the run's MCP hook server (MCPConfig; Gemini CLI's mcpServers)
	// without an mcp_tool hook: its tool is one the model may call.
	MCPServer bool
	// CodexConfig are further tables of Codex's config.toml (the run's CODEX_HOME, which
	// is HOME/.codex): agent roles ([agents.NAME]). dsh run finds the same file in its
	// HOME.
	CodexConfig string
	// MCPResources has the MCP hook server offer resources too (addMCPResources); it
	// mounts the server as MCPServer does.
	MCPResources bool
	// Stdin, when set, is piped to every run's stdin, the engine's and dsh run's alike,
	// beside the prompt argument: each joins the two as its engine does.
	Stdin string
	// Args are further arguments of the first run, given to the engine (claude -p) and to
	// dsh run alike: flags both take (--append-system-prompt, --init-only).
	Args []string
	// DshArgs are further arguments of dsh run's first run only (--trust, for the
	// project's slash commands, which the engine reads headless without asking).
	DshArgs []string
	// Concurrent names hooks ("Event-N") whose runs the engine starts concurrently: their
	// runs are compared in the order of their stdin, after every other run (Unordered).
	Concurrent []string
	// Probes are words the case's files or arguments put in the model's input; the
	// comparison says where each is in the first request (Observation.Placed).
	Probes []string
	// HookModel is what the mock answers a prompt hook's model request with (recognized by
	// PromptHookMarkers); HookModelDelay delays that answer, HookModelFail answers it with
	// the protocol's error.
	HookModel      string
	HookModelDelay time.Duration
	HookModelFail  bool
	// Children script the subagents' requests apart from the parent's (Mock.Children):
	// a child's requests consume its script's turns, never Turns.
	Children []Child
	// TrustProject trusts the workspace on both sides: Claude Code's
	// projects[WORKSPACE].hasTrustDialogAccepted in the run's ~/.claude.json, dsh run's
	// --trust (an untrusted workspace's permissions.allow is ignored by both).
	TrustProject bool
	// Model is the model both sides ask the mock for instead of the suite's: the Claude
	// model (claude --model, dsh run --model anthropic:…) instead of ClaudeModel, since
	// Claude Code sends hook contexts on another channel for some models; the Codex model
	// (config.toml's model, dsh run --model openai:…) instead of mock-model, since Codex
	// offers the models of its catalog other tools.
	Model string
}

// mcp says whether a hook of c calls the run's MCP hook server.
func (c Case) mcp() bool {
	return c.MCPServer || c.MCPResources || slices.ContainsFunc(c.Hooks, func(hk Hook) bool { return hk.MCP != nil })
}

// prompts are the prompts of c's runs: Prompt, then its further ones.
func (c Case) prompts() []string {
	first := Prompt
	if c.First != "" {
		first = c.First
	}
	return append([]string{first}, c.Prompts...)
}

// engineAttempts bounds the engine runs of a case with EngineUntil.
const engineAttempts = 8

// AutoCompact settings: the window each engine is given when Case.AutoCompact is set,
// so that a response reporting BigUsage input tokens is over every engine's threshold.
const (
	// ClaudeCompactWindow is CLAUDE_CODE_AUTO_COMPACT_WINDOW (Claude Code compacts when the
	// last response's usage nears it; without it the engine resolves a window the mock's
	// usage never reaches and compacts only when a request fails with "prompt is too long").
	ClaudeCompactWindow = "20000"
	// CodexCompactLimit is Codex's model_auto_compact_token_limit.
	CodexCompactLimit = 1000
	// DshContextWindow is dsh run's --context-window: small, so that the newest exchange
	// is larger than the share of it a checkpoint keeps (0.16) and, as the engines do, dsh
	// summarizes the whole history.
	DshContextWindow = "1000"
	// BigUsage is the input token count a turn reports to trigger compaction.
	BigUsage = 190000
)

// fails says whether a turn of c ends on a model error (Turn.Fail).
func (c Case) fails() bool {
	return slices.ContainsFunc(c.Turns, func(t Turn) bool { return t.Fail })
}

// RunsOn says whether c runs under engine.
func (c Case) RunsOn(engine string) bool {
	if len(c.Engines) == 0 {
		return engine == "claude" || engine == "codex"
	}
	for _, e := range c.Engines {
		if e == engine {
			return true
		}
	}
	return false
}

// Prompt is the prompt every case starts with.
const Prompt = "Do the task."

// oneCall is a turn that runs one command (creating marker file ran_1), then a final
// text.
var oneCall = []Turn{{Text: "running", Bash: []string{"touch ran_1; echo out1"}}, {Text: "finished"}}

// twoCalls runs two commands in one turn.
var twoCalls = []Turn{{Text: "running", Bash: []string{"touch ran_1; echo out1", "touch ran_2; echo out2"}}, {Text: "finished"}}

// rawCalls runs a command holding &, < and >, which JSON may escape.
var rawCalls = []Turn{{Text: "running", Bash: []string{"touch ran_1 && echo out1 >/dev/null </dev/null"}}, {Text: "finished"}}

// textOnly is a turn with no tool call.
var textOnly = []Turn{{Text: "finished"}}

func js(s string) string { return "printf '%s\\n' '" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// once makes a script act only on its first run (state kept in {{state}}/NAME).
func once(name, script string) string {
	return "if [ -e {{state}}/" + name + " ]; then exit 0; fi\ntouch {{state}}/" + name + "\n" + script
}

// upTo makes a script act on its first n runs.
func upTo(name string, n int, script string) string {
	return "c=$(cat {{state}}/" + name + " 2>/dev/null || echo 0)\nif [ \"$c\" -ge " + itoa(n) + " ]; then exit 0; fi\necho $((c+1)) > {{state}}/" + name + "\n" + script
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for n > 0 {
		b = append([]byte{byte('0' + n%10)}, b...)
		n /= 10
	}
	return string(b)
}

func h(event, script string) Hook { return Hook{Event: event, Script: script} }

// failed marks that a StopFailure hook ran; awaitFailed is a SessionEnd hook that waits
// (up to 3 s) for that mark, since Claude Code does not wait for a StopFailure hook.
const failed = "touch {{state}}/failed\n"

var awaitFailed = Hook{Event: "SessionEnd", Timeout: 30,
	Script: "i=0; while [ ! -e {{state}}/failed ] && [ $i -lt 30 ]; do sleep 0.1; i=$((i+1)); done"}

// Cases is the differential suite.
func Cases() []Case {
	pre := func(name string, turns []Turn, hooks ...Hook) Case {
		return Case{Name: "pre/" + name, Hooks: hooks, Turns: turns}
	}
	post := func(name string, turns []Turn, hooks ...Hook) Case {
		return Case{Name: "post/" + name, Hooks: hooks, Turns: turns}
	}
	stop := func(name string, turns []Turn, hooks ...Hook) Case {
		return Case{Name: "stop/" + name, Hooks: hooks, Turns: turns}
	}
	ups := func(name string, hooks ...Hook) Case {
		return Case{Name: "prompt/" + name, Hooks: hooks, Turns: oneCall}
	}
	ss := func(name string, hooks ...Hook) Case {
		return Case{Name: "session/" + name, Hooks: hooks, Turns: oneCall}
	}
	const P, O, S, U, SS = "PreToolUse", "PostToolUse", "Stop", "UserPromptSubmit", "SessionStart"
	const PR, PF, N = "PermissionRequest", "PostToolUseFailure", "Notification"
	perm := func(name string, hooks ...Hook) Case {
		return Case{Name: "perm/" + name, AskPermission: true, Hooks: hooks, Turns: escalated}
	}
	denyJSON := `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"denied by policy"}}`
	cs := []Case{
		// Every event, silent: the baseline of hook stdin and environment.
		{Name: "all/exit0", Turns: oneCall, Hooks: []Hook{h(SS, "exit 0"), h(U, "exit 0"), h(P, "exit 0"), h(O, "exit 0"), h(S, "exit 0")}},
		{Name: "all/two-calls", Turns: twoCalls, Hooks: []Hook{h(P, "exit 0"), h(O, "exit 0"), h(S, "exit 0")}},
		{Name: "all/rule-engine", Turns: oneCall, Hooks: []Hook{h(U, "cat >/dev/null; exit 0"), h(P, "cat >/dev/null; exit 0"), h(O, "cat >/dev/null; exit 0"), h(S, "cat >/dev/null; exit 0")}},

		pre("exit0", oneCall, h(P, "exit 0")),
		pre("exit1", oneCall, h(P, "echo 'pre hook trouble' >&2; exit 1")),
		pre("exit2", oneCall, h(P, "echo 'blocked by policy' >&2; exit 2")),
		pre("exit2-empty", oneCall, h(P, "exit 2")),
		pre("exit127", oneCall, h(P, "exit 127")),
		pre("deny", oneCall, h(P, js(denyJSON))),
		pre("deny-noreason", oneCall, h(P, js(`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny"}}`))),
		pre("allow", oneCall, h(P, js(`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"fine"}}`))),
		pre("ask", oneCall, h(P, js(`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask","permissionDecisionReason":"please confirm"}}`))),
		pre("legacy-block", oneCall, h(P, js(`{"decision":"block","reason":"legacy no"}`))),
		pre("legacy-approve", oneCall, h(P, js(`{"decision":"approve","reason":"legacy yes"}`))),
		pre("continue-false", oneCall, h(P, js(`{"continue":false,"stopReason":"halted by hook"}`))),
		// continue:false with a deny, or with exit 2: the call does not run either.
		pre("deny-continue-false", oneCall, h(P, js(`{"continue":false,"stopReason":"halted by hook","hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"denied too"}}`))),
		pre("exit2-continue-false", oneCall, h(P, js(`{"continue":false,"stopReason":"halted by hook"}`)+"; echo 'blocked too' >&2; exit 2")),
		pre("context", oneCall, h(P, js(`{"hookSpecificOutput":{"hookEventName":"PreToolUse","additionalContext":"pre context"}}`))),
		pre("plain-stdout", oneCall, h(P, "echo 'plain pre words'")),
		pre("invalid-json", oneCall, h(P, "echo '{\"decision\": '")),
		pre("timeout", oneCall, Hook{Event: P, Script: "sleep 4", Timeout: 1}),
		// Output over dsh's 1 MiB cap loses text, never a block: a deny followed
		// by 1.1 MB of spaces, and exit 2 with 1 MiB + 1 of stderr.
		pre("deny-trailing-spaces", oneCall, h(P, js(denyJSON)+"; head -c 1100000 /dev/zero | tr '\\0' ' '")),
		pre("exit2-huge-stderr", oneCall, h(P, "head -c 1048577 /dev/zero | tr '\\0' x >&2; exit 2")),
		pre("two-deny", oneCall, h(P, js(denyJSON)), h(P, js(`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"second says no"}}`))),
		pre("deny-and-context", oneCall, h(P, js(denyJSON)), h(P, js(`{"hookSpecificOutput":{"hookEventName":"PreToolUse","additionalContext":"pre context"}}`))),
		pre("updated-input", oneCall, h(P, js(`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","updatedInput":{"command":"touch ran_changed; echo changed"}}}`))),
		// updatedInput (tools/rewrite-input): what runs, what the model sees, what
		// PostToolUse receives.
		pre("updated-input-post", oneCall, h(P, js(`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","updatedInput":{"command":"touch ran_changed; echo changed"}}}`)), h(O, "exit 0")),
		pre("updated-input-alone", oneCall, h(P, js(`{"hookSpecificOutput":{"hookEventName":"PreToolUse","updatedInput":{"command":"touch ran_changed; echo changed"}}}`)), h(O, "exit 0")),
		pre("updated-input-deny", oneCall, h(P, js(`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"denied by policy","updatedInput":{"command":"touch ran_changed; echo changed"}}}`)), h(O, "exit 0")),
		pre("updated-input-two", oneCall,
			h(P, "sleep 1; "+js(`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","updatedInput":{"command":"touch ran_first; echo first"}}}`)),
			h(P, js(`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","updatedInput":{"command":"touch ran_second; echo second"}}}`)), h(O, "exit 0")),
		{Name: "pre/updated-input-invalid", Engines: []string{"claude"}, Turns: oneCall, Hooks: []Hook{
			h(P, js(`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","updatedInput":{"description":"no command"}}}`))}},
		pre("matcher-miss", oneCall, Hook{Event: P, Matcher: "Read", Script: "echo no >&2; exit 2"}),
		pre("matcher-bash", oneCall, Hook{Event: P, Matcher: "Bash", Script: "echo bash blocked >&2; exit 2"}),
		// Hooks that read their stdin as text: each decides on the raw bytes (the engine's
		// key order, its escaping of &, < and >), so the second command runs only where
		// the bytes are the engine's.
		pre("grep-stdin", rawCalls,
			h(P, `grep -q '"command":"touch ran_1 && echo out1 >/dev/null </dev/null"' && exit 0; echo 'escaped or reordered' >&2; exit 2`),
			h(P, `grep -q '^{"session_id":' || { echo 'session_id is not first' >&2; exit 2; }; exit 0`)),
		post("grep-stdin", rawCalls,
			h(O, `grep -q '"tool_name":"Bash","tool_input":{"command":"touch ran_1 && echo out1 >/dev/null </dev/null"}' || { echo 'not the engine bytes' >&2; exit 2; }; exit 0`)),
		// JavaScript regular expressions in Claude Code (new RegExp(matcher)): lookahead,
		// lookbehind and a backreference fire on Bash. Not under Codex: its Rust regex
		// rejects them, and dsh run refuses a hooks file named on its command line that
		// holds a group it would skip (docs/decisions/0007-cli.md), so there is no run to
		// compare.
		{Name: "pre/matcher-lookahead", Engines: []string{"claude"}, Turns: oneCall, Hooks: []Hook{{Event: P, Matcher: "^(?!Read$)", Script: "echo 'lookahead blocked' >&2; exit 2"}}},
		{Name: "pre/matcher-lookahead-miss", Engines: []string{"claude"}, Turns: oneCall, Hooks: []Hook{{Event: P, Matcher: "^(?!Bash$)", Script: "echo 'no' >&2; exit 2"}}},
		{Name: "pre/matcher-lookbehind", Engines: []string{"claude"}, Turns: oneCall, Hooks: []Hook{{Event: P, Matcher: "(?<=Ba)sh", Script: "echo 'lookbehind blocked' >&2; exit 2"}}},
		{Name: "pre/matcher-backreference", Engines: []string{"claude"}, Turns: oneCall, Hooks: []Hook{{Event: P, Matcher: `^()Bash\1$`, Script: "echo 'backreference blocked' >&2; exit 2"}}},
		pre("system-message", oneCall, h(P, js(`{"systemMessage":"a note for the user"}`))),
		pre("deny-two-calls", twoCalls, h(P, "grep -q ran_2 && { echo 'not the second' >&2; exit 2; }; exit 0")),
		pre("exit2-stdout-json", oneCall, h(P, js(denyJSON)+"; echo 'stderr reason' >&2; exit 2")),
		pre("exit2-stdout-allow", oneCall, h(P, js(`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow"}}`)+"; echo 'stderr reason' >&2; exit 2")),
		pre("exit2-stdout-context", oneCall, h(P, js(`{"hookSpecificOutput":{"hookEventName":"PreToolUse","additionalContext":"ctx on exit 2"}}`)+"; echo 'stderr reason' >&2; exit 2")),

		post("exit0", oneCall, h(O, "exit 0")),
		// Claude Code's file tools: tool_input and tool_response of Write, Read and Edit.
		{Name: "post/file-tools", Engines: []string{"claude"}, Hooks: []Hook{h(P, "exit 0"), h(O, "exit 0")}, Turns: []Turn{
			{Text: "writing", Calls: []Call{{Name: "Write", Input: map[string]any{"file_path": "{{ws}}/notes.txt", "content": "alpha\nbeta\n"}}}},
			{Text: "reading", Calls: []Call{{Name: "Read", Input: map[string]any{"file_path": "{{ws}}/notes.txt"}}}},
			{Text: "editing", Calls: []Call{{Name: "Edit", Input: map[string]any{"file_path": "{{ws}}/notes.txt", "old_string": "beta", "new_string": "gamma"}}}},
			{Text: "finished"}}},
		// An update by Write (after a partial Read) and an Edit of every occurrence: the rest
		// of the file tools' shapes and words. (A read past the end matched too, as a sixth
		// call, but from there the engine adds a reminder about its task tools.)
		{Name: "post/file-tools-update", Engines: []string{"claude"}, Hooks: []Hook{h(O, "exit 0")}, Turns: []Turn{
			{Text: "writing", Calls: []Call{{Name: "Write", Input: map[string]any{"file_path": "{{ws}}/notes.txt", "content": "one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine\nten\n"}}}},
			{Text: "reading", Calls: []Call{{Name: "Read", Input: map[string]any{"file_path": "{{ws}}/notes.txt", "offset": 2, "limit": 3}}}},
			{Text: "rewriting", Calls: []Call{{Name: "Write", Input: map[string]any{"file_path": "{{ws}}/notes.txt", "content": "one\ntwo\nTHREE\nfour\nfive\nsix\nseven\nEIGHT\nnine\nten"}}}},
			{Text: "editing", Calls: []Call{{Name: "Edit", Input: map[string]any{"file_path": "{{ws}}/notes.txt", "old_string": "f", "new_string": "F", "replace_all": true}}}},
			{Text: "finished"}}},
		post("exit1", oneCall, h(O, "echo 'post hook trouble' >&2; exit 1")),
		post("exit2", oneCall, h(O, "echo 'post feedback' >&2; exit 2")),
		post("exit2-empty", oneCall, h(O, "exit 2")),
		post("exit127", oneCall, h(O, "exit 127")),
		post("block", oneCall, h(O, js(`{"decision":"block","reason":"post block reason"}`))),
		post("block-noreason", oneCall, h(O, js(`{"decision":"block"}`))),
		post("context", oneCall, h(O, js(`{"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"post context"}}`))),
		post("continue-false", oneCall, h(O, js(`{"continue":false,"stopReason":"halted after tool"}`))),
		post("plain-stdout", oneCall, h(O, "echo 'plain post words'")),
		post("invalid-json", oneCall, h(O, "echo '{\"decision\": '")),
		post("timeout", oneCall, Hook{Event: O, Script: "sleep 4", Timeout: 1}),
		post("two-contexts", oneCall, h(O, js(`{"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"first context"}}`)), h(O, js(`{"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"second context"}}`))),
		post("failing-tool", []Turn{{Text: "running", Bash: []string{"touch ran_1; echo bad >&2; exit 3"}}, {Text: "finished"}}, h(O, js(`{"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"post context"}}`))),
		post("block-and-context", oneCall, h(O, js(`{"decision":"block","reason":"post block reason","hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"post context"}}`))),

		stop("exit0", textOnly, h(S, "exit 0")),
		stop("exit1", textOnly, h(S, "echo 'stop trouble' >&2; exit 1")),
		stop("exit2-once", textOnly, h(S, once("s", "echo 'keep going' >&2; exit 2"))),
		stop("exit2-empty-once", textOnly, h(S, once("s", "exit 2"))),
		stop("block-once", textOnly, h(S, once("s", js(`{"decision":"block","reason":"not yet"}`)))),
		// A block whose hook leaves a process holding its output open (as Claude Code's
		// safe_stop_hook_example.py does): Claude Code refuses the suspect capture, so the
		// turn stops; Codex waits for the output's end and honours it.
		stop("block-orphan-once", textOnly, h(S, once("s", js(`{"decision":"block","reason":"not yet"}`)+"\n( sleep 3 ) &"))),
		stop("block-noreason-once", textOnly, h(S, once("s", js(`{"decision":"block"}`)))),
		stop("context-once", textOnly, h(S, once("s", js(`{"hookSpecificOutput":{"hookEventName":"Stop","additionalContext":"stop context"}}`)))),
		stop("continue-false", textOnly, h(S, js(`{"continue":false,"stopReason":"stop halted"}`))),
		stop("plain-stdout", textOnly, h(S, "echo 'plain stop words'")),
		stop("invalid-json", textOnly, h(S, "echo '{\"decision\": '")),
		stop("timeout", textOnly, Hook{Event: S, Script: "sleep 4", Timeout: 1}),
		stop("block-3", textOnly, h(S, upTo("n", 3, js(`{"decision":"block","reason":"again"}`)))),
		stop("block-12", textOnly, h(S, upTo("n", 12, js(`{"decision":"block","reason":"again"}`)))),
		stop("active-guard", textOnly, h(S, `grep -q '"stop_hook_active":true' && exit 0; `+js(`{"decision":"block","reason":"one more pass"}`))),
		stop("after-tool", oneCall, h(S, once("s", js(`{"decision":"block","reason":"not yet"}`)))),
		// A hook that parses the transcript: the last assistant line carries the final text
		// (after a second: Claude Code writes its transcript asynchronously, and right at
		// Stop the last message may not be there yet; transcript-now shows it).
		stop("transcript-last", oneCall, h(S, `sleep 1; `+transcriptLast)),
		{Name: "stop/transcript-now", Engines: []string{"claude"}, Turns: oneCall, Hooks: []Hook{h(S, transcriptLast)}},
		stop("two-hooks", textOnly, h(S, once("a", js(`{"decision":"block","reason":"first"}`))), h(S, "exit 0")),
		// Codex's sandbox and dsh's in workspace-write: a write in the workspace succeeds, one
		// outside it (then ran_2 is not made; not under /tmp, which Codex's workspace-write
		// lets a command write) and one into the .git an earlier command made (ran_3) are
		// refused; the PostToolUse hook sees the commands' results.
		{Name: "sandbox/workspace-write", Engines: []string{"codex"}, Sandbox: "workspace-write",
			Turns: []Turn{{Text: "running", Bash: []string{"mkdir -p .git && touch ran_1",
				"echo x > /var/tmp/dsh-differential-outside && rm /var/tmp/dsh-differential-outside && touch ran_2; echo y > .git/config && touch ran_3; touch ran_4"}}, {Text: "finished"}},
			Hooks: []Hook{h(O, "exit 0")}},
		// A turn that ends on a model error (HTTP 400): StopFailure runs instead of Stop, its
		// output is ignored; the matcher is the error kind. Claude Code starts a StopFailure
		// hook without waiting for it as its print-mode shutdown begins, and the shutdown
		// sometimes kills the hook before it ends (its debug log: "completed with status
		// 1"), so the engine runs again until it ran to its end; the SessionEnd hook waits
		// (up to 3 s) for its mark, since Claude Code exits once SessionEnd's hooks end.
		{Name: "stop/failure", Engines: []string{"claude"}, Turns: []Turn{{Fail: true}}, EngineUntil: "StopFailure-1",
			Hooks: []Hook{h("StopFailure", failed+js(`{"decision":"block","reason":"ignored"}`)), h(S, "exit 0"), awaitFailed}},
		// HTTP 422 answered as 400 (the engine withdraws ToolSearch alike; a 403 it sends
		// once), and a model without the tool search, whose failing request is sent once.
		{Name: "stop/failure-422", Engines: []string{"claude"}, Turns: []Turn{{Fail: true, FailStatus: 422}}, EngineUntil: "StopFailure-1",
			Hooks: []Hook{h("StopFailure", failed+"exit 0"), awaitFailed}},
		{Name: "stop/failure-no-search", Engines: []string{"claude"}, Model: "claude-3-7-sonnet-20250219", Turns: []Turn{{Fail: true}}, EngineUntil: "StopFailure-1",
			Hooks: []Hook{h("StopFailure", failed+"exit 0"), awaitFailed}},
		{Name: "stop/failure-after-tool", Engines: []string{"claude"}, Turns: []Turn{oneCall[0], {Fail: true}}, EngineUntil: "StopFailure-1",
			Hooks: []Hook{{Event: "StopFailure", Matcher: "unknown", Script: failed + "exit 0"}, {Event: "StopFailure", Matcher: "rate_limit", Script: failed + "exit 0"},
				h(S, "exit 0"), awaitFailed}},

		ups("exit0", h(U, "exit 0")),
		ups("exit1", h(U, "echo 'prompt trouble' >&2; exit 1")),
		ups("exit2", h(U, "echo 'prompt rejected' >&2; exit 2")),
		ups("block", h(U, js(`{"decision":"block","reason":"no prompts today"}`))),
		ups("context", h(U, js(`{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"prompt context"}}`))),
		ups("plain-stdout", h(U, "echo 'plain prompt words'")),
		ups("continue-false", h(U, js(`{"continue":false,"stopReason":"prompt halted"}`))),
		ups("invalid-json", h(U, "echo '{\"decision\": '")),
		ups("timeout", Hook{Event: U, Script: "sleep 4", Timeout: 1}),
		ups("two-contexts", h(U, "echo 'first words'"), h(U, js(`{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"second context"}}`))),

		ss("exit0", h(SS, "exit 0")),
		{Name: "session/env-file", Engines: []string{"claude"}, Turns: []Turn{{Text: "running", Bash: []string{"touch ran_$DIFF_VAR"}}, {Text: "finished"}},
			Hooks: []Hook{h(SS, `[ -n "$CLAUDE_ENV_FILE" ] && echo 'export DIFF_VAR=from_env_file' >> "$CLAUDE_ENV_FILE"; exit 0`)}},
		ss("exit1", h(SS, "echo 'session trouble' >&2; exit 1")),
		ss("exit2", h(SS, "echo 'session exit2' >&2; exit 2")),
		ss("context", h(SS, js(`{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"session context"}}`))),
		ss("plain-stdout", h(SS, "echo 'plain session words'")),
		ss("invalid-json", h(SS, "echo '{\"decision\": '")),
		// Plugins: a Stop loop in the shape of the official Ralph loop (it reads the last
		// assistant message from the transcript and a state file, and blocks with the prompt
		// until the model writes the promise), a rule engine on several events, a guard
		// that warns once per session.
		{Name: "plugin/ralph-loop", Engines: []string{"claude"}, Plugin: true, Hooks: []Hook{h(S, ralphStop)},
			Turns: []Turn{{Text: "working 1"}, {Text: "working 2", Bash: []string{"touch ran_1"}}, {Text: "working 3"}, {Text: "all done <promise>DONE</promise>"}}},
		{Name: "plugin/rule-engine", Engines: []string{"claude"}, Plugin: true, Turns: oneCall,
			Hooks: []Hook{h(U, ruleEngine), h(P, ruleEngine), h(O, ruleEngine), h(S, ruleEngine)}},
		{Name: "plugin/warn-once", Engines: []string{"claude"}, Plugin: true, Turns: twoCalls,
			Hooks: []Hook{h(P, once("warned", js(`{"hookSpecificOutput":{"hookEventName":"PreToolUse","additionalContext":"security reminder: review commands"}}`)))}},
		// Settings: the user, project and local files all load and their hooks all run.
		{Name: "settings/hierarchy", Engines: []string{"claude"}, Sources: true, Turns: oneCall, Hooks: []Hook{
			{Event: P, Source: "user", Script: js(`{"hookSpecificOutput":{"hookEventName":"PreToolUse","additionalContext":"from user settings"}}`)},
			{Event: O, Source: "project", Script: js(`{"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"from project settings"}}`)},
			{Event: S, Source: "local", Script: once("s", js(`{"decision":"block","reason":"from local settings"}`))},
			h(U, "exit 0"),
		}},
		// Settings: disableAllHooks turns every hook off.
		{Name: "settings/disable-all", Engines: []string{"claude"}, DisableAll: true, Turns: oneCall,
			Hooks: []Hook{h(P, "echo no >&2; exit 2"), h(S, "exit 0")}},
		{Name: "session/matcher-startup", Turns: oneCall, Hooks: []Hook{{Event: SS, Matcher: "startup", Script: "echo 'startup words'"}}},

		// PermissionRequest answers a call that needs approval (AskPermission: the engines'
		// headless ask), before anyone is asked; PreToolUse and PostToolUse run around it.
		perm("allow", h(PR, js(`{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow"}}}`)), h(P, "exit 0"), h(O, "exit 0")),
		perm("deny", h(PR, js(`{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny","message":"no way"}}}`)), h(O, "exit 0")),
		perm("deny-noreason", h(PR, js(`{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny"}}}`))),
		perm("exit2", h(PR, "echo 'no via exit 2' >&2; exit 2")),
		perm("allow-and-deny", h(PR, js(`{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow"}}}`)),
			h(PR, "sleep 1; "+js(`{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny","message":"second no"}}}`))),
		perm("matcher-bash", Hook{Event: PR, Matcher: "Bash", Script: js(`{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow"}}}`)}),
		// Claude Code only: interrupt ends the turn (Codex makes the hook failed and asks
		// its automatic reviewer, a model call the mock cannot answer).
		{Name: "perm/interrupt", Engines: []string{"claude"}, AskPermission: true, Turns: escalated,
			Hooks: []Hook{h(PR, js(`{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny","message":"stop now","interrupt":true}}}`)), h(S, "exit 0")}},
		// A PreToolUse ask, headless (no AskPermission): Claude Code denies it with the
		// reason and runs no PermissionRequest.
		{Name: "perm/pre-ask", Engines: []string{"claude"}, Turns: oneCall, Hooks: []Hook{
			h(P, js(`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask","permissionDecisionReason":"please confirm"}}`)),
			h(PR, js(`{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow"}}}`))}},

		// PostToolUseFailure (Claude Code): a failing command; PostToolUse fires for
		// successes only.
		{Name: "failure/context", Engines: []string{"claude"}, Turns: failing, Hooks: []Hook{
			h(PF, js(`{"hookSpecificOutput":{"hookEventName":"PostToolUseFailure","additionalContext":"failure context"}}`)), h(O, "exit 0")}},
		{Name: "failure/success", Engines: []string{"claude"}, Turns: oneCall, Hooks: []Hook{h(PF, "exit 0"), h(O, "exit 0")}},
		{Name: "failure/denied", Engines: []string{"claude"}, Turns: oneCall, Hooks: []Hook{h(P, js(denyJSON)), h(PF, "exit 0")}},

		// Notification (Claude Code) observes prompts to a person: headless, none.
		{Name: "notification/permission-prompt", Engines: []string{"claude"}, AskPermission: true, Turns: oneCall, Hooks: []Hook{
			{Event: N, Matcher: "permission_prompt", Script: "exit 0"},
			h(PR, js(`{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow"}}}`))}},
		{Name: "notification/any", Engines: []string{"claude"}, AskPermission: true, Turns: oneCall, Hooks: []Hook{h(N, "exit 0"), h(PR, "exit 0")}},
	}
	cs = append(cs, compactionCases()...)
	cs = append(cs, handlerCases()...)
	cs = append(cs, httpCases()...)
	cs = append(cs, eventCases()...)
	cs = append(cs, realCases()...)
	cs = append(cs, setupCases()...)
	cs = append(cs, promptCases()...)
	cs = append(cs, handlerTypeCases()...)
	cs = append(cs, channelCases()...)
	cs = append(cs, toolCases()...)
	cs = append(cs, subagentCases()...)
	cs = append(cs, permissionCases()...)
	cs = append(cs, codexToolCases()...)
	cs = append(cs, codexSubagentCases()...)
	cs = append(cs, codexMCPCases()...)
	cs = append(cs, geminiSubagentCases()...)
	cs = append(cs, geminiPolicyCases()...)
	cs = append(cs, codexCatalogCases()...)
	return append(cs, geminiCases()...)
}

// compactionCases are the cases of compaction (PreCompact, PostCompact, SessionStart with
// source compact) and of the session's end (SessionEnd). Automatic compaction: a response
// reports BigUsage input tokens under a small window (Case.AutoCompact), or a request fails
// as over the context window (Turn.Overflow). Manual compaction: a continued run whose
// prompt is "/compact [instructions]" (Claude Code only: codex exec sends "/compact" to
// the model as a prompt; its /compact is a TUI command).
func compactionCases() []Case {
	const PC, PO, SS, SE = "PreCompact", "PostCompact", "SessionStart", "SessionEnd"
	claude := []string{"claude"}
	// The first command prints 300 lines, so that the history is larger than a summary:
	// dsh refuses a summary that does not shrink what it replaces.
	const long = "touch ran_1; seq 1 300"
	// Automatic compaction comes after two steps: dsh keeps the newest exchange verbatim
	// after the checkpoint, so there must be an older one to summarize.
	second := Turn{Text: "running more", Bash: []string{"touch ran_2; echo out2"}}
	bigSecond := second
	bigSecond.InputTokens = BigUsage
	big := []Turn{{Text: "running", Bash: []string{long}}, bigSecond, {Text: "finished"}}
	overflow := []Turn{{Text: "running", Bash: []string{long}}, second, {Overflow: true}, {Text: "finished"}}
	longCall := []Turn{{Text: "running", Bash: []string{long}}, {Text: "finished"}}
	manual := []string{"/compact keep codename HERON", "Next task."}
	auto := func(name string, hooks ...Hook) Case {
		return Case{Name: "compact/auto-" + name, AutoCompact: true, Turns: big, Hooks: hooks}
	}
	man := func(name string, hooks ...Hook) Case {
		return Case{Name: "compact/manual-" + name, Engines: claude, Prompts: manual, Turns: longCall, Hooks: hooks}
	}
	all := func(pre string) []Hook { return []Hook{h(PC, pre), h(PO, "exit 0"), h(SS, "exit 0")} }
	return []Case{
		auto("exit0", all("exit 0")...),
		auto("matcher", Hook{Event: PC, Matcher: "manual", Script: "exit 0"}, Hook{Event: PC, Matcher: "auto", Script: "exit 0"},
			Hook{Event: SS, Matcher: "compact", Script: "exit 0"}),
		auto("pre-plain-stdout", h(PC, "echo 'keep codename OSPREY'")),
		auto("pre-exit2", h(PC, "echo 'not now' >&2; exit 2"), h(PO, "exit 0")),
		auto("pre-block", h(PC, js(`{"decision":"block","reason":"not now"}`)), h(PO, "exit 0")),
		auto("pre-continue-false", h(PC, js(`{"continue":false,"stopReason":"no compaction"}`)), h(PO, "exit 0")),
		auto("pre-system-message", h(PC, js(`{"systemMessage":"compacting now"}`)), h(PO, "exit 0")),
		auto("post-context", h(PO, js(`{"hookSpecificOutput":{"hookEventName":"PostCompact","additionalContext":"post compact context"}}`))),
		auto("post-continue-false", h(PO, js(`{"continue":false,"stopReason":"stop after compaction"}`))),
		auto("post-plain-stdout", h(PO, "echo 'plain post compact words'")),
		auto("post-system-message", h(PO, js(`{"systemMessage":"compacted"}`))),
		auto("session-start-context", Hook{Event: SS, Matcher: "compact", Script: js(`{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"restored after compact"}}`)}),
		{Name: "compact/overflow", Turns: overflow, Hooks: all("exit 0")},
		// After a compaction the engine loads its instruction files again.
		{Name: "compact/auto-instructions", Engines: claude, AutoCompact: true, Turns: big, Files: map[string]string{"CLAUDE.md": "Rule ONE.\n@two.md\n", "two.md": "Rule TWO.\n"},
			Concurrent: []string{"InstructionsLoaded-1"}, Hooks: []Hook{h("InstructionsLoaded", "exit 0"), h(SS, "exit 0"), h(PO, "exit 0")}},
		{Name: "compact/manual-instructions", Engines: claude, Prompts: manual, Turns: longCall, Files: map[string]string{"CLAUDE.md": "Rule ONE.\n@two.md\n", "two.md": "Rule TWO.\n"},
			Concurrent: []string{"InstructionsLoaded-1"}, Hooks: []Hook{h("InstructionsLoaded", "exit 0"), h(SS, "exit 0"), h(PO, "exit 0")}},
		man("exit0", all("exit 0")...),
		man("matcher", Hook{Event: PC, Matcher: "auto", Script: "exit 0"}, Hook{Event: PC, Matcher: "manual", Script: "exit 0"}),
		man("pre-plain-stdout", h(PC, "echo 'keep codename OSPREY'")),
		man("pre-exit2", h(PC, "echo 'not now' >&2; exit 2"), h(PO, "exit 0"), h(SS, "exit 0")),
		man("pre-block", h(PC, js(`{"decision":"block","reason":"not now"}`)), h(PO, "exit 0")),
		man("post-context", h(PO, js(`{"hookSpecificOutput":{"hookEventName":"PostCompact","additionalContext":"post compact context"}}`))),
		man("session-start-context", Hook{Event: SS, Matcher: "compact", Script: js(`{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"restored after compact"}}`)}),
		{Name: "session-end/exit0", Engines: claude, Turns: oneCall, Hooks: []Hook{h(SE, "exit 0")}},
		{Name: "session-end/matcher", Engines: claude, Turns: oneCall, Hooks: []Hook{
			{Event: SE, Matcher: "other", Script: "exit 0"}, {Event: SE, Matcher: "clear", Script: "exit 0"}}},
		{Name: "session-end/two-runs", Engines: claude, Turns: oneCall, Prompts: []string{"Next task."}, Hooks: []Hook{h(SE, "exit 0"), h(SS, "exit 0")}},
		{Name: "session-end/output-ignored", Engines: claude, Turns: oneCall, Hooks: []Hook{
			h(SE, js(`{"decision":"block","reason":"no","continue":false,"systemMessage":"bye"}`)), h(SE, "echo 'end words' >&2; exit 2")}},
		// The engine gives SessionEnd hooks a shared budget of about 1.5 s: a slow hook is
		// killed before it touches its marker.
		{Name: "session-end/budget", Engines: claude, Turns: oneCall, Hooks: []Hook{h(SE, "sleep 3; touch ran_late")}},
	}
}

// escalated is oneCall with the call asking Codex for unsandboxed execution (Turn.Escalate).
var escalated = []Turn{{Text: "running", Bash: []string{"touch ran_1; echo out1"}, Escalate: true}, {Text: "finished"}}

// failing is a turn whose command fails (exit 3, after creating ran_1).
var failing = []Turn{{Text: "running", Bash: []string{"touch ran_1; echo bad >&2; exit 3"}}, {Text: "finished"}}

// ralphStop is a Stop hook in the shape of the official Ralph loop's: the state file
// (iteration, max) lives in the workspace; the last assistant message comes from the
// transcript at transcript_path (Claude Code's JSONL); the promise ends the loop. It waits
// a second first: Claude Code writes its transcript asynchronously and, under load, the
// last message may not be there yet when Stop hooks run (see stop/transcript-now).
const ralphStop = `input=$(cat)
sleep 1
state=.ralph-state
[ -f "$state" ] || echo 0 > "$state"
n=$(cat "$state")
[ "$n" -ge 10 ] && exit 0
transcript=$(printf '%s' "$input" | sed 's/.*"transcript_path":"\([^"]*\)".*/\1/')
last=$(grep '"type":"assistant"' "$transcript" | tail -1)
case "$last" in *'<promise>DONE</promise>'*) rm -f "$state"; exit 0 ;; esac
echo $((n+1)) > "$state"
printf '%s\n' '{"decision":"block","reason":"Continue the task. Say <promise>DONE</promise> when it is done."}'
`

// ruleEngine is one script registered on several events that decides by the event
// name, as rule-engine plugins do: it denies rm, adds a context after tools, and lets the
// rest pass.
const ruleEngine = `input=$(cat)
case "$input" in
*'"hook_event_name":"PreToolUse"'*'rm -rf'*) printf '%s\n' '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"rule: no rm -rf"}}' ;;
*'"hook_event_name":"PostToolUse"'*) printf '%s\n' '{"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"rule: tool ran"}}' ;;
*'"hook_event_name":"UserPromptSubmit"'*) printf '%s\n' '{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"rule: be careful"}}' ;;
esac
exit 0
`

// transcriptLast touches ran_transcript_ok when the last assistant line of the transcript
// at transcript_path holds the text "finished".
const transcriptLast = `t=$(sed 's/.*"transcript_path":"\([^"]*\)".*/\1/')
grep '"role":"assistant"' "$t" | tail -1 | grep -q '"text":"finished"' && touch ran_transcript_ok; exit 0`

// DshAutoCompactArgs are the dsh run flags of Case.AutoCompact.
var DshAutoCompactArgs = []string{"--context-window", DshContextWindow}

// httpCases are the cases of http hooks (Claude Code): each hook posts to the run's
// HookServer on 127.0.0.1, which records the request as a run (its body as the stdin, its
// headers, the status it answered as the exit) and answers as the case says.
func httpCases() []Case {
	const P, O, U = "PreToolUse", "PostToolUse", "UserPromptSubmit"
	claude := []string{"claude"}
	web := func(name string, hooks ...Hook) Case {
		return Case{Name: "http/" + name, Engines: claude, Hooks: hooks, Turns: oneCall}
	}
	denyJSON := `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"denied by policy"}}`
	return []Case{
		web("deny", Hook{Event: P, HTTP: &HTTPAnswer{Body: denyJSON}}),
		web("allow-context", Hook{Event: P, HTTP: &HTTPAnswer{Body: `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","additionalContext":"http context"}}`}}),
		web("500", Hook{Event: P, HTTP: &HTTPAnswer{Status: 500, Body: denyJSON}}),
		web("non-json", Hook{Event: P, HTTP: &HTTPAnswer{Body: "denied, in words"}}),
		web("empty", Hook{Event: P, HTTP: &HTTPAnswer{}}),
		web("redirect", Hook{Event: P, HTTP: &HTTPAnswer{Status: 302, Body: denyJSON}}),
		web("headers", Hook{Event: P, HTTP: &HTTPAnswer{Body: `{}`, AllowedEnvVars: []string{"LANG"},
			Headers: map[string]string{"X-Hook-Lang": "$LANG", "X-Hook-Term": "${TERM}", "X-Hook-Both": "lang=${LANG};term=$TERM;lower=$lang"}}}),
		web("slow", Hook{Event: P, Timeout: 1, HTTP: &HTTPAnswer{Delay: 4 * time.Second, Body: denyJSON}}),
		web("prompt-context", Hook{Event: U, HTTP: &HTTPAnswer{Body: `{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"http prompt context"}}`}}),
		web("prompt-plain", Hook{Event: U, HTTP: &HTTPAnswer{Body: "plain prompt words"}}),
		web("post-block", Hook{Event: O, HTTP: &HTTPAnswer{Body: `{"decision":"block","reason":"http post says no"}`}}),
		web("beside-command", Hook{Event: P, HTTP: &HTTPAnswer{Body: `{"hookSpecificOutput":{"hookEventName":"PreToolUse","additionalContext":"from http"}}`}},
			h(P, js(denyJSON))),
		{Name: "http/url-not-allowed", Engines: claude, Turns: oneCall, Settings: map[string]any{"allowedHttpHookUrls": []string{"https://hooks.example.com/*"}},
			Hooks: []Hook{{Event: P, HTTP: &HTTPAnswer{Body: denyJSON}}}},
		{Name: "http/url-allowed", Engines: claude, Turns: oneCall, Settings: map[string]any{"allowedHttpHookUrls": []string{"http://127.0.0.1:*/*"}},
			Hooks: []Hook{{Event: P, HTTP: &HTTPAnswer{Body: denyJSON}}}},
	}
}

// handlerCases are the cases of Claude Code's handler options ("if", "once", "async",
// "asyncRewake", "onFailure") and of the newer decision fields (PreToolUse "defer",
// PostToolUse "updatedToolOutput" and "updatedMCPToolOutput", "suppressOutput").
func handlerCases() []Case {
	const P, O, U, S = "PreToolUse", "PostToolUse", "UserPromptSubmit", "Stop"
	claude := []string{"claude"}
	cond := func(event, rule, script string) Hook {
		return Hook{Event: event, Script: script, Fields: map[string]any{"if": rule}}
	}
	with := func(event, script string, fields map[string]any) Hook {
		return Hook{Event: event, Script: script, Fields: fields}
	}
	c := func(name string, turns []Turn, hooks ...Hook) Case {
		return Case{Name: name, Engines: claude, Turns: turns, Hooks: hooks}
	}
	user := func(k Case) Case {
		k.Sources = true
		for i := range k.Hooks {
			k.Hooks[i].Source = "user"
		}
		return k
	}
	probe := func(cmds ...string) []Turn { return []Turn{{Text: "running", Bash: cmds}, {Text: "finished"}} }
	// Three rules on each command (Bash(touch *), Bash(git *), Bash(touch:*)): which hooks
	// run shows how the engine splits the command (five calls a case: with more, Claude
	// Code adds a reminder about its task tools).
	rules := func(name string, turns []Turn) Case {
		return c(name, turns, cond(P, "Bash(touch *)", "exit 0"), cond(P, "Bash(git *)", "exit 0"), cond(P, "Bash(touch:*)", "exit 0"))
	}
	return []Case{
		rules("if/split-lists", probe("touch ran_1", "echo a && touch ran_2", "echo hi | touch ran_3", "echo x; touch ran_4 # note", "git status")),
		rules("if/split-words", probe("FOO=1 touch ran_1", "touch    ran_2", "(touch ran_3)", "echo ran_4 | xargs touch", "bash -c 'touch ran_5'")),
		rules("if/split-substitutions", probe("true $(touch ran_1)", "true `touch ran_2`", "echo $((1+2))")),
		rules("if/split-fallback", probe("for f in ran_1; do touch $f; done", "{ touch ran_2; }")),
		c("if/match", oneCall, cond(P, "Bash(touch *)", "echo 'if matched' >&2; exit 2")),
		c("if/miss", oneCall, cond(P, "Bash(git *)", "echo 'if matched' >&2; exit 2")),
		c("if/compound", rawCalls, cond(P, "Bash(echo *)", "echo 'if matched' >&2; exit 2")),
		c("if/unparsable", []Turn{{Text: "running", Bash: []string{"for f in ran_1; do touch $f; done"}}, {Text: "finished"}},
			cond(P, "Bash(git *)", "echo 'ran: the command cannot be split' >&2; exit 2")),
		// An "if" whose hook never runs, in the user's settings (a file dsh finds on its
		// own, where a bad entry is skipped with a diagnostic: a file named on dsh run's
		// command line is refused instead, which cli's hookif script checks).
		user(c("if/malformed", oneCall, cond(P, "Bash(git *", "echo 'ran' >&2; exit 2"), h(O, "exit 0"))),
		user(c("if/not-string", oneCall, with(P, "echo 'ran' >&2; exit 2", map[string]any{"if": 5}), h(O, "exit 0"))),
		user(c("if/non-tool", oneCall, cond(U, "Bash", "exit 0"), cond(S, "Bash", "exit 0"), h(O, "exit 0"))),
		c("if/bare-tool", oneCall, cond(P, "Bash", "exit 0"), cond(P, "Read", "exit 0"), cond(O, "Bash(*)", "exit 0")),
		{Name: "if/file-tools", Engines: claude, Hooks: []Hook{
			cond(P, "Write(*.txt)", "exit 0"), cond(P, "Read(./notes.txt)", "exit 0"), cond(P, "Edit(src/**)", "exit 0"),
			cond(P, "Read(//tmp/**)", "exit 0"), cond(P, "Edit(notes.txt)", "exit 0"), cond(P, "Write(/notes.txt)", "exit 0")},
			Turns: []Turn{
				{Text: "writing", Calls: []Call{{Name: "Write", Input: map[string]any{"file_path": "{{ws}}/notes.txt", "content": "alpha\nbeta\n"}}}},
				{Text: "reading", Calls: []Call{{Name: "Read", Input: map[string]any{"file_path": "{{ws}}/notes.txt"}}}},
				{Text: "editing", Calls: []Call{{Name: "Edit", Input: map[string]any{"file_path": "{{ws}}/notes.txt", "old_string": "beta", "new_string": "gamma"}}}},
				{Text: "finished"}}},
		c("handler/once", twoCalls, with(P, "exit 0", map[string]any{"once": true})),
		c("handler/async", oneCall, with(P, "echo 'async no' >&2; exit 2", map[string]any{"async": true}), h(O, "exit 0")),
		c("handler/async-rewake-exit0", oneCall, with(O, "sleep 1; echo 'all fine'; exit 0", map[string]any{"asyncRewake": true}), h(S, "exit 0")),
		c("handler/async-rewake-pre", oneCall, with(P, "sleep 1; echo 'pre wake' >&2; exit 2", map[string]any{"asyncRewake": true}), h(S, "exit 0")),
		// An async hook still running when the run ends is killed (no exit recorded). It
		// runs after the first call only (its "if"); the second gives it a second to start.
		c("handler/async-slow", []Turn{oneCall[0], {Text: "waiting", Bash: []string{"sleep 1; touch ran_2"}}, {Text: "finished"}},
			with(O, "sleep 4; echo 'late' >&2; exit 2", map[string]any{"async": true, "if": "Bash(touch ran_1*)"})),
		c("handler/async-rewake", oneCall, with(O, "sleep 1; echo 'wake up, model' >&2; exit 2", map[string]any{"asyncRewake": true}), h(S, "exit 0")),
		c("handler/on-failure-block", oneCall, with(P, "echo 'broken guard' >&2; exit 1", map[string]any{"onFailure": "block"})),
		c("handler/on-failure-timeout", oneCall, Hook{Event: P, Script: "sleep 4", Timeout: 1, Fields: map[string]any{"onFailure": "block"}}),
		c("pre/defer", oneCall, h(P, js(`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"defer","permissionDecisionReason":"later"}}`)), h(O, "exit 0"), h(S, "exit 0")),
		c("post/updated-output", oneCall, h(O, js(`{"hookSpecificOutput":{"hookEventName":"PostToolUse","updatedToolOutput":"replaced by hook"}}`))),
		c("post/updated-output-object", oneCall, h(O, js(`{"hookSpecificOutput":{"hookEventName":"PostToolUse","updatedToolOutput":{"stdout":"replaced stdout","stderr":"","interrupted":false,"isImage":false}}}`))),
		c("post/updated-mcp-output", oneCall, h(O, js(`{"hookSpecificOutput":{"hookEventName":"PostToolUse","updatedMCPToolOutput":"mcp replacement"}}`))),
		c("post/suppress-output", oneCall, h(O, js(`{"suppressOutput":true,"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"post context"}}`))),
	}
}

// handlerTypeCases are the cases of the handler types besides command and http: mcp_tool
// hooks (Claude Code and Codex) calling the run's MCP hook server, prompt hooks (Claude
// Code) whose model request the mock answers with Case.HookModel, and agent hooks.
func handlerTypeCases() []Case {
	const P, U = "PreToolUse", "UserPromptSubmit"
	claude := []string{"claude"}
	denyJSON := `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"mcp says no"}}`
	mcpHook := func(event string, a MCPAnswer) Hook { return Hook{Event: event, MCP: &a} }
	cmdPath := map[string]any{"cmd": "${tool_input.command}", "event": "${hook_event_name}", "missing": "${tool_input.nothing}", "whole": "${tool_input}"}
	prompt := func(name, answer string, hooks ...Hook) Case {
		return Case{Name: "handler/prompt-" + name, Engines: claude, Hooks: hooks, Turns: oneCall, HookModel: answer}
	}
	return []Case{
		{Name: "handler/mcp-allow", Engines: claude, Turns: oneCall, Hooks: []Hook{mcpHook(P, MCPAnswer{Answer: "", Input: cmdPath})}},
		{Name: "handler/mcp-deny", Turns: oneCall, Hooks: []Hook{mcpHook(P, MCPAnswer{Answer: denyJSON, Input: map[string]any{"cmd": "${tool_input.command}"}})}},
		{Name: "handler/mcp-not-mounted", Turns: oneCall, Hooks: []Hook{mcpHook(P, MCPAnswer{Server: "nope", Answer: denyJSON})}},
		{Name: "handler/mcp-not-mounted-block", Engines: claude, Turns: oneCall, Hooks: []Hook{mcpHook(P, MCPAnswer{Server: "nope", Answer: denyJSON, OnFailure: "block"})}},
		{Name: "handler/mcp-is-error", Engines: claude, Turns: oneCall, Hooks: []Hook{mcpHook(P, MCPAnswer{Error: true, Answer: denyJSON})}},
		{Name: "handler/mcp-prompt-plain", Engines: claude, Turns: oneCall, Hooks: []Hook{mcpHook(U, MCPAnswer{Answer: "mcp plain words"})}},
		prompt("ok", `{"ok": true, "reason": "fine"}`, Hook{Event: P, Prompt: "Is this command safe? $ARGUMENTS"}),
		prompt("not-ok", `{"ok": false, "reason": "the model says no"}`, Hook{Event: P, Prompt: "Is this command safe? $ARGUMENTS"}),
		prompt("not-ok-continue", `{"ok": false, "reason": "the model says no"}`, Hook{Event: P, Prompt: "Is this command safe? $ARGUMENTS", ContinueOnBlock: true}),
		prompt("prose", "Yes, that looks safe to me.", Hook{Event: P, Prompt: "Is this command safe?"}),
		{Name: "handler/prompt-timeout", Engines: claude, Turns: oneCall, HookModel: `{"ok": false, "reason": "too late"}`, HookModelDelay: 4 * time.Second,
			Hooks: []Hook{{Event: P, Prompt: "Is this command safe? $ARGUMENTS", Timeout: 1}}},
		{Name: "handler/prompt-model-error", Engines: claude, Turns: oneCall, HookModelFail: true,
			Hooks: []Hook{{Event: P, Prompt: "Is this command safe? $ARGUMENTS"}}},
		// At Stop the engine judges the whole conversation with a stop-condition prompt.
		prompt("stop-ok", `{"ok": true, "reason": "the work is done"}`, Hook{Event: "Stop", Prompt: "Is the work done? $ARGUMENTS"}),
		prompt("stop-not-ok", `{"ok": false, "reason": "the tests were not run"}`, Hook{Event: "Stop", Prompt: "Is the work done? $ARGUMENTS"}),
		prompt("stop-impossible", `{"ok": false, "reason": "it cannot be done", "impossible": true}`, Hook{Event: "Stop", Prompt: "Is the work done? $ARGUMENTS"}),
		{Name: "handler/mcp-timeout", Engines: claude, Turns: oneCall, Hooks: []Hook{{Event: P, Timeout: 1, MCP: &MCPAnswer{Answer: denyJSON, Sleep: 4 * time.Second}}}},
	}
}
