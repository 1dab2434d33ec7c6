package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/dshkit/dsh/bridges/dialect"
	"github.com/dshkit/dsh/bridges/dialects"
	"github.com/dshkit/dsh/bridges/hookproto"
	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/sandbox"
	"github.com/dshkit/dsh/runtime/session"
	"github.com/dshkit/dsh/runtime/subagent"
	"github.com/dshkit/dsh/runtime/tools/builtin"
)

// The permission modes the hooks see (Claude Code's names).
const (
	// PermissionBypass: no call needs approval unless a hook or plugin asks.
	PermissionBypass = "bypassPermissions"
	// PermissionDefault: calls need approval.
	PermissionDefault = "default"
)

// Hooks says which hooks a session runs, through the bridge of which dialect. Hooks
// load when a file, a plugin directory or a settings source is named, or when the
// trusted project has hook files of its own.
type Hooks struct {
	// Dialect names the registered dialect (bridges/dialects; "" or an unknown name: the
	// default).
	Dialect string
	// File is a hooks file (settings.json shape) named by the user.
	File string
	// PluginDirs are Claude Code plugin directories (LoadPluginDirs).
	PluginDirs []string
	// SettingSources is a comma list of the settings to load (user, project, local).
	SettingSources string
	// ProjectDir is the project directory (default: the workspace).
	ProjectDir string
	// Trust loads the project's own hook files, commands and .mcp.json (--trust, or the
	// user trusts the project: dsh trust).
	Trust bool
	// Headless says the session runs headless (dsh run): under a dialect whose engine
	// treats its workspace as trusted headless (dialect.Descriptor.HeadlessTrust,
	// claude -p), the project's own hook files and commands load without Trust.
	Headless bool
	// Canonical asks for dsh's canonical words instead of the engine's.
	Canonical bool
	// RevalidateAfterRewrite runs PreToolUse again on a rewritten input.
	RevalidateAfterRewrite bool
	// Interactive says the host waits for input between turns (dsh acp).
	Interactive bool
	// PermissionMode is the permission_mode the hooks see (default PermissionBypass).
	PermissionMode string
	// Sandboxed runs the command hooks confined by the session's sandbox (Config.Sandbox),
	// as Bash is (dsh run --sandbox-hooks); by default they run with the user's rights,
	// as the engines run them.
	Sandboxed bool
	// Transcript is where the transcript the hooks read goes ("": next to LogFile, else
	// in a private directory removed when the session ends).
	Transcript string
	// LogFile is the session log's file, when it is one (not a database).
	LogFile string

	projectHooks bool // the trusted project has hook files (findProjectHooks)
	agentHooks   bool // an agent definition has frontmatter hooks (Subagents.Definitions)
}

// Dialect returns the registered dialect named name (bridges/dialects), else the
// default dialect.
func Dialect(name string) *dialect.Descriptor {
	reg := dialects.All()
	if d, ok := reg.Lookup(name); ok {
		return d
	}
	d, _ := reg.Lookup(dialects.Default())
	return d
}

// desc is the descriptor of h's dialect.
func (h *Hooks) desc() *dialect.Descriptor { return Dialect(h.Dialect) }

// loads says whether h loads hooks (a file, plugins, settings or the trusted project's
// own hook files).
func (h *Hooks) loads() bool {
	return h.File != "" || len(h.PluginDirs) > 0 || h.SettingSources != "" || h.projectHooks || h.agentHooks
}

// trusted says whether the project's own hook files and commands load: Trust, or a
// headless session under a dialect whose engine trusts its workspace headless.
func (h *Hooks) trusted() bool { return h.Trust || (h.Headless && h.desc().HeadlessTrust) }

// Trusted says whether the project's own files load (its hook files, commands and agent
// definitions): Trust, or a headless session under a dialect whose engine trusts its
// workspace headless.
func (h Hooks) Trusted() bool { return h.trusted() }

// Project is the project directory of a session in workspace: ProjectDir, else
// workspace.
func (h Hooks) Project(workspace string) string { return h.project(workspace) }

// project is the project directory of a session in workspace.
func (h *Hooks) project(workspace string) string {
	if h.ProjectDir != "" {
		return h.ProjectDir
	}
	return workspace
}

// findProjectHooks looks for the project's own hook files: under Trust they load;
// without it, the presence of those that name hooks is reported once through note,
// saying how to load them (a settings file holding only other settings, permissions
// say, is not reported as hooks).
func (h *Hooks) findProjectHooks(workspace string, note func(string)) {
	var files []string
	for _, f := range ProjectHookFiles(h.Dialect, h.project(workspace)) {
		if !sameFile(f, h.File) { // a project file named as File loads as named
			files = append(files, f)
		}
	}
	if !h.trusted() {
		files = slices.DeleteFunc(files, func(f string) bool { return !namesHooks(f) })
	}
	switch {
	case len(files) == 0:
	case h.trusted():
		h.projectHooks = true
	default:
		note(fmt.Sprintf("project hooks not loaded: %s (the project is not trusted; pass --trust, or run dsh trust once, to load them)", strings.Join(files, ", ")))
	}
}

