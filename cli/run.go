package cli

import (
	"context"
	_ "embed"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/dshkit/dsh/bridges/dialect"
	"github.com/dshkit/dsh/bridges/dialects"
	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/internal/clix"
	"github.com/dshkit/dsh/runner"
	"github.com/dshkit/dsh/runtime/llm/provider"
	"github.com/dshkit/dsh/runtime/loop"
	"github.com/dshkit/dsh/runtime/sandbox"
	"github.com/dshkit/dsh/runtime/session"
	"github.com/dshkit/dsh/runtime/session/pgstore"
)

func init() {
	commands["run"] = command{summary: "run one headless session (dsh run --demo for a bundled one)", run: runSession}
	commands["log"] = command{summary: "pretty-print a session log (JSONL or PostgreSQL)", run: runLog}
}

//go:embed demo/demo.json
var demoScript []byte

// demoPrompt is the prompt of the bundled demo session.
const demoPrompt = "Set up the workspace: a greeting file, some notes, and clean out the build directory."

const runUsage = `usage: dsh run [--demo] [--model PROVIDER:MODEL] [--workspace DIR]
               [--log FILE | --log postgres://... [--session ID] [--takeover OWNER | --force]]
               [--resume ID | --continue | --no-session-persistence]
               [--hooks FILE] [--plugin-dir DIR]... [--dialect claude-code|codex|gemini] [--project-dir DIR]
               [--trust] [--transcript FILE] [--stop-cap N] [--canonical] [--revalidate-after-rewrite]
               [--permission-mode MODE] [--allowedTools RULES]... [--disallowedTools RULES]...
               [--mcp-config FILE]
               [--system-prompt TEXT] [--append-system-prompt TEXT] [--no-instructions]
               [--init | --init-only | --maintenance]
               [--context-window N] [--compact-threshold R] [--max-response-bytes N] [--env-deny PATTERN]...
               [--sandbox MODE [--add-dir DIR]... [--sandbox-network] [--sandbox-hooks]]
               [--output-format text|json|stream-json|events] [--verbose] [--max-turns N] [--] PROMPT...|-

Runs one session headless, as claude -p does: the prompt is one turn of the agent loop
with the built-in tools Bash, Read, Write and Edit. The final answer goes to stdout; a
readable transcript goes to stderr. A PROMPT of - (or no PROMPT and a pipe on stdin) is
read from stdin; a PROMPT with a pipe on stdin is joined with what it holds as the
dialect's engine joins them (echo data | claude -p "summarize" sends "summarize\ndata\n";
codex: the PROMPT, a blank line, then stdin between <stdin> tags; gemini: stdin, a
blank line, the PROMPT), waiting 3 s for its first byte, at most 10 MiB. Flags may come
before or after the PROMPT, as claude -p takes them (-- ends the flags, for a prompt that
holds a flag's name).

What is confined: Read, Write and Edit refuse any path outside the workspace: every path
is opened through os.Root, so neither "..", an absolute path nor a symlink (even one
swapped in mid-call) leads outside, and only regular files are opened (a FIFO, device or
socket is refused). Read streams the file: at most 256 KiB of text per call (a larger whole file
needs offset and limit), lines cut at 2000 characters with a note.
Bash is confined by --sandbox (below), workspace-write by default, as under Codex: its
commands read what you can, but write only the workspace, and reach no network; with
--sandbox danger-full-access they run with your user's rights and can read, write and
delete anything you can. Hooks and MCP servers are never sandboxed: they run with your
rights, as in Claude Code.

  mode                read                 write                          network  processes
  read-only           all you can read     nowhere                        off      512, own /proc
  workspace-write     all you can read     the workspace, a private       off      512, own /proc
                      (~/.ssh included)    TMPDIR, each --add-dir; never
                                           .git .dsh .claude .codex
  danger-full-access  all you can          all you can                    on       unbounded

  --demo               run the bundled scripted session in a temporary workspace, with two
                       example native plugins (a guard denying rm -rf, a context after edits)
  --model PROVIDER:MODEL  the model (see "Use a real model" below); without it, the one
                       provider whose key is set: anthropic (ANTHROPIC_API_KEY or
                       ANTHROPIC_AUTH_TOKEN; the model of ANTHROPIC_MODEL, as Claude Code
                       reads it, else claude-sonnet-4-5), openai (OPENAI_API_KEY; gpt-5) or
                       gemini (GEMINI_API_KEY; gemini-2.5-pro); none or several: a usage error
                       anthropic:MODEL    the Anthropic Messages API
                       openai:MODEL       the OpenAI Responses API
                       openai-chat:MODEL  chat completions (OpenAI-compatible servers)
                       gemini:MODEL       the Gemini API
                       scripted:FILE      replay a scripted model ({"responses":[...]})
                       openai             openai-chat with the model of OPENAI_MODEL
  --workspace DIR      the workspace (default: the current directory; with --demo, a new
                       temporary directory, removed at exit)
  --resume ID, -r ID   go on with the session ID of the session store (or of a postgres
                       --log), as claude -p --resume does; it must exist
  --continue, -c       go on with the session of the workspace written last, in the session
                       store (or a postgres --log), as claude -p --continue does
  --no-session-persistence
                       keep the session log in memory only (claude -p's flag). Without it
                       and without --log, dsh run keeps every session (but --demo's) in the
                       session store, $XDG_STATE_HOME/dsh/sessions (else
                       ~/.local/state/dsh/sessions, mode 0700; where dsh acp keeps its
                       own), as ID.jsonl, as claude -p keeps its sessions
  --log FILE           append the session log to FILE (JSONL); an existing log is resumed.
                       A file that is not a session log, a symbolic link or a damaged log
                       is refused and left as it is (see dsh log --repair)
  --log postgres://USER:PASSWORD@HOST:PORT/DB
                       keep the session log in PostgreSQL instead (README, "The session log
                       on PostgreSQL"); what the URL leaves out comes from PGHOST, PGPORT,
                       PGUSER, PGPASSWORD, PGDATABASE and the other libpq variables
  --session ID         with a postgres --log: the session to resume, or to create when the
                       database does not hold it (default: a new id, printed on stderr)
  --takeover OWNER     with --session: take the session over from the writer OWNER (the
                       writer id a refusal names, host:pid by default) even though its lease
                       is live (it crashed, or is to be stopped); that writer's later appends
                       are refused. A session another writer holds is still refused, naming
                       it. Without --takeover a held session is refused until its holder
                       closes it or its lease expires (30 s after the holder stopped
                       renewing it)
  --force              with --session: take the session over whoever holds it. Neither flag
                       is access control: a database user who can write dsh_sessions can
                       take any lease (see the README's PostgreSQL section)
  --hooks FILE         run the Claude Code, Codex or Gemini CLI hooks of FILE (settings.json shape). FILE
                       fails closed: if it cannot be read or parsed, or names an event, group
                       or handler the bridge would skip, dsh run exits 1 naming it and runs
                       nothing (settings found on their own skip a bad entry with a warning);
                       an event of the engine dsh never fires (SubagentStop, ...) loads and
                       is reported once
  --plugin-dir DIR     load a Claude Code plugin's hooks (.claude-plugin/plugin.json and
                       hooks/hooks.json) as claude --plugin-dir does: CLAUDE_PLUGIN_ROOT is set
                       and substituted; repeatable
  --setting-sources S  also load these settings files, as claude --setting-sources: a comma
                       list of user (~/.claude/settings.json; Codex: $CODEX_HOME/hooks.json),
                       project (.claude/settings.json; Codex: .codex/hooks.json) and local
                       (.claude/settings.local.json) under --project-dir; project and local
                       are the project's own hook files, which load with --trust (and
                       --trust alone loads them). Default: none (only the files named)
  --transcript FILE    where to keep the transcript the hooks read at transcript_path, in the
                       engine's format: Claude Code's JSONL, a Codex rollout or a Gemini CLI
                       chat (default: next to the --log FILE, as FILE.transcript.jsonl,
                       FILE.rollout.jsonl or FILE.chat.jsonl, which a run continuing the
                       session goes on writing; without --log, in a private directory removed
                       when the session ends). Mode 0600. A symbolic link, or a non-empty
                       file that is not this session's transcript, is refused and left as it is
  --dialect D          the hooks' dialect: claude-code (default), codex or gemini
  --project-dir DIR    CLAUDE_PROJECT_DIR for the hooks (default: the workspace)
  --trust              trust the project for this run: load its own hook files
                       (.claude/settings.json and .claude/settings.local.json; Codex:
                       .codex/hooks.json), its .claude/commands and its .mcp.json; without
                       trust, their presence is reported once. dsh trust DIR trusts a
                       project for every run. claude-code loads the hook files and commands
                       without trust, as claude -p does (headless, Claude Code treats its
                       workspace as trusted); codex and gemini need it
  --system-prompt TEXT replace dsh's system prompt with TEXT (claude -p --system-prompt)
  --append-system-prompt TEXT
                       add TEXT at the end of the system prompt, after a blank line
                       (claude -p --append-system-prompt)
  --init, --init-only, --maintenance
                       as claude -p has them: before the session starts, run the Setup
                       hooks (trigger init, or maintenance); --init-only then ends the run
                       after the session-start hooks, with no turn and no PROMPT needed
  --no-instructions    read no instruction files. By default a new session reads those of
                       --dialect's engine, as it does, and places them before the first
                       prompt as it does: claude-code ~/.claude/CLAUDE.md, then CLAUDE.md,
                       .claude/CLAUDE.md and CLAUDE.local.md of each directory from / down
                       to the workspace, with their @path imports (5 hops, inside the
                       workspace); codex the workspace's AGENTS.md (32 KiB); gemini its
                       GEMINI.md. claude-code also expands a PROMPT "/name args" from
                       ~/.claude/commands/name.md, or with --trust the project's
                       .claude/commands/name.md ("/a:b" is a/b.md); any other is sent as is
  --mcp-config FILE    start the MCP servers of FILE (Claude Code's .mcp.json shape); their
                       tools are named mcp__<server>__<tool> (sanitised to 64 characters);
                       a result keeps at most 100,000 bytes, with a note
  --env-deny PATTERN   keep the variables whose names match PATTERN (a name or a glob such
                       as 'AWS_*' or '*_TOKEN') away from Bash, hooks and MCP servers, which
                       otherwise inherit dsh's whole environment; repeatable. A value set
                       explicitly (an MCP server's env in .mcp.json, the hooks' own
                       CLAUDE_PROJECT_DIR...) still goes. On Linux dsh run is always
                       non-dumpable before any tool, hook or MCP server starts, so that no
                       command reads them back through /proc/<dsh pid>/environ
  --canonical          write the hooks' words and the built-in tools' results for the model
                       in dsh's canonical form instead of the real engine's wording and
                       behaviour (docs/decisions/0004-bridges.md)
  --revalidate-after-rewrite
                       claude-code: when PreToolUse hooks rewrote a call's input
                       (updatedInput), run them again on the rewritten input; a deny then
                       denies, a second updatedInput is ignored
  --stop-cap N         how many times a Stop hook may continue one turn (0: never);
                       default as the dialect's engine: 8 for claude-code (or
                       CLAUDE_CODE_STOP_HOOK_BLOCK_CAP, 0 or less: none), none for codex,
                       100 for gemini
  --context-window N   the model's context window, in tokens: the session compacts (one
                       summarizing model call) before a step once the request reaches
                       --compact-threshold of it (default 0.8). Default: a known model's
                       window from dsh's table; 0 (or an unknown model): none, and only a
                       request the provider rejects as too long compacts
  --compact-threshold R  the share of the window at which to compact, in (0, 1]
  --max-response-bytes N
                       cap one model response's body at N bytes (default 64 MiB, 0: the
                       default): a response over it fails its call with RESPONSE_TOO_LARGE,
                       not retried, and the rest is not read. One server-sent event stays
                       capped at 16 MiB, one tool call's arguments at 16 MiB, the text,
                       reasoning and tool calls of one response at 16 MiB together, and its
                       content blocks and tool calls at 10,000
  --permission-mode M  what a call no permission rule decides needs (Claude Code's modes,
                       README "Permissions"): bypassPermissions (the default, unless a
                       settings file's permissions.defaultMode names another) runs it;
                       default asks for all but Read, Glob and Grep; acceptEdits also runs
                       Write and Edit; plan refuses Write and Edit; dontAsk refuses, in the
                       engine's words, what would ask. Headless, no one answers an ask: a
                       PermissionRequest hook (approval/answer) may allow or deny, else the
                       call is denied with Claude Code's words ("Claude requested
                       permissions to use Bash, but you haven't granted it yet."). The
                       hooks get it as permission_mode. Other dialects: default (every
                       call but Read asks) and bypassPermissions
  --allowedTools RULES, --disallowedTools RULES
                       allow and deny rules, as claude takes them: "Bash(git *)",
                       "Read(./src/**)", "Edit", "mcp__server__tool", several to a value
                       (comma or space separated), repeatable. They join the
                       permissions.allow/ask/deny of the settings files dsh reads (the
                       --hooks FILE, --setting-sources, and the project's .claude/settings.json
                       and .claude/settings.local.json, whose allow rules and defaultMode
                       load only with --trust). A deny rule wins over an ask rule, which wins
                       over an allow rule. A rule that does not parse stops the run, naming
                       its file and JSON path; every decision is logged (decision/recorded)

  --sandbox MODE       confine every Bash command (Landlock, user/PID/mount/network
                       namespaces, no_new_privs; Linux 6.2+): read-only, workspace-write
                       (the default) or danger-full-access (unconfined). A write the sandbox
                       stops fails with the shell's own error, which the model reads. Where
                       the system cannot confine (Windows, an older Linux kernel), the run
                       refuses to start, saying why: choose danger-full-access there. The
                       log records the mode (session/sandbox)
  --add-dir DIR        with --sandbox workspace-write: another directory Bash may write
                       (repeatable)
  --sandbox-network    with --sandbox read-only or workspace-write: let Bash reach the
                       network (off by default)
  --sandbox-hooks      run the command hooks under the same policy as Bash (by default they
                       run with your rights, as in Claude Code and Codex); MCP servers stay
                       unsandboxed

  --verbose            the transcript in full: also every session event it does not show
                       (as dsh log --raw prints it), and the informational log lines
  --output-format F    text (default): the final answer on stdout, its control characters
                       but newline and tab written out (ESC as \x1b), as in the transcript
                       on stderr; json: one object on stdout
                       with type "result", subtype (success, error_max_turns,
                       error_during_execution, interrupted), is_error, result, stop_reason,
                       error, session_id, log, num_turns, duration_ms and usage;
                       stream-json: under claude-code, the lines of claude -p
                       --output-format stream-json --verbose (a system/init line, an
                       assistant line per content block of each model message, a user line
                       per tool result, a subagent's tool_use and tool_result lines with
                       parent_tool_use_id; measured in Claude Code 2.1.328), then that
                       object; under codex and gemini, as events; events: every session
                       event as a JSON line, as the log records it, a subagent's events
                       too, each with "subagent": {agentId, parentCallId} first, then that
                       object (both with the exact text; a database URL's password, in log
                       or anywhere, is xxxxx)
  --max-turns N        end the turn before its model step N+1 (exit 1); 0: no limit

A PROMPT of "/compact [instructions]" compacts the session of --log now instead of
running a turn (the instructions guide the summary).

Use a real model: the credentials and endpoints come from the variables the engines read;
a missing key is a usage error naming it.
  anthropic:claude-sonnet-4-5   ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN), ANTHROPIC_BASE_URL
  openai:gpt-5                  OPENAI_API_KEY, OPENAI_BASE_URL
  openai-chat:llama3            OPENAI_BASE_URL (e.g. http://127.0.0.1:11434/v1 for ollama),
                                OPENAI_API_KEY (not needed with OPENAI_BASE_URL)
  gemini:gemini-2.5-pro         GEMINI_API_KEY, GOOGLE_GEMINI_BASE_URL
A rate limit, an overloaded provider or a server error is retried with exponential backoff
(the default agent/request-error listener, which a plugin may replace); each retry is said
on stderr ("dsh run: retrying in 4 s (attempt 2): 429 rate_limit: slow down"). The context window
of a known model comes from dsh's table; --context-window overrides it.


Exit status:
  0    the turn completed, or policy (a hook or plugin) blocked or halted it
  1    it ended in error (the model, auth, network), reached --max-turns, or could not
       run (an unreadable script, log or hooks file): one line on stderr
  2    a usage error
  130  SIGINT, 143 SIGTERM, 129 SIGHUP: the turn is cancelled, the hooks' and Bash's
       process groups and the MCP servers are reaped and the turn is closed in the log
       before dsh exits; a second signal ends dsh at once
  141  stdout or stderr was closed (dsh run | head): the run ends as on a signal, and
       its temporary directories are removed
`

