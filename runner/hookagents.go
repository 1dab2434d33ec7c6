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
)

// hookAgents runs agent hooks' verifiers (hookproto.AgentVerifier) for a session: each a
// child agent loop of its own over the session's tools less the eval's Without, plus its
// answer tool, on the session's model, with a log in memory. Its calls go through a
// registry of their own, which holds only the dialect's dontAsk permissions (the engine
// runs the verifier under dontAsk): what would ask is denied, so the verifier reads and
// never writes, and no hook fires for its calls (an agent hook cannot start a verifier of
// its verifier).
type hookAgents struct{ s *Session }

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
	log, err := session.Open(ctx, session.NewMemory())
	if err != nil {
		return nil, err
	}
	cfg := s.LLM
	if r.Model != "" {
		cfg.Model = r.Model
	}
	v, err := loop.New(ctx, loop.Config{ID: "hook-verifier", SessionID: "ses_" + rand.Text(), Workspace: s.cfg.Workspace, Registry: hooks,
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
	mode, err := permissions.Mode(t, "dontAsk")
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
		Texts: t, Unanswered: t.Modes["dontAsk"].Unanswered}, nil
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
