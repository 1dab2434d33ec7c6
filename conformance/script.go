package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/dshkit/dsh/generated/dsh"
	sc "github.com/dshkit/dsh/generated/conformance"
)

// scope is what a script knows about the event it runs at.
type scope struct {
	agentID string
	handle  dsh.Agent
	callID  string
	turn    int
	step    int
}

// label expands the placeholders of a record label.
func (s scope) label(l string) string {
	return strings.NewReplacer("{callId}", s.callID, "{turn}", strconv.Itoa(s.turn), "{step}", strconv.Itoa(s.step)).Replace(l)
}

// errScript is the error a `fail` action returns.
type errScript struct{ msg, code string }

func (e *errScript) Error() string { return e.msg }

// effect runs an action that has a side effect only (record, steer, inject, followup, halt,
// cancel, wait, sleep, panic); it reports whether a was one of them.
func (r *run) effect(ctx context.Context, s scope, a sc.Action) (bool, error) {
	switch a := a.(type) {
	case sc.ActRecord:
		r.record(s.label(a.Label))
	case sc.ActPanic:
		panic(a.Message)
	case sc.ActSteer:
		h, err := r.handle(s)
		if err != nil {
			return true, err
		}
		return true, h.Steer(ctx, r.message(a.Text, pluginSource))
	case sc.ActInject:
		h, err := r.handle(s)
		if err != nil {
			return true, err
		}
		return true, h.Inject(ctx, r.message(a.Text, pluginSource))
	case sc.ActFollowup:
		ag := r.existing(s.agentID)
		if ag == nil {
			return true, fmt.Errorf("followup: no agent %q", s.agentID)
		}
		return true, ag.Followup(ctx, r.message(a.Text, dsh.SourceUser{}))
	case sc.ActHalt:
		h, err := r.handle(s)
		if err != nil {
			return true, err
		}
		h.Halt(a.Reason)
	case sc.ActCancel:
		ag := r.existing(s.agentID)
		if ag == nil {
			return true, fmt.Errorf("cancel: no agent %q", s.agentID)
		}
		ag.Cancel(string(a.Cause), a.KeepInbox != nil && *a.KeepInbox)
	case sc.ActWait:
		return true, r.wait(ctx, a.Gate)
	case sc.ActSleep:
		select {
		case <-time.After(time.Duration(a.MS) * time.Millisecond):
		case <-ctx.Done():
		}
	default:
		return false, nil
	}
	return true, nil
}

// handle returns the dsh.Agent of a scope: the payload's, else the harness's agent.
func (r *run) handle(s scope) (dsh.Agent, error) {
	if s.handle != nil {
		return s.handle, nil
	}
	if ag := r.existing(s.agentID); ag != nil {
		return ag.Handle(), nil
	}
	return nil, fmt.Errorf("the event has no agent to steer, inject into or halt")
}

// waterfall interprets a listener script at a waterfall point. decode turns a `decide`
// action's JSON into a decision; transform applies add-context and rewrite to the decision
// next returned.
func waterfall[D any](r *run, ctx context.Context, s scope, acts []sc.Action, next func(context.Context) (D, error),
	decode func([]byte) (D, error), transform func(D, sc.Action) (D, error)) (D, error) {
	var cur D
	have := false
	for _, a := range acts {
		if ok, err := r.effect(ctx, s, a); ok {
			if err != nil {
				return cur, err
			}
			continue
		}
		switch a := a.(type) {
		case sc.ActNext:
			d, err := next(ctx)
			if a.Twice != nil && *a.Twice {
				_, _ = next(ctx) // must fail: next is single-use
			}
			if err != nil {
				return d, err
			}
			cur, have = d, true
		case sc.ActDecide:
			return decode(a.Decision)
		case sc.ActFail:
			var zero D
			return zero, scriptError(a.Message, a.Code)
		case sc.ActAddContext, sc.ActRewrite:
			if !have {
				d, err := next(ctx)
				if err != nil {
					return d, err
				}
				cur, have = d, true
			}
			if transform == nil {
				return cur, fmt.Errorf("conformance: %s is not supported at this point", a.Kind())
			}
			d, err := transform(cur, a)
			if err != nil {
				return d, err
			}
			cur = d
		default:
			return cur, fmt.Errorf("conformance: action %s is not supported in a listener", a.Kind())
		}
	}
	if !have {
		return next(ctx)
	}
	return cur, nil
}

