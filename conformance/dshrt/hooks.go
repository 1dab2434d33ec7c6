package dshrt

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync/atomic"

	"github.com/dshkit/dsh/bridges/dialect"
	"github.com/dshkit/dsh/bridges/dialects"
	"github.com/dshkit/dsh/bridges/hookproto"
	"github.com/dshkit/dsh/conformance"
	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runner"
	"github.com/dshkit/dsh/runtime/session"
)

// AttachHooks loads the hooks file with dsh's bridge of the dialect, looked up by name in
// bridges/dialects, and registers it as the plugin "hooks-<dialect>", as `dsh run --hooks`
// does (runner/hooks.go): the session of an event is its agent's, resolved when the event
// fires (handle, open turn, id as session id, no transcript path, model "scripted"); the
// hook/invoked and hook/result records go to the log of the first agent, like the
// approval records; Codex's $SHELL is /bin/sh. The bridge's messages get deterministic
// ids ("hooks-<dialect>-<n>").
func (r *Runtime) AttachHooks(ctx context.Context, h conformance.HookConfig) error {
	r.mu.Lock()
	attached := r.hookBridge != nil
	r.mu.Unlock()
	if attached {
		return errors.New("dshrt: hooks are already attached")
	}
	quiet := slog.New(slog.DiscardHandler)
	rec := hookproto.RecorderFunc(r.recordHook)
	var n atomic.Int64
	desc, ok := dialects.All().Lookup(h.Dialect)
	if !ok {
		return fmt.Errorf("dshrt: unknown hook dialect %q", h.Dialect)
	}
	plugin := desc.Plugin()
	b, err := desc.New(dialect.Config{Files: []string{h.ConfigPath}, Workspace: h.Workspace, Model: "scripted",
		Session: r.hookSession, Recorder: rec, Logger: quiet, Getenv: posixShell, Canonical: true,
		RevalidateAfterRewrite: h.RevalidateAfterRewrite,
		NewID:                  func() string { return fmt.Sprintf("%s-%d", plugin, n.Add(1)) }})
	if err != nil {
		return fmt.Errorf("dshrt: %w", err)
	}
	for _, d := range b.Diagnostics() {
		r.t.Logf("dshrt: hooks: %v", d)
	}
	unregister := b.Register(r.hooks.Plugin(plugin))
	r.mu.Lock()
	defer r.mu.Unlock()
	r.hookBridge = b
	r.closers = append(r.closers, unregister)
	return nil
}

// posixShell is the bridges' view of the environment: $SHELL is /bin/sh (Codex runs its
// hooks under $SHELL).
func posixShell(k string) string {
	if k == "SHELL" {
		return "/bin/sh"
	}
	return os.Getenv(k)
}

// hookSession describes the session of the agent id for the hook bridge.
func (r *Runtime) hookSession(_ context.Context, id string) hookproto.Session {
	s := hookproto.Session{SessionID: id, Model: "scripted"}
	if id == "" {
		s.SessionID = "direct"
	}
	r.mu.Lock()
	a, ts := r.agents[id], r.turns[id]
	r.mu.Unlock()
	if a != nil {
		s.Agent = a.Agent
	}
	if ts != nil {
		s.Turn, s.TurnOpen = ts.Current()
	}
	return s
}

// recordHook appends a hook record to the log of the first agent.
func (r *Runtime) recordHook(ctx context.Context, data dsh.SessionEventData) error {
	log := r.firstLog()
	if log == nil {
		return nil
	}
	_, err := log.Append(context.WithoutCancel(ctx), data)
	return err
}

// follow tracks the open turn of the agent id from log.
func (r *Runtime) follow(id string, log *session.Log) {
	r.mu.Lock()
	ts := r.turns[id]
	if ts == nil {
		ts = &runner.Turns{}
		r.turns[id] = ts
	}
	r.mu.Unlock()
	log.Subscribe(ts.Observe)
}
