package cli

import (
	"context"
	"fmt"
	"io"
	"iter"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/dshkit/dsh/bridges/acp"
	"github.com/dshkit/dsh/bridges/mcp"
	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/internal/clix"
	"github.com/dshkit/dsh/runner"
	"github.com/dshkit/dsh/runner/logstore"
	"github.com/dshkit/dsh/runtime/session"
	"github.com/dshkit/dsh/runtime/session/pgstore"
	"github.com/dshkit/dsh/runtime/subagent"
	"github.com/dshkit/dsh/runtime/tools/builtin"
)

func init() {
	commands["acp"] = command{summary: "serve ACP (Agent Client Protocol) on stdio, for editors such as Zed", run: runACP}
}

const acpUsage = `usage: dsh acp [--demo] [--model PROVIDER:MODEL]
               [--sessions DIR | --sessions postgres://... [--takeover OWNER | --force]]
               [--hooks FILE] [--plugin-dir DIR]... [--setting-sources S]
               [--dialect claude-code|codex|gemini] [--project-dir DIR] [--trust] [--stop-cap N]
               [--canonical] [--revalidate-after-rewrite] [--mcp-config FILE] [--permissions ask|allow]
               [--context-window N] [--compact-threshold R] [--max-response-bytes N] [--env-deny PATTERN]...
               [--mcp-trust NAME]... [--sandbox MODE [--add-dir DIR]... [--sandbox-network] [--sandbox-hooks]]

Runs dsh as an ACP v1 agent: an editor starts it and speaks JSON-RPC on its stdin and
stdout (one frame a line; nothing else is written to stdout, logs go to stderr). Each
session/new is a dsh session working in the session's cwd: Read, Write and Edit are
confined to it, Bash by --sandbox (as under dsh run: workspace-write by default); the
session's mcpServers are mounted; session/load resumes a session from its log (a damaged
log is refused and left as it is: see dsh log --repair). The
process ends when stdin does, after cancelling and settling every session.

  --demo               the bundled scripted model and the two example native plugins
  --model M            as dsh run: PROVIDER:MODEL (scripted:FILE: a fresh script per session)
  --sessions DIR       where session logs go, DIR/<sessionId>.jsonl (default
                       $XDG_STATE_HOME/dsh/sessions, else ~/.local/state/dsh/sessions)
  --sessions postgres://USER:PASSWORD@HOST:PORT/DB
                       keep the session logs in PostgreSQL, keyed by session id, so that
                       any dsh acp (or dsh run --session ID) on any machine loads them; what
                       the URL leaves out comes from PGHOST, PGPASSWORD and the other libpq
                       variables. A session is written by one process at a time: loading a
                       session another process holds fails until that one closes it or its
                       lease expires (30 s after it stopped renewing it)
  --takeover OWNER     with a postgres --sessions: session/load takes over a session the
                       writer OWNER holds (the writer id a refusal names, host:pid by
                       default), even while its lease is live; that writer's appends then
                       fail. A session another writer holds is still refused, naming it
  --force              with a postgres --sessions: session/load takes a session over
                       whoever holds it
  --hooks FILE         run the Claude Code, Codex or Gemini CLI hooks of FILE in every session; as under
                       dsh run, FILE fails closed (exit 1 naming it before any frame is read)
  --plugin-dir DIR, --setting-sources S, --stop-cap N, --canonical, --context-window N,
  --compact-threshold R, --revalidate-after-rewrite, --max-response-bytes N
                       as dsh run (see dsh run --help), in every session; a prompt of
                       "/compact [instructions]" compacts the session (advertised in
                       available_commands_update)
  --dialect D          the hooks' dialect: claude-code (default), codex or gemini
  --project-dir DIR    CLAUDE_PROJECT_DIR for the hooks and where .mcp.json is looked
                       for (default: the session's cwd)
  --trust              also load the project's own hook files and .mcp.json servers
  --mcp-config FILE    MCP servers for every session (Claude Code's .mcp.json shape)
  --permissions P      ask (default): every tool but Read and read-only MCP tools of trusted
                       servers asks the editor first (session/request_permission); allow:
                       none asks unless a hook or plugin decides ask
  --mcp-trust NAME     trust MCP server NAME's tool annotations: its tools annotated
                       readOnlyHint run without asking under --permissions ask (another
                       server's annotation is a hint, not a permission); repeatable
  --env-deny PATTERN   as dsh run: keep matching variables away from Bash, hooks and MCP
                       servers; repeatable. As dsh run, dsh acp is non-dumpable on Linux
                       (no /proc/<dsh pid>/environ for them to read)
  --sandbox MODE, --add-dir DIR, --sandbox-network, --sandbox-hooks
                       as dsh run: confine every Bash command of every session (read-only,
                       workspace-write, the default, or danger-full-access; see dsh run
                       --help for what each allows); the session's cwd is its workspace.
                       Hooks and MCP servers are not sandboxed (--sandbox-hooks confines
                       the command hooks)

Exit status: 0 when stdin ended; 1 when it could not start (an unreadable script or
config file, a database it cannot reach); 2 for a usage error.
`