// scriptError is the error of a `fail` action: structured when it has a code.
func scriptError(msg string, code *string) error {
	if code != nil {
		return &HarnessError{Code: *code, Message: msg}
	}
	return &errScript{msg: msg}
}

// HarnessError is a structured error a scripted listener or body fails with; a runtime
// maps it onto its structured error (dsh: tools.Error{Name: "HarnessError", Code}).
type HarnessError struct {
	// Code is the machine-readable code.
	Code string
	// Message is the message.
	Message string
}

func (e *HarnessError) Error() string { return e.Message }

// notify interprets a script at a notification or observer point.
func (r *run) notify(ctx context.Context, s scope, acts []sc.Action) error {
	for _, a := range acts {
		ok, err := r.effect(ctx, s, a)
		if err != nil {
			return err
		}
		if ok {
			continue
		}
		if f, isFail := a.(sc.ActFail); isFail {
			return scriptError(f.Message, f.Code)
		}
		return fmt.Errorf("conformance: action %s is not supported in a notification", a.Kind())
	}
	return nil
}

// guard interprets a guard script: deny with `decide`, fail (a guard cannot return an error:
// it panics with it), or abstain.
func (r *run) guard(ctx context.Context, s scope, acts []sc.Action) dsh.GuardVerdict {
	for _, a := range acts {
		ok, err := r.effect(ctx, s, a)
		if err != nil {
			panic(err)
		}
		if ok {
			continue
		}
		switch a := a.(type) {
		case sc.ActDecide:
			v, err := dsh.UnmarshalGuardVerdict(a.Decision)
			if err != nil {
				panic(err)
			}
			return v
		case sc.ActFail:
			panic(scriptError(a.Message, a.Code))
		default:
			panic(fmt.Errorf("conformance: action %s is not supported in a guard", a.Kind()))
		}
	}
	return dsh.GuardAbstain{}
}

// addContextTo appends a plugin context to an accept or enter decision.
func addContext[D any](r *run, text string, d D) (D, error) {
	msg := r.message(text, pluginSource)
	switch v := any(d).(type) {
	case dsh.PostToolAccept:
		v.AdditionalContexts = append(append([]dsh.UserMessage{}, v.AdditionalContexts...), msg)
		return any(v).(D), nil
	case dsh.PreStepEnter:
		v.Messages = append(append([]dsh.UserMessage{}, v.Messages...), msg)
		return any(v).(D), nil
	case dsh.PostToolBlock:
		v.AdditionalContexts = append(append([]dsh.UserMessage{}, v.AdditionalContexts...), msg)
		return any(v).(D), nil
	}
	return d, fmt.Errorf("conformance: add-context needs an accept, block or enter decision, got %T", d)
}

// errUnsupported reports a point the harness cannot script.
var errUnsupported = errors.New("conformance: unsupported extension point")

