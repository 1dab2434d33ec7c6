package main

import (
	"context"
	_ "embed"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/dshkit/dsh/bridges/claudecode"
	"github.com/dshkit/dsh/bridges/codex"
	"github.com/dshkit/dsh/bridges/hookproto"
	"github.com/dshkit/dsh/examples/editnotes"
	"github.com/dshkit/dsh/examples/rmguard"
	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/internal/clix"
	"github.com/dshkit/dsh/runtime/llm"
	"github.com/dshkit/dsh/runtime/loop"
	"github.com/dshkit/dsh/runtime/session"
	"github.com/dshkit/dsh/runtime/tools"
	"github.com/dshkit/dsh/runtime/tools/builtin"
)

func init() {
	commands["run"] = command{summary: "run one headless session (dsh run --demo for a bundled one)", run: runSession}
	commands["log"] = command{summary: "pretty-print a session log (JSONL)", run: runLog}
}

//go:embed demo/demo.json
var demoScript []byte

// demoPrompt is the prompt of the bundled demo session.
const demoPrompt = "Set up the workspace: a greeting file, some notes, and clean out the build directory."

const runUsage = `usage: dsh run [--demo] [--model scripted:FILE | --model openai] [--workspace DIR] [--log FILE]
               [--hooks FILE --dialect claude-code|codex [--project-dir DIR] [--trust]]
               [--mcp-config FILE] PROMPT...

Runs one session headless: the prompt is one turn of the agent loop with the built-in tools
(Bash, Read, Write, Edit) confined to the workspace. A readable transcript goes to stderr.

  --demo               run the bundled scripted session in a temporary workspace, with two
                       example native plugins (a guard denying rm -rf, a context after edits)
  --model scripted:FILE  replay a scripted model ({"responses":[...]}, see runtime/llm)
  --model openai       an OpenAI-compatible chat-completions endpoint: OPENAI_BASE_URL,
                       OPENAI_MODEL and OPENAI_API_KEY from the environment
  --workspace DIR      the workspace (default: a new temporary directory, removed at exit)
  --log FILE           append the session log to FILE (JSONL); an existing log is resumed
  --hooks FILE         run the Claude Code or Codex hooks of FILE (settings.json shape)
  --dialect D          the hooks' dialect: claude-code (default) or codex
  --project-dir DIR    CLAUDE_PROJECT_DIR for the hooks (default: the workspace)
  --trust              also load the project directory's own hook files and .mcp.json
  --mcp-config FILE    start the MCP servers of FILE (Claude Code's .mcp.json shape); their
                       tools are named mcp__<server>__<tool>

Exit status: 0 when the session ran (whatever its turns ended with); 1 when it could not
(an unreadable script, log or hooks file); 2 for a usage error.
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
	prompt             string
}

// parseRun parses dsh run's arguments; when it returns !ok, c has printed the help or the
// usage error and the command exits with code.
func parseRun(c *clix.Command, args []string) (o runOptions, code int, ok bool) {
	fs := c.Flags
	fs.BoolVar(&o.demo, "demo", false, "run the bundled scripted session")
	fs.StringVar(&o.model, "model", "", "scripted:FILE or openai")
	fs.StringVar(&o.workspace, "workspace", "", "the workspace")
	fs.StringVar(&o.logFile, "log", "", "append the session log to FILE")
	fs.StringVar(&o.hooksFile, "hooks", "", "run the hooks of FILE")
	o.dialect = "claude-code"
	fs.Var(clix.OneOf(&o.dialect, false, "claude-code", "codex"), "dialect", "the hooks' dialect")
	fs.BoolVar(&o.trust, "trust", false, "load the project's own hook files")
	fs.StringVar(&o.projectDir, "project-dir", "", "CLAUDE_PROJECT_DIR for the hooks")
	fs.StringVar(&o.mcpConfig, "mcp-config", "", "start the MCP servers of FILE")
	if code, ok := c.Parse(args, -1); !ok {
		return o, code, false
	}
	o.prompt = strings.TrimSpace(strings.Join(fs.Args(), " "))
	switch {
	case o.demo && o.model != "":
		return o, c.UsageError("--demo runs its own scripted model; drop --model"), false
	case o.demo && o.prompt == "":
		o.prompt = demoPrompt
	case !o.demo && o.model == "":
		return o, c.UsageError("--model is required (or --demo)"), false
	case !o.demo && o.model != "openai" && (!strings.HasPrefix(o.model, "scripted:") || o.model == "scripted:"):
		return o, c.UsageError("--model %q: want scripted:FILE or openai", o.model), false
	case o.prompt == "":
		return o, c.UsageError("a PROMPT is required"), false
	}
	return o, clix.ExitOK, true
}

func runSession(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	c := clix.New("dsh run", runUsage, stdout, stderr)
	c.OmitFlagList = true
	o, code, ok := parseRun(c, args)
	if !ok {
		return code
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt)
	defer stop()
	if err := runOne(ctx, o, stderr); err != nil {
		return c.Fail(err)
	}
	return clix.ExitOK
}

// usageError is a problem with what the user named (a file that cannot be read, a missing
// variable): like every failure to run, it exits 1 with one line naming it.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// runOne runs the session o describes.
func runOne(ctx context.Context, o runOptions, stderr io.Writer) error {
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	model, llmCfg, err := pickModel(o)
	if err != nil {
		return usageError{err}
	}
	workspace := o.workspace
	if workspace == "" {
		dir, err := os.MkdirTemp("", "dsh-run-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		workspace = dir
		fmt.Fprintf(stderr, "workspace: %s (removed at exit; --workspace DIR keeps one)\n", workspace)
	} else if err := os.MkdirAll(workspace, 0o755); err != nil {
		return usageError{err}
	}

	hooks := dsh.NewRegistry(dsh.WithLogger(logger))
	reg := tools.NewRegistry()
	if _, err := builtin.Register(reg, builtin.Options{Workspace: workspace}); err != nil {
		return err
	}
	closeMCP, err := mountMCP(ctx, o, workspace, reg, logger, stderr)
	if err != nil {
		return err
	}
	defer closeMCP()
	rt := tools.New(reg, hooks, tools.WithLogger(logger))
	if o.demo {
		(&rmguard.Plugin{}).Register(hooks.Plugin("rmguard"))
		(&editnotes.Plugin{}).Register(hooks.Plugin("editnotes"))
	}

	log, resume, err := openLog(ctx, o.logFile, stderr)
	if err != nil {
		return err
	}
	defer log.Close()
	tr := &transcript{w: stderr}
	prog := newProgress(stderr)
	defer prog.stop()
	turn := &turnState{}
	log.Subscribe(func(e session.Event) {
		if s := line(e); s != "" {
			prog.clear()
			tr.write(s)
		}
		turn.observe(e)
		prog.observe(e)
	})

	if o.hooksFile != "" {
		closeHooks, err := attachHooks(o, workspace, hooks, log, turn, logger)
		if err != nil {
			return err
		}
		defer closeHooks()
	}

	cfg := loop.Config{ID: "main", Registry: hooks, Tools: rt, Model: model, Log: log, LLM: llmCfg, Logger: logger,
		System: "You are a coding agent working in " + workspace + ". Use the tools to act; be brief."}
	var agent *loop.Agent
	if resume {
		agent, err = loop.Resume(ctx, cfg)
	} else {
		agent, err = loop.New(ctx, cfg)
	}
	if err != nil {
		return err
	}
	defer agent.Close()
	turn.setAgent(agent)
	go func() {
		<-ctx.Done()
		agent.Cancel(dsh.CancelUser{}, true)
	}()
	msg := dsh.UserMessage{ID: fmt.Sprintf("prompt-%d", time.Now().UnixNano()), Role: dsh.UserMessageRoleUser,
		Content: []dsh.ContentBlock{dsh.TextBlock{Text: o.prompt}}, Source: dsh.SourceUser{}}
	if err := agent.Followup(context.WithoutCancel(ctx), msg); err != nil {
		return err
	}
	return agent.Wait(context.WithoutCancel(ctx))
}

// pickModel builds the model o names and its call configuration.
func pickModel(o runOptions) (llm.Model, dsh.LLMCallConfig, error) {
	switch {
	case o.demo:
		m, err := llm.ParseScript(demoScript)
		return m, dsh.LLMCallConfig{Provider: "scripted", Model: "demo"}, err
	case strings.HasPrefix(o.model, "scripted:"):
		path := strings.TrimPrefix(o.model, "scripted:")
		m, err := llm.LoadScript(path)
		return m, dsh.LLMCallConfig{Provider: "scripted", Model: filepath.Base(path)}, err
	case o.model == "openai":
		cfg := llm.OpenAIConfigFromEnv()
		m, err := llm.NewOpenAI(cfg)
		return m, dsh.LLMCallConfig{Provider: "openai", Model: cfg.Model}, err
	}
	return nil, dsh.LLMCallConfig{}, fmt.Errorf("--model %q: want scripted:FILE or openai", o.model)
}

// openLog opens the session log: a JSONL file (resumed when it holds events) or memory.
func openLog(ctx context.Context, path string, stderr io.Writer) (*session.Log, bool, error) {
	if path == "" {
		l, err := session.Open(ctx, session.NewMemory())
		return l, false, err
	}
	f, rec, err := session.OpenFile(path)
	if err != nil {
		return nil, false, usageError{err}
	}
	if rec.Truncated() {
		fmt.Fprintf(stderr, "dsh run: %s: recovered a damaged tail (%s); %d bytes dropped\n", path, rec.Reason, rec.TruncatedBytes)
	}
	l, err := session.Open(ctx, f)
	if err != nil {
		return nil, false, err
	}
	return l, l.Len() > 0, nil
}

// turnState follows the log to tell the hook bridges the current turn.
type turnState struct {
	id    string // the hooks' session_id (default "main")
	mu    sync.Mutex
	turn  int
	open  bool
	agent dsh.Agent
}

func (t *turnState) observe(e session.Event) {
	data, err := e.Decode()
	if err != nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	switch d := data.(type) {
	case dsh.TurnStart:
		t.turn, t.open = d.Turn, true
	case dsh.TurnEnd:
		t.open = false
	}
}

func (t *turnState) setAgent(a dsh.Agent) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.agent = a
}

func (t *turnState) session(workspace, transcript, model string) hookproto.SessionFunc {
	return func(ctx context.Context, agentID string) hookproto.Session {
		t.mu.Lock()
		defer t.mu.Unlock()
		id := t.id
		if id == "" {
			id = "main"
		}
		return hookproto.Session{SessionID: id, TranscriptPath: transcript, CWD: workspace, Model: model,
			Turn: t.turn, TurnOpen: t.open, Agent: t.agent}
	}
}

// attachHooks loads the hooks file with the dialect's bridge and registers it.
func attachHooks(o runOptions, workspace string, hooks *dsh.Registry, log *session.Log, turn *turnState, logger *slog.Logger) (func(), error) {
	rec := hookproto.RecorderFunc(func(ctx context.Context, data dsh.SessionEventData) error {
		_, err := log.Append(context.WithoutCancel(ctx), data)
		return err
	})
	abs := o.logFile
	if abs != "" {
		abs, _ = filepath.Abs(abs)
	}
	sess := turn.session(workspace, abs, "dsh")
	var register func(*dsh.Registrar) func()
	var diags []hookproto.Diagnostic
	var closer func(context.Context) error
	switch o.dialect {
	case "codex":
		b, err := codex.New(codex.Config{Files: []string{o.hooksFile}, Workspace: workspace, ProjectDir: o.projectDir, DiscoverProject: o.trust, TrustProject: o.trust,
			Session: sess, Recorder: rec, Logger: logger})
		if err != nil {
			return nil, usageError{err}
		}
		register, diags, closer = b.Register, b.Diagnostics(), b.Close
	default:
		b, err := claudecode.New(claudecode.Config{Files: []string{o.hooksFile}, Workspace: workspace, ProjectDir: o.projectDir, DiscoverProject: o.trust, TrustProject: o.trust,
			Session: sess, Recorder: rec, Logger: logger})
		if err != nil {
			return nil, usageError{err}
		}
		register, diags, closer = b.Register, b.Diagnostics(), b.Close
	}
	for _, d := range diags {
		logger.Warn("hooks", "diagnostic", d.Error())
	}
	unregister := register(hooks.Plugin("hooks-" + o.dialect))
	return func() {
		unregister()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = closer(ctx)
	}, nil
}