// namesHooks reports whether the settings file at path may hold hooks: its top-level
// "hooks" is present and not null, or the file cannot be read as a JSON object (which
// loading it would report).
func namesHooks(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return true
	}
	defer f.Close()
	data, err := hookproto.ReadAtMost(f, hookproto.MaxConfigBytes)
	var top map[string]json.RawMessage
	if err != nil || json.Unmarshal(data, &top) != nil {
		return true
	}
	hooks, ok := top["hooks"]
	return ok && string(hooks) != "null"
}

// sameFile reports whether the paths a and b name one existing file.
func sameFile(a, b string) bool {
	if a == "" || b == "" {
		return false
	}
	sa, err := os.Stat(a)
	if err != nil {
		return false
	}
	sb, err := os.Stat(b)
	return err == nil && os.SameFile(sa, sb)
}

// ProjectHookFiles returns the project-level hook files of the dialect that exist under
// the project directory: the project-scope settings files of its descriptor (Claude
// Code's .claude/settings.json and .claude/settings.local.json, Codex's .codex/hooks.json).
func ProjectHookFiles(dialectName, projectDir string) []string {
	var out []string
	for _, rel := range Dialect(dialectName).ProjectFiles() {
		if p := filepath.Join(projectDir, rel); hookproto.FileExists(p) {
			out = append(out, p)
		}
	}
	return out
}

// toolStyle is how the built-in tools word their results: as the dialect's engine does
// when hooks load (Claude Code's Bash fails on a non-zero exit; Codex's output has its
// header), dsh's own words without hooks or with Canonical.
func (h *Hooks) toolStyle() builtin.Style {
	if !h.loads() || h.Canonical {
		return builtin.StyleDSH
	}
	return builtin.Style(h.desc().ToolStyle)
}

// settingFiles returns the settings files SettingSources names that exist, in the
// engine's order (user, project, local); the project-level ones load with Trust (the
// bridge discovers them), and without it findProjectHooks has said so once.
func (h *Hooks) settingFiles(workspace string) []string {
	want := map[string]bool{}
	for _, s := range strings.Split(h.SettingSources, ",") {
		want[strings.TrimSpace(s)] = true
	}
	home, _ := os.UserHomeDir()
	var out []string
	for _, f := range h.desc().Settings {
		if !want[f.Source] || f.Scope == dialect.ScopeProject {
			continue
		}
		if p := f.Path(home, h.project(workspace), os.Getenv); hookproto.FileExists(p) {
			out = append(out, p)
		}
	}
	return out
}

// transcriptPath is where the transcript the hooks read at transcript_path goes
// (Claude Code's JSONL transcript, or a Codex rollout): Transcript when given; else next
// to the session log (FILE.transcript.jsonl, FILE.rollout.jsonl), so that a run
// continuing the session goes on writing it; else, for a session without a log file, in
// a private per-session directory (0700, the file 0600) that remove deletes when the
// session ends (a run resuming a session kept in a database starts a new transcript).
// Nothing goes to a shared directory.
func (h *Hooks) transcriptPath(sessionID string) (path string, remove func(), err error) {
	kind := h.desc().TranscriptSuffix
	switch {
	case h.Transcript != "":
		path = h.Transcript
	case h.LogFile != "":
		path = strings.TrimSuffix(h.LogFile, filepath.Ext(h.LogFile)) + kind
	default:
		dir, err := os.MkdirTemp("", "dsh-session-")
		if err != nil {
			return "", nil, err
		}
		return filepath.Join(dir, sessionID+kind), func() { _ = os.RemoveAll(dir) }, nil
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", nil, fmt.Errorf("--transcript: %w", err)
	}
	return abs, func() {}, nil
}

