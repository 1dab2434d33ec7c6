package runner

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/dshkit/dsh/bridges/hookproto"
	"github.com/dshkit/dsh/bridges/permissions"
	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/loop"
	"github.com/dshkit/dsh/runtime/permrule"
	"github.com/dshkit/dsh/runtime/session"
	"github.com/dshkit/dsh/runtime/tools"
	"github.com/dshkit/dsh/runtime/tools/builtin"
)

// hookAgents runs agent hooks' verifiers (hookproto.AgentVerifier) for a session: each a
// child agent loop of its own over the session's tools less the eval's Without, plus its
// answer tool, on the session's model, with a log in memory. Its calls go through a
// registry of their own: first the session's hooks, then the dialect's dontAsk
// permissions (the engine runs the verifier under dontAsk), so that what would ask is
// denied and the verifier reads and never writes. The hooks fire for the tool events
// only (tools/*: PreToolUse, PostToolUse, PostToolUseFailure), as Claude Code 2.1.328
// fires them for its verifier's calls (subagent/agent-hook-tools), with the eval's
// AgentID and the dontAsk mode; no prompt or agent handler runs there
// (hookproto.Session.Verifier), so no verifier starts a verifier of its own.
type hookAgents struct{ s *Session }

// verifierMode is the permission mode a verifier runs under (the dialect's name).
const verifierMode = "dontAsk"

// errVerifierTurns is why a verifier past its turn bound was stopped.
var errVerifierTurns = errors.New("the verifier reached its turn bound")

