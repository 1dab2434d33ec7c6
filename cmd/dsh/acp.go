package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/dshkit/dsh/bridges/acp"
	"github.com/dshkit/dsh/examples/editnotes"
	"github.com/dshkit/dsh/examples/rmguard"
	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/internal/clix"
	"github.com/dshkit/dsh/runtime/loop"
	"github.com/dshkit/dsh/runtime/tools"
	"github.com/dshkit/dsh/runtime/tools/builtin"
)

func init() {
	commands["acp"] = command{summary: "serve ACP (Agent Client Protocol) on stdio, for editors such as Zed", run: runACP}
}

const acpUsage = `usage: dsh acp [--demo] [--model PROVIDER:MODEL] [--sessions DIR]
               [--hooks FILE] [--plugin-dir DIR]... [--setting-sources S]
               [--dialect claude-code|codex] [--project-dir DIR] [--trust] [--stop-cap N]
               [--canonical] [--revalidate-after-rewrite] [--mcp-config FILE] [--permissions ask|allow]
               [--context-window N] [--compact-threshold R]

Runs dsh as an ACP v1 agent: an editor starts it and speaks JSON-RPC on its stdin and
stdout (one frame a line; nothing else is written to stdout, logs go to stderr). Each
session/new is a dsh session with the built-in tools confined to the session's cwd; the
session's mcpServers are mounted; session/load resumes a session from its log. The
process ends when stdin does, after cancelling and settling every session.

  --demo               the bundled scripted model and the two example native plugins
  --model M            as dsh run: PROVIDER:MODEL (scripted:FILE: a fresh script per session)
  --sessions DIR       where session logs go, DIR/<sessionId>.jsonl (default
                       $XDG_STATE_HOME/dsh/sessions, else ~/.local/state/dsh/sessions)
  --hooks FILE         run the Claude Code or Codex hooks of FILE in every session
  --plugin-dir DIR, --setting-sources S, --stop-cap N, --canonical, --context-window N,
  --compact-threshold R, --revalidate-after-rewrite
                       as dsh run (see dsh run --help), in every session; a prompt of
                       "/compact [instructions]" compacts the session (advertised in
                       available_commands_update)
  --dialect D          the hooks' dialect: claude-code (default) or codex
  --project-dir DIR    CLAUDE_PROJECT_DIR for the hooks and where .mcp.json is looked
                       for (default: the session's cwd)
  --trust              also load the project's own hook files and .mcp.json servers
  --mcp-config FILE    MCP servers for every session (Claude Code's .mcp.json shape)
  --permissions P      ask (default): every tool but Read and read-only MCP tools asks the
                       editor first (session/request_permission); allow: none asks unless
                       a hook or plugin decides ask

Exit status: 0 when stdin ended; 1 when it could not start (an unreadable script or
config file); 2 for a usage error.
`

// acpOptions are the parsed flags of dsh acp.
type acpOptions struct {
	run         runOptions // model, hooks and MCP flags, shared with dsh run
	sessions    string
	permissions string
}

// parseACP parses dsh acp's arguments; when it returns !ok, c has printed the help or the
// usage error and the command exits with code.
func parseACP(c *clix.Command, args []string) (o acpOptions, code int, ok bool) {
	fs := c.Flags
	o.run.sessionFlags(fs)
	fs.StringVar(&o.sessions, "sessions", "", "where session logs go")
	o.permissions = string(acp.PermissionsAsk)
	fs.Var(clix.OneOf(&o.permissions, false, string(acp.PermissionsAsk), string(acp.PermissionsAllow)), "permissions", "ask or allow")
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
	}
	if path, ok := strings.CutPrefix(o.run.model, "scripted:"); ok && path != "" {
		// Each session loads the script afresh: pin it to the directory dsh started in.
		if abs, err := filepath.Abs(path); err == nil {
			o.run.model = "scripted:" + abs
		}
	}
	if o.sessions == "" {
		state := os.Getenv("XDG_STATE_HOME")
		if state == "" {
			home, err := os.UserHomeDir()
			if err != nil {
				return o, c.Fail(fmt.Errorf("--sessions: no default (%v); pass a directory", err)), false
			}
			state = filepath.Join(home, ".local", "state")
		}
		o.sessions = filepath.Join(state, "dsh", "sessions")
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
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	// Check the model and the config files once, up front: a usage error exits 2 before
	// any frame is read.
	if _, _, err := pickModel(o.run, "", logger); err != nil {
		return c.Fail(err)
	}
	for flag, file := range map[string]string{"--mcp-config": o.run.mcpConfig, "--hooks": o.run.hooksFile} {
		if file == "" {
			continue
		}
		if _, err := os.Stat(file); err != nil {
			return c.Fail(fmt.Errorf("%s: %v", flag, err))
		}
	}
	srv, err := acp.NewServer(acp.Config{
		Setup:       func(ctx context.Context, spec acp.SessionSpec) (*acp.Env, error) { return acpSetup(o, spec, logger) },
		SessionsDir: o.sessions,
		Permissions: acp.Permissions(o.permissions),
		Logger:      logger,
	})
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

// acpSetup builds one session's environment the way dsh run builds its session: the
// model, the built-in tools in the session's cwd, the demo plugins, the hooks bridge and
// the MCP servers of --mcp-config and the project.
func acpSetup(o acpOptions, spec acp.SessionSpec, logger *slog.Logger) (*acp.Env, error) {
	ro := o.run
	ro.logFile = spec.LogPath
	// An editor asks its user (Notification permission_prompt) and waits for input between
	// turns (idle_prompt); under --permissions ask the hooks see permission_mode default.
	ro.interactive = true
	if o.permissions == string(acp.PermissionsAsk) {
		ro.permissionMode = permDefault
	}
	model, llmCfg, err := pickModel(ro, hookSessionID(spec.ID), logger)
	if err != nil {
		return nil, err
	}
	hooks := dsh.NewRegistry(dsh.WithLogger(logger))
	reg := tools.NewRegistry()
	if _, err := builtin.Register(reg, builtin.Options{Workspace: spec.CWD, Style: toolStyle(ro)}); err != nil {
		return nil, err
	}
	if ro.demo {
		(&rmguard.Plugin{}).Register(hooks.Plugin("rmguard"))
		(&editnotes.Plugin{}).Register(hooks.Plugin("editnotes"))
	}
	turn := &turnState{id: hookSessionID(spec.ID)}
	unsubscribe := spec.Log.Subscribe(turn.observe)
	closeHooks := func() {}
	if ro.hasHooks() {
		if closeHooks, err = attachHooks(ro, llmCfg.Model, spec.CWD, hooks, spec.Log, turn, logger); err != nil {
			unsubscribe()
			return nil, err
		}
	}
	registerRetry(hooks, llmCfg)
	projectDir := ro.projectDir
	if projectDir == "" {
		projectDir = spec.CWD
	}
	servers, err := mcpServers(ro.mcpConfig, projectDir, ro.trust, logger)
	if err != nil {
		closeHooks()
		unsubscribe()
		return nil, err
	}
	return &acp.Env{
		Hooks: hooks, Tools: reg, Model: model, LLM: llmCfg, MCPServers: servers,
		ContinuationCap: continuationCap(ro), Compaction: ro.compaction(llmCfg),
		// The hooks' own timeouts bound the PreToolUse hooks that run in the rewrite phase.
		ToolOptions: hooksToolOptions(ro),
		System:      "You are a coding agent working in " + spec.CWD + ". Use the tools to act; be brief.",
		Started:     func(a *loop.Agent) { turn.setAgent(a) },
		Close:       func() { closeHooks(); unsubscribe() },
	}, nil
}