// runOptions are the parsed flags of dsh run.
type runOptions struct {
	demo               bool
	model, workspace   string
	logFile, hooksFile string
	dialect            string
	projectDir         string
	trust              bool
	mcpConfig          string
	stopCap            int // -1: the dialect's default
	canonical          bool
	revalidate         bool
	pluginDirs         pluginDirs
	transcript         string
	settingSources     string
	maxResponseBytes   int64   // --max-response-bytes: provider.Limits.ResponseBytes (0: the default)
	contextWindow      int     // tokens; 0: none; -1 (the default): the model's, from llm.ContextWindow
	compactThreshold   float64 // 0: the loop's default
	permissionMode     string  // --permission-mode ("": the settings' defaultMode, else bypassPermissions)
	interactive        bool    // the host waits for input between turns (dsh acp)
	envDeny            envDeny // --env-deny: variables kept away from Bash, hooks and MCP servers
	session            string  // --session: the session id in a postgres --log
	takeover           string  // --takeover OWNER: the holder a takeover fences out
	force              bool    // --force: a takeover from whoever holds the session
	resume             string  // --resume ID: a session of the session store (or a postgres --log)
	cont               bool    // --continue: the workspace's session written last
	noPersist          bool    // --no-session-persistence: without --log, the log stays in memory
	newID              string  // a new session's id in the session store (useStore)
	prompt             string
	outputFormat       string     // text, json, stream-json or events (dsh run)
	verbose            bool       // --verbose: the transcript in full
	maxTurns           int        // 0: no limit (dsh run)
	plugins            []Plugin   // the native plugins compiled in (WithPlugins)
	sandbox            string     // --sandbox: Bash's sandbox mode
	addDirs            pluginDirs // --add-dir: more directories a confined Bash may write
	sandboxNetwork     bool       // --sandbox-network: a confined Bash reaches the network
	sandboxHooks       bool       // --sandbox-hooks: command hooks run confined too
	systemPrompt       string     // --system-prompt: replaces dsh's system prompt
	appendSystem       string     // --append-system-prompt: added to the system prompt
	noInstructions     bool       // --no-instructions: no CLAUDE.md, AGENTS.md, GEMINI.md
	init               bool       // --init: the Setup hooks (trigger init) run first
	initOnly           bool       // --init-only: --init, then no turn
	maintenance        bool       // --maintenance: the Setup hooks (trigger maintenance) run first

	// --allowedTools and --disallowedTools: allow and deny rules (cli/permissions.go).
	allowedTools, disallowedTools pluginDirs
}