// VerifyHook runs r's verifier until it calls r.AnswerTool (the input of its first call is
// the answer) or its turn ends, ctx is done or it has made r.MaxTurns model requests.
func (h hookAgents) VerifyHook(ctx context.Context, r hookproto.AgentEval) (json.RawMessage, error) {
	s := h.s
	if s.evalModel == nil {
		return nil, errors.New("the session has no model")
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	reg := tools.NewRegistry()
	for _, d := range s.Tools.Visible("") {
		if d.Name == r.AnswerTool || slices.Contains(r.Without, d.Name) {
			continue
		}
		if _, err := reg.Register(d); err != nil {
			return nil, err
		}
	}
	var (
		mu     sync.Mutex
		answer json.RawMessage
	)
	if _, err := reg.Register(tools.Definition{Name: r.AnswerTool, Description: r.AnswerDescription, InputSchema: r.AnswerSchema,
		Run: func(ctx context.Context, rc *tools.RunContext) (any, error) {
			var in json.RawMessage
			if err := rc.BindArguments(&in); err != nil {
				return nil, err
			}
			mu.Lock()
			if answer == nil {
				answer = in
			}
			mu.Unlock()
			rc.ConcludeTurn() // the answer ends the verifier, as the engine stops at it
			return "Structured output provided successfully", nil
		}}); err != nil {
		return nil, err
	}
	hooks := dsh.NewRegistry()
	id := "hook-verifier"
	if r.AgentID != "" && s.verifierHooks != nil {
		id = r.AgentID
		s.verifiers.Store(id, struct{}{})
		defer s.verifiers.Delete(id)
		session := dsh.NewRegistry(dsh.WithLogger(s.logger))
		defer s.verifierHooks(session.Plugin(s.cfg.Hooks.desc().Plugin()))()
		forwardToolEvents(hooks.Plugin("hooks"), session)
	}
	if p, err := h.policy(r.AnswerTool); err != nil {
		return nil, err
	} else if p != nil {
		defer p.Register(hooks.Plugin("permissions"))()
	}
	turns := 0
	hooks.Plugin("verifier").OnRequest(func(ctx context.Context, p *dsh.RequestPayload) (dsh.RequestDecision, error) {
		mu.Lock()
		turns++
		over := r.MaxTurns > 0 && turns > r.MaxTurns
		mu.Unlock()
		if over {
			cancel(errVerifierTurns)
		}
		return dsh.RequestPass{}, nil
	})
	if l := h.reminders(r, reg); l != nil {
		hooks.Plugin("session-reminders").OnPreStep(l)
	}
	log, err := session.Open(ctx, session.NewMemory())
	if err != nil {
		return nil, err
	}
	cfg := s.LLM
	if r.Model != "" {
		cfg.Model = r.Model
	}
	v, err := loop.New(ctx, loop.Config{ID: id, SessionID: "ses_" + rand.Text(), Workspace: s.cfg.Workspace, Registry: hooks,
		Tools: tools.New(reg, hooks, s.ToolOptions...), Model: s.evalModel, Log: log, System: r.System, LLM: cfg, Logger: s.logger})
	if err != nil {
		return nil, err
	}
	defer func() { _ = v.Close() }()
	var (
		got  json.RawMessage
		werr error
	)
	for nudge := 0; ; nudge++ {
		text := r.Prompt
		if nudge > 0 {
			text = r.Enforce
		}
		if err := v.Followup(ctx, dsh.UserText(dsh.SourceUser{}, text)); err != nil {
			return nil, err
		}
		werr = v.Wait(ctx)
		mu.Lock()
		got = answer
		mu.Unlock()
		if got != nil || werr != nil || ctx.Err() != nil || r.Enforce == "" || nudge >= r.EnforceTimes || turnError(log) != "" {
			break
		}
	}
	switch {
	case got != nil:
		return got, nil
	case errors.Is(context.Cause(ctx), errVerifierTurns):
		return nil, fmt.Errorf("%w: it made %d model requests without calling %s", hookproto.ErrAgentNoVerdict, r.MaxTurns, r.AnswerTool)
	case werr != nil:
		return nil, werr
	}
	if msg := turnError(log); msg != "" {
		return nil, errors.New(msg)
	}
	return nil, fmt.Errorf("%w: its turn ended without a call of %s", hookproto.ErrAgentNoVerdict, r.AnswerTool)
}

// forwardToolEvents registers on r listeners that run the tool events' listeners of
// from (the session's hook bridge, registered there alone) at their place in r's chains:
// tools/rewrite-input (where the bridge runs PreToolUse), pre-execute, execute,
// post-execute and result. No other event reaches from: the verifier's session, prompt and
// turn events fire no hook. from's rewrite-input fold has one listener, the bridge's, whose
// decision is r's listener's.
func forwardToolEvents(r *dsh.Registrar, from *dsh.Registry) {
	r.OnRewriteInput(func(ctx context.Context, p *dsh.RewriteInputPayload) (dsh.RewriteDecision, error) {
		var d dsh.RewriteDecision = dsh.RewriteKeep{}
		err := from.RunRewriteInput(ctx, p, 0, func(_ context.Context, _ string, got dsh.RewriteDecision) (*dsh.RewriteInputPayload, error) {
			if got.Kind() != (dsh.RewriteKeep{}).Kind() {
				d = got
			}
			return nil, nil
		})
		return d, err
	})
	r.OnPreTool(func(ctx context.Context, p *dsh.PreToolPayload, next dsh.PreToolNext) (dsh.PreToolDecision, error) {
		return from.RunPreTool(ctx, p, func(ctx context.Context) (dsh.PreToolDecision, error) { return next.Call(ctx) })
	})
	r.WrapExecute(func(ctx context.Context, p *dsh.ExecutePayload, next dsh.ExecuteNext) dsh.ToolExecutionResult {
		res, err := from.RunExecute(ctx, p, func(ctx context.Context) dsh.ToolExecutionResult { return next.Call(ctx) })
		if err != nil {
			return tools.Fail(ctx, err)
		}
		return res
	})
	r.OnPostTool(func(ctx context.Context, p *dsh.PostToolPayload, next dsh.PostToolNext) (dsh.PostToolDecision, error) {
		return from.RunPostTool(ctx, p, func(ctx context.Context) (dsh.PostToolDecision, error) { return next.Call(ctx) })
	})
	r.OnToolResult(func(ctx context.Context, p *dsh.ToolResultPayload) {
		_ = from.EmitToolResult(ctx, p) // tools/result observes: a failing listener changes nothing
	})
}

// reminders is the pre-step listener that gives the verifier the session's reminders
// (Session.sessionReminders, for the verifier's model and its tools reg) where the
// dialect's toolset says (builtin.VerifierReminders): once, after the results of its
// first calls (at the end of the batch of the first step that follows calls), as Claude
// Code 2.1.328 does (subagent/agent-hook-tools); the request that asks a verifier that
// answered with text only to answer gets none (subagent/agent-hook-no-verdict). Nil when
// the verifier gets none.
func (h hookAgents) reminders(r hookproto.AgentEval, reg *tools.Registry) dsh.PreStepListener {
	s := h.s
	o := s.Builtin
	if r.Model != "" {
		o.Model = r.Model
	}
	if builtin.VerifierReminders(o) != builtin.VerifierAfterFirstResults {
		return nil
	}
	blocks := s.sessionReminders(o, reg)
	if len(blocks) == 0 {
		return nil
	}
	plugin := s.cfg.Hooks.desc().Table.Plugin
	var once sync.Once
	return func(ctx context.Context, p *dsh.PreStepPayload, next dsh.PreStepNext) (dsh.PreStepDecision, error) {
		d, err := next.Call(ctx)
		enter, ok := d.(dsh.PreStepEnter)
		if err != nil || !ok || p.Step < 2 {
			// A turn's first step follows no calls (the prompt, or the request to answer).
			return d, err
		}
		due := false
		once.Do(func() { due = true })
		if !due {
			return d, nil
		}
		m := dsh.UserMessage{ID: "session-reminders-" + rand.Text(), Role: dsh.UserMessageRoleUser, Content: blocks,
			Source: dsh.SourcePlugin{Plugin: plugin, Form: dsh.PluginFormCatalog}}
		return dsh.PreStepEnter{Messages: append(slices.Clone(enter.Messages), m)}, nil
	}
}

// verifierSession marks the session of a running verifier's calls (Session.verifiers):
// its agent id, the verifier's mode, and no prompt or agent handler.
func (s *Session) verifierSession(fn hookproto.SessionFunc) hookproto.SessionFunc {
	return func(ctx context.Context, agentID string) hookproto.Session {
		hs := fn(ctx, agentID)
		if _, ok := s.verifiers.Load(agentID); ok {
			hs.AgentID, hs.PermissionMode, hs.Verifier = agentID, verifierMode, true
		}
		return hs
	}
}

// turnError is the error the verifier's last turn ended on ("" when it did not).
func turnError(log *session.Log) string {
	msg := ""
	for end, err := range session.Of[dsh.TurnEnd](log.Events()) {
		if err != nil {
			return err.Error()
		}
		msg = ""
		if e, ok := end.Reason.(dsh.TurnEndError); ok {
			msg = "its model failed: " + e.Error.Message
		}
	}
	return msg
}

// policy is the verifier's permission plugin: the dialect's dontAsk mode and a rule that
// allows answerTool (when its table has no modes: only Read and answerTool run).
func (h hookAgents) policy(answerTool string) (interface {
	Register(*dsh.Registrar) func()
}, error) {
	table := h.s.cfg.Hooks.desc().Table
	t := table.Permissions
	if t == nil {
		return pluginFunc(func(r *dsh.Registrar) func() { return r.OnPreTool(denyUnlessRead(answerTool)) }), nil
	}
	mode, err := permissions.Mode(t, verifierMode)
	if err != nil {
		return nil, fmt.Errorf("agent hook verifier: %w", err)
	}
	// The answer tool is the verifier's own: it always runs.
	answer, err := permrule.Parse(answerTool)
	if err != nil {
		return nil, fmt.Errorf("agent hook verifier: %w", err)
	}
	rules := []permrule.Entry{{Rule: answer, Behavior: permrule.Allow, Source: "the agent hook's verifier"}}
	return &permissions.Plugin{Policy: permrule.Policy{Rules: rules, Mode: mode, As: t.RulesAs},
		Env:   permrule.Env{Tools: permissions.RuleTable(table), Dir: h.s.cfg.Workspace, Root: h.s.cfg.Hooks.project(h.s.cfg.Workspace)},
		Texts: t, Unanswered: t.Modes[verifierMode].Unanswered}, nil
}

// denyUnlessRead denies every call but Read's and the answer tool's.
func denyUnlessRead(answerTool string) dsh.PreToolListener {
	return func(ctx context.Context, p *dsh.PreToolPayload, next dsh.PreToolNext) (dsh.PreToolDecision, error) {
		if p.Exec.Name == "Read" || p.Exec.Name == answerTool {
			return next.Call(ctx)
		}
		return dsh.PreToolDeny{Reason: "an agent hook's verifier may only read"}, nil
	}
}