// register turns one scripted listener into a registration at its point.
func (r *run) register(l sc.Listener) error {
	name := ""
	if l.Name != nil {
		name = *l.Name
	}
	reg := r.rt.Registrar(l.Point, name)
	if l.Agent != nil {
		reg = reg.ForAgent(*l.Agent)
	}
	acts := l.Do
	callScope := func(e dsh.ToolExecution) scope {
		s := scope{callID: e.CallID}
		if e.AgentID != nil {
			s.agentID = *e.AgentID
		}
		return s
	}
	switch l.Point {
	case dsh.PreToolEventName:
		reg.OnPreTool(func(ctx context.Context, p *dsh.PreToolPayload, next dsh.PreToolNext) (dsh.PreToolDecision, error) {
			return waterfall(r, ctx, callScope(p.Exec), acts, next, dsh.UnmarshalPreToolDecision, nil)
		})
	case dsh.PostToolEventName:
		reg.OnPostTool(func(ctx context.Context, p *dsh.PostToolPayload, next dsh.PostToolNext) (dsh.PostToolDecision, error) {
			return waterfall(r, ctx, callScope(p.Exec), acts, next, dsh.UnmarshalPostToolDecision,
				func(d dsh.PostToolDecision, a sc.Action) (dsh.PostToolDecision, error) {
					if ac, ok := a.(sc.ActAddContext); ok {
						return addContext(r, ac.Text, d)
					}
					return d, fmt.Errorf("conformance: %s is not supported at %s", a.Kind(), l.Point)
				})
		})
	case dsh.GuardEventName:
		reg.Guard(func(ctx context.Context, p *dsh.GuardPayload) dsh.GuardVerdict {
			return r.guard(ctx, callScope(p.Exec), acts)
		})
	case dsh.ExecuteEventName:
		reg.WrapExecute(func(ctx context.Context, p *dsh.ExecutePayload, next dsh.ExecuteNext) dsh.ToolExecutionResult {
			res, err := waterfall(r, ctx, callScope(p.Exec), acts,
				func(ctx context.Context) (dsh.ToolExecutionResult, error) { return next(ctx), nil },
				dsh.UnmarshalToolExecutionResult, nil)
			if err != nil {
				panic(err) // a wrapper has no error return: its failure is a panic
			}
			return res
		})
	case dsh.ToolResultEventName:
		reg.OnToolResult(func(ctx context.Context, p *dsh.ToolResultPayload) {
			if err := r.notify(ctx, callScope(p.Exec), acts); err != nil {
				panic(err)
			}
		})
	case dsh.PreStepEventName:
		reg.OnPreStep(func(ctx context.Context, p *dsh.PreStepPayload, next dsh.PreStepNext) (dsh.PreStepDecision, error) {
			s := scope{agentID: p.AgentID, handle: p.Agent, turn: p.Turn, step: p.Step}
			return waterfall(r, ctx, s, acts, next, dsh.UnmarshalPreStepDecision,
				func(d dsh.PreStepDecision, a sc.Action) (dsh.PreStepDecision, error) {
					switch a := a.(type) {
					case sc.ActAddContext:
						return addContext(r, a.Text, d)
					case sc.ActRewrite:
						enter, ok := d.(dsh.PreStepEnter)
						if !ok || len(enter.Messages) == 0 {
							return d, fmt.Errorf("conformance: rewrite needs an enter decision with messages, got %T", d)
						}
						msgs := append([]dsh.UserMessage{}, enter.Messages...)
						msgs[0].Content = []dsh.ContentBlock{dsh.TextBlock{Text: a.Text}}
						enter.Messages = msgs
						return enter, nil
					}
					return d, fmt.Errorf("conformance: %s is not supported at %s", a.Kind(), l.Point)
				})
		})
	case dsh.RequestErrorEventName:
		reg.OnRequestError(func(ctx context.Context, p *dsh.RequestErrorPayload, next dsh.RequestErrorNext) (dsh.RequestErrorDecision, error) {
			s := scope{agentID: p.AgentID, handle: p.Agent, turn: p.Turn, step: p.Step}
			return waterfall(r, ctx, s, acts, next, dsh.UnmarshalRequestErrorDecision, nil)
		})
	case dsh.SessionStartEventName:
		reg.OnSessionStart(func(ctx context.Context, p *dsh.SessionStartPayload) error {
			return r.notify(ctx, scope{agentID: p.AgentID, handle: p.Agent}, acts)
		})
	case dsh.TurnStoppingEventName:
		reg.OnTurnStopping(func(ctx context.Context, p *dsh.TurnStoppingPayload) error {
			return r.notify(ctx, scope{agentID: p.AgentID, handle: p.Agent, turn: p.Turn}, acts)
		})
	case dsh.StatusEventName:
		reg.OnStatus(func(ctx context.Context, p *dsh.StatusPayload) {
			if err := r.notify(ctx, scope{agentID: p.AgentID, handle: p.Agent}, acts); err != nil {
				panic(err)
			}
		})
	default:
		return fmt.Errorf("%w %q", errUnsupported, l.Point)
	}
	return nil
}