// acpOptions are the parsed flags of dsh acp.
type acpOptions struct {
	run         runOptions // model, hooks and MCP flags, shared with dsh run
	sessions    string
	permissions string
	mcpTrust    names  // --mcp-trust NAME: servers whose readOnlyHint skips the ask
	takeover    string // --takeover OWNER
	force       bool   // --force
}

// parseACP parses dsh acp's arguments; when it returns !ok, c has printed the help or the
// usage error and the command exits with code.
func parseACP(c *clix.Command, args []string) (o acpOptions, code int, ok bool) {
	fs := c.Flags
	o.run.sessionFlags(fs)
	fs.StringVar(&o.sessions, "sessions", "", "where session logs go (a directory or postgres://...)")
	fs.StringVar(&o.takeover, "takeover", "", "with a postgres --sessions: session/load takes over a session the writer `OWNER` holds")
	fs.BoolVar(&o.force, "force", false, "with a postgres --sessions: session/load takes a session over whoever holds it")
	o.permissions = string(acp.PermissionsAsk)
	fs.Var(clix.OneOf(&o.permissions, false, string(acp.PermissionsAsk), string(acp.PermissionsAllow)), "permissions", "ask or allow")
	fs.Var(&o.mcpTrust, "mcp-trust", "trust the tool annotations of MCP server NAME (repeatable)")
	if code, ok := c.Parse(args, 0); !ok {
		return o, code, false
	}
	switch {
	case o.run.demo && o.run.model != "":
		return o, c.UsageError("--demo runs its own scripted model; drop --model"), false
	case !o.run.demo && o.run.model == "":
		return o, c.UsageError("--model is required (or --demo)"), false
	case o.run.checkSession() != "":
		return o, c.UsageError("%s", o.run.checkSession()), false
	case (o.takeover != "" || o.force) && !pgstore.IsURL(o.sessions):
		return o, c.UsageError("--takeover and --force need a postgres:// --sessions"), false
	case checkTakeover(o.takeover, o.force) != "":
		return o, c.UsageError("%s", checkTakeover(o.takeover, o.force)), false
	}
	if path, ok := strings.CutPrefix(o.run.model, "scripted:"); ok && path != "" {
		// Each session loads the script afresh: pin it to the directory dsh started in.
		if abs, err := filepath.Abs(path); err == nil {
			o.run.model = "scripted:" + abs
		}
	}
	if o.sessions == "" {
		dir, err := sessionsDir()
		if err != nil {
			return o, c.Fail(fmt.Errorf("--sessions: no default (%v); pass a directory", err)), false
		}
		o.sessions = dir
	}
	return o, clix.ExitOK, true
}