// setup is the setup trigger the flags ask for ("" for none).
func (o runOptions) setup() dsh.SetupTrigger {
	switch {
	case o.init || o.initOnly:
		return dsh.SetupTriggerInit
	case o.maintenance:
		return dsh.SetupTriggerMaintenance
	}
	return ""
}

// sandboxProblem is the usage error of a --sandbox value, or "".
func sandboxProblem(mode string) string {
	if _, err := sandbox.ParseMode(mode); err != nil {
		return "--sandbox: " + err.Error()
	}
	return ""
}

// sessionFlags defines on fs the flags dsh run and dsh acp share: the model, the hooks,
// the plugins and the MCP servers of a session.
func (o *runOptions) sessionFlags(fs *flag.FlagSet) {
	fs.BoolVar(&o.demo, "demo", false, "the bundled scripted model and example plugins")
	fs.StringVar(&o.model, "model", "", "PROVIDER:MODEL (anthropic, openai, openai-chat, gemini, scripted) or openai")
	fs.StringVar(&o.hooksFile, "hooks", "", "run the hooks of FILE")
	o.dialect = dialects.Default()
	fs.Var(clix.OneOf(&o.dialect, false, dialectNames()...), "dialect", "the hooks' dialect")
	fs.BoolVar(&o.trust, "trust", false, "load the project's own hook files and .mcp.json")
	fs.StringVar(&o.projectDir, "project-dir", "", "CLAUDE_PROJECT_DIR for the hooks")
	fs.StringVar(&o.mcpConfig, "mcp-config", "", "start the MCP servers of FILE")
	fs.IntVar(&o.stopCap, "stop-cap", -1, "how many times a Stop hook may continue one turn")
	fs.BoolVar(&o.canonical, "canonical", false, "dsh's own wording for the hooks' words")
	fs.BoolVar(&o.revalidate, "revalidate-after-rewrite", false, "claude-code: run PreToolUse again on a rewritten input")
	fs.Var(&o.pluginDirs, "plugin-dir", "load a Claude Code plugin (repeatable)")
	fs.StringVar(&o.settingSources, "setting-sources", "", "user,project,local settings to load")
	fs.IntVar(&o.contextWindow, "context-window", -1, "the model's context window, in tokens (default: the model's; 0: none)")
	fs.Float64Var(&o.compactThreshold, "compact-threshold", 0, "compact at this share of the window (default 0.8)")
	fs.Int64Var(&o.maxResponseBytes, "max-response-bytes", 0, "cap one model response at N bytes (default 64 MiB)")
	fs.Var(&o.envDeny, "env-deny", "keep variables matching PATTERN away from Bash, hooks and MCP servers (repeatable)")
	fs.StringVar(&o.sandbox, "sandbox", string(sandbox.DefaultMode), "confine Bash: read-only, workspace-write (default) or danger-full-access")
	fs.Var(&o.addDirs, "add-dir", "with --sandbox workspace-write: another directory Bash may write (repeatable)")
	fs.BoolVar(&o.sandboxNetwork, "sandbox-network", false, "with --sandbox read-only or workspace-write: let Bash reach the network")
	fs.BoolVar(&o.sandboxHooks, "sandbox-hooks", false, "run the command hooks under the --sandbox policy too")
	fs.StringVar(&o.systemPrompt, "system-prompt", "", "replace dsh's system prompt")
	fs.StringVar(&o.appendSystem, "append-system-prompt", "", "add TEXT at the end of the system prompt")
	fs.BoolVar(&o.noInstructions, "no-instructions", false, "read no instruction files (CLAUDE.md, AGENTS.md, GEMINI.md)")
	fs.BoolVar(&o.init, "init", false, "run the Setup hooks (trigger init) before the session starts")
	fs.BoolVar(&o.initOnly, "init-only", false, "run the Setup and session-start hooks, then stop: no turn")
	fs.BoolVar(&o.maintenance, "maintenance", false, "run the Setup hooks (trigger maintenance) before the session starts")
}