// tool builds a scripted tool.
func (r *run) tool(t sc.Tool) Tool {
	out := Tool{Name: t.Name, Parallel: t.Parallel != nil && *t.Parallel, OutputSchema: t.OutputSchema}
	body := t.Body
	out.Run = func(ctx context.Context, call Call) (any, error) {
		s := scope{agentID: call.AgentID(), callID: call.CallID()}
		var value any = json.RawMessage("null")
		for _, a := range body {
			if ok, err := r.effect(ctx, s, a); ok {
				if err != nil {
					return nil, err
				}
				continue
			}
			switch a := a.(type) {
			case sc.ActValue:
				value = a.Value
			case sc.ActError:
				return nil, scriptError(a.Message, a.Code)
			case sc.ActFail:
				return nil, scriptError(a.Message, a.Code)
			case sc.ActDefer:
				if err := call.Defer(r.message(a.Text, pluginSource)); err != nil {
					return nil, err
				}
			case sc.ActConclude:
				call.Conclude()
			default:
				return nil, fmt.Errorf("conformance: action %s is not supported in a tool body", a.Kind())
			}
		}
		return value, nil
	}
	if t.Finalize != nil {
		fin := t.Finalize
		out.Finalize = func(res dsh.ToolExecutionResult) ([]dsh.ContentBlock, error) {
			for _, a := range fin {
				if ok, err := r.effect(context.Background(), scope{}, a); ok {
					if err != nil {
						return nil, err
					}
					continue
				}
				switch a := a.(type) {
				case sc.ActValue:
					var text string
					if err := json.Unmarshal(a.Value, &text); err != nil {
						return nil, fmt.Errorf("conformance: a finalizer's value must be a string")
					}
					return []dsh.ContentBlock{dsh.TextBlock{Text: text}}, nil
				case sc.ActFail, sc.ActError:
					return nil, errors.New("finalizer failed")
				default:
					return nil, fmt.Errorf("conformance: action %s is not supported in a finalizer", a.Kind())
				}
			}
			return nil, nil
		}
	}
	return out
}

// setup builds a scenario's world.
func (r *run) setup(s sc.Setup) error {
	max, cap := 0, 0
	if s.MaxParallelToolCalls != nil {
		max = *s.MaxParallelToolCalls
	}
	if s.ContinuationCap != nil {
		cap = *s.ContinuationCap
	}
	r.rt.SetLimits(max, cap)
	r.rt.SetModel(s.Model)
	if s.Approver != "" {
		answer := dsh.ApprovalOutcome(s.Approver)
		r.rt.SetApprover(func(ctx context.Context, tool string) (dsh.ApprovalOutcome, error) {
			switch s.Approver {
			case "none":
				return "", errors.New("conformance: no answer")
			case "hang":
				<-ctx.Done()
				return dsh.ApprovalOutcomeCancelled, nil
			}
			return answer, nil
		})
	}
	for _, t := range s.Tools {
		if err := r.rt.RegisterTool(r.tool(t)); err != nil {
			return err
		}
	}
	for i, l := range s.Listeners {
		if err := r.register(l); err != nil {
			return fmt.Errorf("listeners[%d]: %w", i, err)
		}
	}
	return nil
}