func runACP(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	c := clix.New("dsh acp", acpUsage, stdout, stderr)
	c.OmitFlagList = true
	o, code, ok := parseACP(c, args)
	if !ok {
		return code
	}
	o.run.plugins = configOf(ctx).plugins
	// Before any session's tool, hook or MCP server runs (hideProcess).
	if err := hideProcess(); err != nil {
		return c.Fail(err)
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	// Check the model and the config files once, up front: one that cannot be used fails
	// the command (exit 1) before any frame is read.
	if _, _, err := o.run.modelOpener(logger)("", runner.ContextPlacement{}); err != nil {
		return c.Fail(err)
	}
	if file := o.run.mcpConfig; file != "" {
		if _, err := os.Stat(file); err != nil {
			return c.Fail(fmt.Errorf("--mcp-config: %v", err))
		}
	}
	// A hooks file named on the command line fails closed, before any frame is read.
	if err := checkNamedHooks(o.run.dialect, o.run.hooksFile); err != nil {
		return c.Fail(err)
	}
	cfg := acp.Config{
		Setup: func(ctx context.Context, spec acp.SessionSpec) (*acp.Env, error) {
			return acpSetup(ctx, o, spec, logger)
		},
		SessionsDir: o.sessions,
		Permissions: acp.Permissions(o.permissions),
		Logger:      logger,
		MCP:         mcp.Options{Env: o.run.envDeny.childEnv(), TrustedServers: o.mcpTrust},
	}
	if pgstore.IsURL(o.sessions) {
		db, err := pgstore.Connect(ctx, o.sessions, pgstore.WithLogger(logger))
		if err != nil {
			return c.Fail(err)
		}
		defer db.Close()
		cfg.SessionsDir, cfg.Logs = "", logstore.PGLogs{DB: db, TakeoverFrom: o.takeover, Force: o.force}
	}
	srv, err := acp.NewServer(cfg)
	if err != nil {
		fmt.Fprintf(stderr, "dsh acp: %v\n", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := srv.Serve(ctx, stdin, stdout); err != nil {
		fmt.Fprintf(stderr, "dsh acp: %v\n", err)
		return 1
	}
	return 0
}

// acpSetup builds one session's environment with the session wiring (package runner):
// the model, the built-in tools in the session's cwd (with CLAUDE_ENV_FILE under a dialect
// that has one), the plugins, the hooks bridge, the agent definitions; plus the MCP
// servers of --mcp-config and the project, which the ACP server mounts.
func acpSetup(ctx context.Context, o acpOptions, spec acp.SessionSpec, logger *slog.Logger) (*acp.Env, error) {
	ro := o.run
	ro.logFile = spec.LogPath
	// An editor asks its user (Notification permission_prompt) and waits for input between
	// turns (idle_prompt); under --permissions ask the hooks see permission_mode default.
	ro.interactive = true
	if o.permissions == string(acp.PermissionsAsk) {
		ro.permissionMode = runner.PermissionDefault
	}
	if err := ro.applyTrust(spec.CWD); err != nil {
		return nil, err
	}
	note := func(msg string) { logger.Warn("hooks", "diagnostic", msg) }
	cfg := ro.runnerConfig(spec.CWD, spec.ID, spec.Log, logger, note)
	// The agent definitions load as under dsh run (the user's, the project's behind its
	// trust), and each child's log is a file beside the session's, as dsh run keeps them.
	cfg.Subagents.Definitions = ro.agentDefinitions(cfg.Hooks, spec.CWD, note)
	var childEvents func(string) iter.Seq2[session.Event, error]
	if spec.LogPath != "" {
		children := subagent.FileLogs{Dir: subagent.DirFor(spec.LogPath)}
		cfg.Subagents.Logs = children
		childEvents = func(id string) iter.Seq2[session.Event, error] { return fileEvents(children.Path(id)) }
	}
	s, err := runner.New(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return &acp.Env{
		Hooks: s.Hooks, Tools: s.Tools, Model: s.Model, LLM: s.LLM, MCPServers: s.MCPServers,
		ContinuationCap: s.ContinuationCap, Compaction: s.Compaction,
		// The hooks' own timeouts bound the PreToolUse hooks that run in the rewrite phase.
		ToolOptions: s.ToolOptions,
		System:      s.System,
		// A Write's diff shows the old text only as the Write tool itself could read it.
		FileText: func(ctx context.Context, p string) (string, bool, error) {
			return builtin.CurrentText(ctx, s.Builtin, p)
		},
		// The session's sandbox goes in its log, as under dsh run.
		Started: s.Attach,
		Close:   s.Close,
		// Subagents run their calls through the editor's permission requests, and their
		// tool calls show in the editor.
		SetChildRuntime: s.SetChildRuntime,
		ObserveChildren: func(fn func(string, dsh.Lineage, *session.Log) func()) { s.ObserveChildren(fn) },
		// session/load shows a child's calls again from its log.
		ChildEvents: childEvents,
	}, nil
}