// checkSession checks the session flags dsh run and dsh acp share (sessionFlags); it
// returns the usage error, or "".
func (o runOptions) checkSession() string {
	switch {
	case badSources(o.settingSources) != "":
		return fmt.Sprintf("--setting-sources: unknown source %q (want %s)", badSources(o.settingSources), orList(settingSources()))
	case o.stopCap < -1:
		return fmt.Sprintf("--stop-cap %d: want a count, 0 or more", o.stopCap)
	case o.revalidate && !o.desc().Revalidate:
		return fmt.Sprintf("--revalidate-after-rewrite is a %s option (the %s bridge has none)", dialectsWith(func(d *dialect.Descriptor) bool { return d.Revalidate }), o.dialect)
	case o.maxResponseBytes < 0:
		return fmt.Sprintf("--max-response-bytes %d: want a byte count, 0 (the default, 64 MiB) or more", o.maxResponseBytes)
	case o.contextWindow < -1:
		return fmt.Sprintf("--context-window %d: want a token count, 0 or more", o.contextWindow)
	case sandboxProblem(o.sandbox) != "":
		return sandboxProblem(o.sandbox)
	case o.sandboxHooks && o.sandbox == string(sandbox.DangerFullAccess):
		return "--sandbox-hooks confines the hooks as Bash is: it needs --sandbox read-only or workspace-write, not danger-full-access"
	case o.compactThreshold < 0 || o.compactThreshold > 1:
		return fmt.Sprintf("--compact-threshold %v: want a share of the window in (0, 1]", o.compactThreshold)
	case !o.demo && o.model != "":
		// The provider and its credentials, before any session starts.
		if err := provider.Builtin().Check(o.model, provider.Options{}); err != nil {
			if d := o.desc(); errors.Is(err, provider.ErrBadModelSpec) && d.ModelProvider != "" && !strings.Contains(o.model, ":") {
				// The dialect's engine speaks its provider's wire: name it.
				return fmt.Sprintf("%v; the %s engine's provider: --model %s:%s", err, d.Name, d.ModelProvider, o.model)
			}
			return err.Error()
		}
	}
	return ""
}