// attachHooks loads the hooks with the dialect's bridge and registers it; the returned
// func detaches it.
func (s *Session) attachHooks(envFile string) (func(), error) {
	h, log, logger := &s.cfg.Hooks, s.cfg.Log, s.logger
	rec := hookproto.RecorderFunc(func(ctx context.Context, data dsh.SessionEventData) error {
		_, err := log.Append(context.WithoutCancel(ctx), data)
		return err
	})
	sessionID := HookSessionID(s.cfg.SessionID)
	files := h.settingFiles(s.cfg.Workspace)
	if h.File != "" {
		files = append(files, h.File)
	}
	plugins, problems := LoadPluginDirs(h.PluginDirs)
	for _, p := range problems {
		logger.Warn("plugin", "diagnostic", p)
	}
	// The hooks read transcript_path in the engine's own format: Claude Code's JSONL
	// transcript, or a Codex rollout; it is current before each hook runs.
	path, removeTranscript, err := h.transcriptPath(sessionID)
	if err != nil {
		return nil, err
	}
	tw, err := h.desc().NewTranscript(path, sessionID, s.cfg.Workspace)
	if err != nil {
		removeTranscript()
		if h.Transcript != "" {
			err = fmt.Errorf("--transcript: %w", err)
		}
		return nil, err
	}
	cancelTranscript := log.Subscribe(func(e session.Event) {
		if data, err := e.Decode(); err == nil {
			if err := tw.Observe(data); err != nil {
				logger.Warn("transcript", "error", err)
			}
		}
	})
	stopTranscript := func() { cancelTranscript(); _ = tw.Close(); removeTranscript() }
	s.transcript, s.hookSession = path, sessionID
	sess := s.verifierSession(s.Turns.SessionFunc(hookproto.Session{SessionID: sessionID, TranscriptPath: path, CWD: s.cfg.Workspace,
		Model: s.LLM.Model, PermissionMode: s.PermissionMode()}))
	b, err := h.desc().New(dialect.Config{Files: files, Plugins: plugins, Workspace: s.cfg.Workspace, ProjectDir: h.ProjectDir,
		DiscoverProject: h.trusted(), TrustProject: h.trusted(), Session: sess, Recorder: rec, Logger: logger, Canonical: h.Canonical,
		EnvFile: envFile, Interactive: h.Interactive, RevalidateAfterRewrite: h.RevalidateAfterRewrite, BaseEnv: s.cfg.Env,
		MCP: hookMCP{s.mcpSet}, HookModel: hookModel{model: s.evalModel, cfg: s.LLM, last: s.exchange}, HookAgents: hookAgents{s},
		Sandbox: h.sandbox(s.Builtin.Sandbox)})
	if err != nil {
		stopTranscript()
		return nil, err
	}
	// The bridge has logged its diagnostics.
	unregister := b.Register(s.Hooks.Plugin(h.desc().Plugin()))
	// The same hooks fire for an agent hook's verifier's own calls (hookAgents).
	s.verifierHooks = b.Register
	// An agent definition's own hooks load with the same wiring, in a bridge registered
	// for its child alone while the child runs (Subagents.Definitions, subagent.BeforeChild).
	s.childHooks = func(def subagent.Definition, agentID string) (func(), error) {
		data, err := json.Marshal(map[string]json.RawMessage{"hooks": def.Hooks})
		if err != nil {
			return nil, err
		}
		cb, err := h.desc().New(dialect.Config{Sources: []hookproto.Source{{Path: def.Source, Data: data}},
			Workspace: s.cfg.Workspace, ProjectDir: h.ProjectDir, Session: sess, Recorder: rec, Logger: logger,
			Canonical: h.Canonical, Interactive: h.Interactive, RevalidateAfterRewrite: h.RevalidateAfterRewrite,
			BaseEnv: s.cfg.Env, MCP: hookMCP{s.mcpSet}, HookModel: hookModel{model: s.evalModel, cfg: s.LLM, last: s.exchange}, HookAgents: hookAgents{s},
			Sandbox: h.sandbox(s.Builtin.Sandbox)})
		if err != nil {
			return nil, err
		}
		reg := s.Hooks.Plugin(h.desc().Plugin() + "/agent:" + def.Name).ForAgent(agentID)
		unregister := cb.Register(reg)
		return func() {
			unregister()
			reg.Close()
			closeHooks(cb)
		}, nil
	}
	return func() {
		unregister()
		stopTranscript()
		closeHooks(b)
	}, nil
}

// asyncGrace is how long a session's end waits for its async hooks before it kills those
// still running: one that ends within it (a logger, a notifier) runs to its end, as
// under claude -p, whose shutdown outlasts it; a slower one is killed, as claude -p
// kills it (case handler/async-slow).
const asyncGrace = time.Second

// closeHooks closes a hook bridge at a session's end: its async hooks get asyncGrace to
// end, then those still running are killed and waited for (5 s at most).
func closeHooks(b interface {
	Wait(context.Context) error
	Close(context.Context) error
}) {
	grace, cancelGrace := context.WithTimeout(context.Background(), asyncGrace)
	_ = b.Wait(grace)
	cancelGrace()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = b.Close(ctx)
}

// sandbox is the sandbox the command hooks run in: sb when Sandboxed, else none.
func (h *Hooks) sandbox(sb *sandbox.Sandbox) *sandbox.Sandbox {
	if !h.Sandboxed {
		return nil
	}
	return sb
}
