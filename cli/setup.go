package cli

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/dshkit/dsh/examples/editnotes"
	"github.com/dshkit/dsh/examples/rmguard"
	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/llm"
	"github.com/dshkit/dsh/runtime/loop"
	"github.com/dshkit/dsh/runtime/session"
	"github.com/dshkit/dsh/runtime/tools"
	"github.com/dshkit/dsh/runtime/tools/builtin"
)

// sessionSetup is one session as dsh run and dsh acp both assemble it: the model, the
// built-in tools, the plugins, the hooks bridge of the dialect and the loop's settings.
type sessionSetup struct {
	hooks     *dsh.Registry
	tools     *tools.Registry
	toolOpts  builtin.Options // the built-in tools' options (dsh acp reads files through them)
	model     llm.Model
	llm       dsh.LLMCallConfig
	turn      *turnState
	system    string
	capN      int                   // the Stop continuation cap
	compact   loop.CompactionConfig // the compaction settings
	toolsOpts []tools.Option        // the tool runtime's options the hooks need
	close     func()                // detaches the hooks and removes what the setup made
}

// setupSession assembles the session sessionID of o in workspace, on log: the model, the
// built-in tools (with the dialect's CLAUDE_ENV_FILE when it has one and hooks load), the
// tools and listeners first adds (before any plugin; its func is called at Close), the native and demo plugins, the hooks
// bridge and the retry policy. Close releases it.
func setupSession(o runOptions, workspace, sessionID string, log *session.Log, logger *slog.Logger, first func(*sessionSetup) (func(), error)) (s *sessionSetup, err error) {
	model, llmCfg, err := pickModel(o, hookSessionID(sessionID), logger)
	if err != nil {
		return nil, err
	}
	var closers []func()
	s = &sessionSetup{hooks: dsh.NewRegistry(dsh.WithLogger(logger)), tools: tools.NewRegistry(), model: model, llm: llmCfg,
		close: func() {
			for i := len(closers) - 1; i >= 0; i-- {
				closers[i]()
			}
		}}
	defer func() {
		if err != nil {
			s.close()
		}
	}()
	if o.hasHooks() && o.desc().EnvFile {
		// Claude Code's CLAUDE_ENV_FILE: SessionStart hooks write exports the session's
		// Bash commands source.
		dir, err := os.MkdirTemp("", "dsh-env-")
		if err != nil {
			return nil, err
		}
		closers = append(closers, func() { _ = os.RemoveAll(dir) })
		o.envFile = filepath.Join(dir, "env.sh")
	}
	s.toolOpts = builtin.Options{Workspace: workspace, EnvFile: o.envFile, Style: toolStyle(o), Env: o.envDeny.childEnv()}
	if _, err := builtin.Register(s.tools, s.toolOpts); err != nil {
		return nil, err
	}
	if first != nil {
		done, err := first(s)
		if err != nil {
			return nil, err
		}
		closers = append(closers, done)
	}
	registerPlugins(s.hooks, o.plugins)
	if o.demo {
		(&rmguard.Plugin{}).Register(s.hooks.Plugin("rmguard"))
		(&editnotes.Plugin{}).Register(s.hooks.Plugin("editnotes"))
	}
	s.turn = &turnState{id: hookSessionID(sessionID)}
	closers = append(closers, log.Subscribe(s.turn.observe))
	if o.hasHooks() {
		closeHooks, err := attachHooks(o, llmCfg.Model, workspace, s.hooks, log, s.turn, logger)
		if err != nil {
			return nil, err
		}
		closers = append(closers, closeHooks)
	}
	registerRetry(s.hooks, llmCfg)
	s.system = fmt.Sprintf("You are a coding agent working in %s. Use the tools to act; be brief.", workspace)
	s.capN, s.compact, s.toolsOpts = continuationCap(o), o.compaction(llmCfg), hooksToolOptions(o)
	return s, nil
}