// parseRun parses dsh run's arguments; when it returns !ok, c has printed the help or the
// usage error and the command exits with code.
func parseRun(c *clix.Command, args []string, stdin io.Reader, stderr io.Writer) (o runOptions, code int, ok bool) {
	fs := c.Flags
	o.sessionFlags(fs)
	o.headlessFlags(fs)
	fs.StringVar(&o.workspace, "workspace", "", "the workspace")
	fs.StringVar(&o.logFile, "log", "", "append the session log to FILE (or postgres://...)")
	fs.StringVar(&o.session, "session", "", "with a postgres --log: the session id")
	fs.StringVar(&o.takeover, "takeover", "", "with --session: take the session over from the writer `OWNER`")
	fs.BoolVar(&o.force, "force", false, "with --session: take the session over whoever holds it")
	fs.StringVar(&o.transcript, "transcript", "", "the transcript file the hooks read")
	fs.StringVar(&o.resume, "resume", "", "resume the session `ID` of the session store (or of a postgres --log)")
	fs.StringVar(&o.resume, "r", "", "--resume")
	fs.BoolVar(&o.cont, "continue", false, "continue the workspace's session written last")
	fs.BoolVar(&o.cont, "c", false, "--continue")
	fs.BoolVar(&o.noPersist, "no-session-persistence", false, "without --log, keep the session log in memory only")
	o.permissionFlags(fs)
	if code, ok := c.Parse(flagsFirst(fs, args), -1); !ok {
		return o, code, false
	}
	if o.demo {
		stdin = nil // the demo has its own prompt: a pipe on stdin is not one
	}
	prompt, err := promptArgs(fs.Args(), stdin, o.desc().StdinPrompt, func(msg string) { fmt.Fprintf(stderr, "dsh run: %s\n", msg) })
	if err != nil {
		return o, c.Fail(err), false
	}
	o.prompt = prompt
	switch {
	case o.maxTurns < 0:
		return o, c.UsageError("--max-turns %d: want a count of model steps, 1 or more (0: no limit)", o.maxTurns), false
	case o.demo && o.model != "":
		return o, c.UsageError("--demo runs its own scripted model; drop --model"), false
	case o.demo && o.prompt == "":
		o.prompt = demoPrompt
	case (o.init && o.initOnly) || (o.maintenance && (o.init || o.initOnly)):
		return o, c.UsageError("--init, --init-only and --maintenance: give one"), false
	case !o.demo && o.model == "" && !o.initOnly && defaultModel(&o, stderr) != nil:
		return o, c.UsageError("--model is required (or --demo): %v", defaultModel(&o, stderr)), false
	case o.prompt == "" && !o.initOnly:
		return o, c.UsageError("a PROMPT is required"), false
	case o.permissionProblem() != "":
		return o, c.UsageError("%s", o.permissionProblem()), false
	case o.checkSession() != "":
		return o, c.UsageError("%s", o.checkSession()), false
	}
	if msg := o.checkStore(); msg != "" {
		return o, c.UsageError("%s", msg), false
	}
	if msg := o.checkPGLog(); msg != "" {
		return o, c.UsageError("%s", msg), false
	}
	return o, clix.ExitOK, true
}

