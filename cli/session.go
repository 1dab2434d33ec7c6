package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"

	"github.com/dshkit/dsh/bridges/dialect"
	"github.com/dshkit/dsh/bridges/dialects"
	"github.com/dshkit/dsh/examples/editnotes"
	"github.com/dshkit/dsh/examples/rmguard"
	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runner"
	"github.com/dshkit/dsh/runner/logstore"
	"github.com/dshkit/dsh/runtime/llm"
	"github.com/dshkit/dsh/runtime/llm/provider"
	"github.com/dshkit/dsh/runtime/sandbox"
	"github.com/dshkit/dsh/runtime/session"
)

// runnerConfig is the session wiring (package runner) that the flags of o describe, for
// the session sessionID in workspace on log; note receives the notices for the user.
// dsh run and dsh acp set what only they have (the limits, MCP mounting, approval).
func (o runOptions) runnerConfig(workspace, sessionID string, log *session.Log, logger *slog.Logger, note func(string)) runner.Config {
	plugins := slices.Clone(o.plugins)
	if o.demo {
		// The example plugins of the demo, after the compiled-in ones.
		plugins = append(plugins, &rmguard.Plugin{}, &editnotes.Plugin{})
	}
	logFile := o.logFile
	if logstore.IsURL(logFile) {
		logFile = "" // no file for the transcript to sit beside
	}
	cfg := runner.Config{
		Workspace: workspace, SessionID: sessionID, Log: log, Logger: logger, OpenModel: o.modelOpener(logger),
		Plugins: plugins, Env: o.envDeny.childEnv(), MCP: runner.MCP{ConfigFile: o.mcpConfig}, Note: note,
		Hooks: runner.Hooks{Dialect: o.dialect, File: o.hooksFile, PluginDirs: o.pluginDirs, SettingSources: o.settingSources,
			ProjectDir: o.projectDir, Trust: o.trust, Headless: !o.interactive, Canonical: o.canonical, RevalidateAfterRewrite: o.revalidate,
			Interactive: o.interactive, PermissionMode: o.permissionMode, Transcript: o.transcript, LogFile: logFile,
			Sandboxed: o.sandboxHooks},
		Limits:  runner.Limits{CompactThreshold: o.compactThreshold},
		Prompts: runner.Prompts{SystemPrompt: o.systemPrompt, AppendSystemPrompt: o.appendSystem, NoInstructions: o.noInstructions},
		Setup:   o.setup(),
	}
	if o.stopCap >= 0 {
		cfg.Limits.StopCap = &o.stopCap
	}
	if mode, err := sandbox.ParseMode(o.sandbox); err == nil {
		cfg.Sandbox = &sandbox.Policy{Mode: mode, AddDirs: o.addDirs, Network: o.sandboxNetwork}
	}
	if o.contextWindow >= 0 {
		cfg.Limits.ContextWindow = &o.contextWindow
	}
	return cfg
}

// applyTrust trusts the project of a session in workspace when the user trusts it (dsh
// trust) and --trust did not already; a trust file that cannot be used is an error.
func (o *runOptions) applyTrust(workspace string) error {
	if o.trust {
		return nil
	}
	project := o.projectDir
	if project == "" {
		project = workspace
	}
	ok, err := trustedProject(project)
	o.trust = ok
	return err
}

// modelOpener opens the model o names: the bundled demo script, or --model through the
// provider registry (provider.Builtin).
func (o runOptions) modelOpener(logger *slog.Logger) runner.ModelOpener {
	return func(sessionID string, placement runner.ContextPlacement) (llm.Model, dsh.LLMCallConfig, error) {
		if o.demo || (o.initOnly && o.model == "") {
			// (--init-only runs no turn: without --model, the bundled script is never asked.)
			m, err := llm.ParseScript(demoScript)
			return m, dsh.LLMCallConfig{Provider: "scripted", Model: "demo"}, err
		}
		return provider.Builtin().Open(o.model, provider.Options{DeveloperContexts: placement.Developer, SystemContextModels: placement.SystemModels, SessionID: sessionID, Logger: logger,
			Limits: provider.Limits{ResponseBytes: o.maxResponseBytes}})
	}
}

// desc is the descriptor of o's dialect (--dialect accepts registered names only).
func (o runOptions) desc() *dialect.Descriptor { return runner.Dialect(o.dialect) }

// settingSources are the --setting-sources every dialect knows (user, project, local,
// ...): a source the chosen dialect lacks selects nothing.
func settingSources() []string {
	var out []string
	for _, d := range dialects.All() {
		for _, s := range d.Sources() {
			if !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
	}
	return out
}

// orList joins names as "a, b or c".
func orList(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// badSources returns the first unknown name of a --setting-sources list ("" if none).
func badSources(list string) string {
	for _, s := range strings.Split(list, ",") {
		if s = strings.TrimSpace(s); s != "" && !slices.Contains(settingSources(), s) {
			return s
		}
	}
	return ""
}

// openSessionLog opens the session log of o (package runner/logstore): a PostgreSQL
// session (a new one's id is printed and stored in o), a JSONL file or memory. Every
// failure to reach the database or to take the lease is one line, exit 1.
func openSessionLog(ctx context.Context, o *runOptions, stderr io.Writer) (*logstore.Opened, error) {
	opened, err := logstore.Open(ctx, logstore.Options{
		Path: o.logFile, Session: o.session, TakeoverFrom: o.takeover, Force: o.force,
		Logger: slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
		Repaired: func(path, reason string) {
			fmt.Fprintf(stderr, "dsh run: %s: cut a torn last line, left by a crash in the middle of a write (%s)\n", path, reason)
		},
		Created: func(id string, db fmt.Stringer) {
			fmt.Fprintf(stderr, "session: %s in %s (resume it with --session %s)\n", id, db, id)
		},
	})
	if err != nil {
		return nil, err
	}
	if opened.Session != "" {
		o.session = opened.Session
	}
	return opened, nil
}