func runSession(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	c := clix.New("dsh run", runUsage, stdout, stderr)
	c.OmitFlagList = true
	o, code, ok := parseRun(c, args, stdin, stderr)
	if !ok {
		return code
	}
	o.plugins = configOf(ctx).plugins
	// A hooks file named on the command line fails closed, before anything starts.
	if err := checkNamedHooks(o.dialect, o.hooksFile); err != nil {
		return c.Fail(err)
	}
	// Before any tool, hook or MCP server runs: none of them reads dsh's environment
	// through /proc (hideProcess).
	if err := hideProcess(); err != nil {
		return c.Fail(err)
	}
	ctx, guard, stop := onSignals(ctx)
	defer stop()
	stdout, stderr = guard(stdout), guard(stderr)
	res, err := runOne(ctx, o, stdout, stderr)
	var sc signalCause
	switch {
	case err != nil && errors.As(context.Cause(ctx), &sc):
		fmt.Fprintf(stderr, "dsh run: %v\n", sc)
		return sc.exitCode()
	case err != nil:
		return c.Fail(err)
	}
	writeResult(o.outputFormat, res, stdout, stderr)
	if errors.As(context.Cause(ctx), &sc) {
		return sc.exitCode() // the result met a closed stdout
	}
	return res.code
}

// defaultModel sets the model of o from the environment, the one provider whose key is
// set (provider.Registry.DefaultSpec), saying so on stderr; it returns why it cannot.
func defaultModel(o *runOptions, stderr io.Writer) error {
	spec, err := provider.Builtin().DefaultSpec(provider.Options{})
	if err != nil {
		return err
	}
	o.model = spec
	fmt.Fprintf(stderr, "dsh run: --model %s, from the environment (the only provider key set)\n", spec)
	return nil
}

// runOne runs the session o describes and returns how it went.
func runOne(ctx context.Context, o runOptions, stdout, stderr io.Writer) (runResult, error) {
	start := time.Now()
	level := slog.LevelWarn
	if o.verbose {
		level = slog.LevelInfo
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	// The model first, so that a script that cannot be read fails before anything is
	// made; it is built again below, with the session's id.
	if _, _, err := o.modelOpener(logger)("", runner.ContextPlacement{}); err != nil {
		return runResult{}, err
	}
	// The log before anything starts: a database that cannot be reached fails the run
	// in one line, before a workspace, a hook or an MCP server is made.
	if err := o.useStore(ctx); err != nil {
		return runResult{}, err
	}
	opened, err := openSessionLog(ctx, &o, stderr)
	if err != nil {
		return runResult{}, err
	}
	defer opened.Close()
	log, resume := opened.Log, opened.Resume
	workspace := o.workspace
	switch {
	case workspace == "" && o.demo:
		dir, err := os.MkdirTemp("", "dsh-run-")
		if err != nil {
			return runResult{}, err
		}
		defer os.RemoveAll(dir)
		workspace = dir
		fmt.Fprintf(stderr, "workspace: %s (removed at exit; --workspace DIR keeps one)\n", workspace)
	case workspace == "":
		// As claude -p: the current directory.
		wd, err := os.Getwd()
		if err != nil {
			return runResult{}, err
		}
		workspace = wd
	default:
		if err := os.MkdirAll(workspace, 0o755); err != nil {
			return runResult{}, err
		}
		if abs, err := filepath.Abs(workspace); err == nil {
			workspace = abs
		}
	}

	// The session's id, recorded in session/created: a resumed run keeps it, so the hooks
	// see the same session_id and transcript_path in every run of the session.
	sessionID, err := runner.SessionID(log, resume)
	if err != nil {
		return runResult{}, fmt.Errorf("%s: %w", logName(o), err)
	}
	switch {
	case !resume && o.session != "":
		sessionID = o.session // a new PostgreSQL session: its key is its id
	case !resume && o.newID != "":
		sessionID = o.newID // a new session of the store: its file is named by its id
	}
	if err := o.applyTrust(workspace); err != nil {
		return runResult{}, err
	}
	note := func(msg string) { fmt.Fprintf(stderr, "dsh run: %s\n", clix.Visible(msg)) }
	// Before the compiled-in plugins: the retry notice sees what they and the hooks decide.
	o.plugins = append([]Plugin{retryNotice{note: note}}, o.plugins...)
	cfg := o.runnerConfig(workspace, sessionID, log, logger, note)
	cfg.Subagents.Logs = opened.Children
	cfg.Subagents.Definitions = o.agentDefinitions(cfg.Hooks, workspace, note)
	cfg.Limits.MaxTurns = o.maxTurns
	cfg.MCP.Mount = true
	cfg.Permissions = runner.Permissions{Mode: o.permissionMode, Allowed: o.allowedTools, Disallowed: o.disallowedTools}
	s, err := runner.New(ctx, cfg)
	if err != nil {
		return runResult{}, err
	}
	defer s.Close()
	out := &outcome{}
	tr := &transcript{w: stderr}
	prog := newProgress(stderr)
	defer prog.stop()
	log.Subscribe(func(e session.Event) {
		switch s := line(e); {
		case s != "":
			prog.clear()
			tr.write(s)
		case o.verbose:
			// Every event the transcript does not render, as dsh log --raw prints it.
			prog.clear()
			tr.write("  · " + clix.VisibleJSON(fmt.Sprintf("%d %s %s", e.Seq, e.Type, e.Data)))
		}
		prog.observe(e)
	})
	log.Subscribe(out.observe)
	o.streamOutput(stdout, s, log, sessionID, workspace)

	agent, err := s.Start(ctx, "main", resume)
	if err != nil {
		return runResult{}, err
	}
	defer agent.Close()
	go func() {
		<-ctx.Done()
		agent.Cancel(dsh.CancelUser{}, true)
		s.StopBackground()
	}()
	if o.initOnly {
		// As claude -p --init-only: the Setup and session-start hooks ran; no turn.
		return runResult{Type: "result", Subtype: "success", StopReason: "init-only", SessionID: sessionID}, nil
	}
	if instructions, ok := compactPrompt(o.prompt); ok {
		if err := compactNow(ctx, agent, instructions, stderr); err != nil {
			return runResult{}, err
		}
		return runResult{Type: "result", Subtype: "success", StopReason: "compacted", SessionID: sessionID}, nil
	}
	msg := dsh.UserMessage{ID: fmt.Sprintf("prompt-%d", time.Now().UnixNano()), Role: dsh.UserMessageRoleUser,
		Content: []dsh.ContentBlock{dsh.TextBlock{Text: o.prompt}}, Source: dsh.SourceUser{}}
	if err := agent.Followup(context.WithoutCancel(ctx), msg); err != nil {
		return runResult{}, err
	}
	// As claude -p, wait for the children running in the background too: the end of
	// each wakes the agent for another turn.
	if err := s.Settle(context.WithoutCancel(ctx), agent); err != nil {
		return runResult{}, err
	}
	out.setMaxTurns(s.MaxTurnsReached())
	// A turn that left no end in the log: the log may have refused it (another writer took
	// the session over), which is what to say, not that no turn ran.
	out.checkLog(ctx, opened.Check)
	// The log as printed: a database URL without its password.
	return out.result(ctx, sessionID, pgstore.Redact(o.logFile), start), nil
}

// compactPrompt reports whether prompt is the command "/compact [instructions]".
func compactPrompt(prompt string) (instructions string, ok bool) {
	rest, found := strings.CutPrefix(strings.TrimSpace(prompt), "/compact")
	if !found || (rest != "" && !strings.ContainsAny(rest[:1], " \t\n")) {
		return "", false
	}
	return strings.TrimSpace(rest), true
}

// compactNow runs /compact on the (resumed) session: the agent compacts its history now.
// Nothing to compact is not an error; a deferred or failed compaction is.
func compactNow(ctx context.Context, agent *loop.Agent, instructions string, stderr io.Writer) error {
	res, err := agent.Compact(ctx, instructions)
	switch {
	case errors.Is(err, loop.ErrNothingToCompact):
		fmt.Fprintln(stderr, "dsh run: /compact: nothing to compact yet")
		return nil
	case err != nil:
		return fmt.Errorf("/compact: %w", err)
	}
	fmt.Fprintf(stderr, "dsh run: /compact: about %d tokens before, %d after\n", res.TokensBefore, res.TokensAfter)
	return nil
}
