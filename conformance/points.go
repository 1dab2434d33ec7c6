package conformance

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	sc "github.com/dshkit/dsh/generated/conformance"
	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/internal/blocktext"
)

// A scripted listener registers at its point by that point's row: the row says how to
// register there, how the script's scope comes from the payload, and which generic
// domain path (waterfall, fold, vote, guard, notification, observer) interprets the
// script. Nothing else here knows a point's name.

// listener is one scripted listener, as its point's row registers it.
type listener struct {
	r     *run
	point string
	acts  []sc.Action
	match func(scope) bool
}

// pointRow registers l on reg at the row's point.
type pointRow func(reg *dsh.Registrar, l *listener)

// points are the extension points a scenario can script, each a row.
var points = map[string]pointRow{
	dsh.PreToolEventName: func(reg *dsh.Registrar, l *listener) {
		reg.OnPreTool(onWaterfall(l, func(p *dsh.PreToolPayload) scope { return callScope(p.Exec) }, dsh.UnmarshalPreToolDecision, nil))
	},
	dsh.PostToolEventName: func(reg *dsh.Registrar, l *listener) {
		reg.OnPostTool(onWaterfall(l, func(p *dsh.PostToolPayload) scope { return callScope(p.Exec) }, postToolDecision,
			addContextOnly[dsh.PostToolDecision](l)))
	},
	dsh.RequestErrorEventName: func(reg *dsh.Registrar, l *listener) {
		reg.OnRequestError(onWaterfall(l, func(p *dsh.RequestErrorPayload) scope {
			return scope{agentID: p.AgentID, handle: p.Agent, turn: p.Turn, step: p.Step}.with("error", p.Failure.Message)
		}, dsh.UnmarshalRequestErrorDecision, nil))
	},
	dsh.PreStepEventName: func(reg *dsh.Registrar, l *listener) {
		reg.OnPreStep(onWaterfall(l, func(p *dsh.PreStepPayload) scope {
			return scope{agentID: p.AgentID, handle: p.Agent, turn: p.Turn, step: p.Step}.with("messages", strings.Join(texts(p.Messages), "|"))
		}, dsh.UnmarshalPreStepDecision, rewriteOrAddContext(l)))
	},
	dsh.ExecuteEventName: func(reg *dsh.Registrar, l *listener) {
		reg.WrapExecute(onWrapper(l, func(p *dsh.ExecutePayload) scope { return callScope(p.Exec) }, dsh.UnmarshalToolExecutionResult))
	},
	dsh.GuardEventName: func(reg *dsh.Registrar, l *listener) {
		reg.Guard(onGuard(l, func(p *dsh.GuardPayload) scope { return callScope(p.Exec) }))
	},
	dsh.RewriteInputEventName: func(reg *dsh.Registrar, l *listener) {
		reg.OnRewriteInput(onRewrite(l, func(p *dsh.RewriteInputPayload) scope {
			s := scope{callID: p.CallID, turn: p.Turn, step: p.Step}.with("args", string(p.Input)).with("modelArgs", string(p.ModelInput))
			if p.AgentID != nil {
				s.agentID = *p.AgentID
			}
			return s
		}))
	},
	dsh.RequestEventName: func(reg *dsh.Registrar, l *listener) {
		reg.OnRequest(onModelFold(l, requestScope, dsh.RequestDecision(dsh.RequestPass{}), dsh.UnmarshalRequestDecision,
			func(p *dsh.RequestPayload, text, with string) dsh.RequestDecision {
				return redactRequest(p.Request, text, with)
			}))
	},
	dsh.ResponseEventName: func(reg *dsh.Registrar, l *listener) {
		reg.OnResponse(onModelFold(l, responseScope, dsh.ResponseDecision(dsh.ResponseAccept{}), dsh.UnmarshalResponseDecision,
			func(p *dsh.ResponsePayload, text, with string) dsh.ResponseDecision {
				return dsh.ResponseReplace{Text: strings.ReplaceAll(blocktext.Text(p.Response.Content, ""), text, with)}
			}))
	},
	dsh.PreCompactEventName: func(reg *dsh.Registrar, l *listener) {
		reg.OnPreCompact(onVote(l, func(p *dsh.PreCompactPayload) scope {
			s := compactScope(p.AgentID, p.Agent, p.Turn, p.Trigger, p.Origin)
			if p.UserInstructions != nil {
				s = s.with("instructions", *p.UserInstructions)
			}
			return s
		}, dsh.PreCompactDecision(dsh.PreCompactProceed{}), dsh.UnmarshalPreCompactDecision, nil))
	},
	dsh.PostCompactEventName: func(reg *dsh.Registrar, l *listener) {
		reg.OnPostCompact(onVote(l, func(p *dsh.PostCompactPayload) scope {
			s := compactScope(p.AgentID, p.Agent, p.Turn, p.Trigger, p.Origin).with("outcome", string(p.Outcome))
			if p.Summary != nil {
				s = s.with("summary", *p.Summary)
			}
			return s
		}, dsh.PostCompactDecision(dsh.PostCompactAccept{}), dsh.UnmarshalPostCompactDecision,
			func(d dsh.PostCompactDecision, text string) dsh.PostCompactDecision {
				var ctxs []dsh.UserMessage
				if a, ok := d.(dsh.PostCompactAppend); ok {
					ctxs = a.Contexts
				}
				return dsh.PostCompactAppend{Contexts: append(append([]dsh.UserMessage{}, ctxs...), l.r.message(text, pluginSource))}
			}))
	},
	dsh.SessionStartEventName: func(reg *dsh.Registrar, l *listener) {
		reg.OnSessionStart(onNotify(l, func(p *dsh.SessionStartPayload) scope {
			return scope{agentID: p.AgentID, handle: p.Agent}.with("source", string(p.Source))
		}))
	},
	dsh.TurnStoppingEventName: func(reg *dsh.Registrar, l *listener) {
		reg.OnTurnStopping(onNotify(l, func(p *dsh.TurnStoppingPayload) scope {
			return scope{agentID: p.AgentID, handle: p.Agent, turn: p.Turn}.
				with("continuations", strconv.Itoa(p.Continuations)).
				with("stopHookActive", strconv.FormatBool(p.StopHookActive))
		}))
	},
	dsh.SubagentStartEventName: func(reg *dsh.Registrar, l *listener) {
		reg.OnSubagentStart(onNotify(l, func(p *dsh.SubagentStartPayload) scope {
			return scope{agentID: p.AgentID, handle: p.Agent}.with("agentType", p.Lineage.AgentType).
				with("parentCallId", p.Lineage.ParentCallID).with("task", p.Task)
		}))
	},
	dsh.SubagentStopEventName: func(reg *dsh.Registrar, l *listener) {
		reg.OnSubagentStop(onNotify(l, func(p *dsh.SubagentStopPayload) scope {
			s := scope{agentID: p.AgentID, handle: p.Agent, turn: p.Turn}.
				with("continuations", strconv.Itoa(p.Continuations)).
				with("stopHookActive", strconv.FormatBool(p.StopHookActive))
			if p.Answer != nil {
				s = s.with("answer", *p.Answer)
			}
			return s
		}))
	},
	dsh.ToolResultEventName: func(reg *dsh.Registrar, l *listener) {
		reg.OnToolResult(onObserve(l, func(p *dsh.ToolResultPayload) scope { return callScope(p.Exec) }))
	},
	dsh.StatusEventName: func(reg *dsh.Registrar, l *listener) {
		reg.OnStatus(onObserve(l, func(p *dsh.StatusPayload) scope {
			return scope{agentID: p.AgentID, handle: p.Agent}.with("status", string(p.Status))
		}))
	},
	dsh.SetupEventName: func(reg *dsh.Registrar, l *listener) {
		reg.OnSetup(onNotify(l, func(p *dsh.SetupPayload) scope {
			return scope{agentID: p.AgentID, handle: p.Agent}.with("trigger", string(p.Trigger))
		}))
	},
	dsh.InstructionsLoadedEventName: func(reg *dsh.Registrar, l *listener) {
		reg.OnInstructionsLoaded(onNotify(l, func(p *dsh.InstructionsLoadedPayload) scope {
			s := scope{agentID: p.AgentID, handle: p.Agent}
			if p.Turn != nil {
				s.turn = *p.Turn
			}
			return s.with("path", p.File.Path).with("reason", string(p.File.Reason))
		}))
	},
	dsh.PostBatchEventName: func(reg *dsh.Registrar, l *listener) {
		reg.OnPostBatch(onNotify(l, func(p *dsh.PostBatchPayload) scope {
			ids := make([]string, len(p.Calls))
			for i, c := range p.Calls {
				ids[i] = c.CallID
			}
			return scope{agentID: p.AgentID, handle: p.Agent, turn: p.Turn, step: p.Step}.with("calls", strings.Join(ids, " "))
		}))
	},
	dsh.TurnInterruptedEventName: func(reg *dsh.Registrar, l *listener) {
		reg.OnTurnInterrupted(onNotify(l, func(p *dsh.TurnInterruptedPayload) scope {
			return scope{agentID: p.AgentID, handle: p.Agent, turn: p.Turn}
		}))
	},
	dsh.AgentErrorEventName: func(reg *dsh.Registrar, l *listener) {
		reg.OnAgentError(onObserve(l, func(p *dsh.AgentErrorPayload) scope {
			return scope{agentID: p.AgentID, handle: p.Agent, turn: p.Turn, step: p.Step}.with("error", p.Error.Message)
		}))
	},
	dsh.InboxInsertedEventName: func(reg *dsh.Registrar, l *listener) {
		reg.OnInboxInserted(onObserve(l, func(p *dsh.InboxInsertedPayload) scope {
			return scope{agentID: p.AgentID, handle: p.Agent}.with("text", blocktext.Text(p.Message.Content, ""))
		}))
	},
	dsh.InboxClaimedEventName: func(reg *dsh.Registrar, l *listener) {
		reg.OnInboxClaimed(onObserve(l, func(p *dsh.InboxClaimedPayload) scope {
			return scope{agentID: p.AgentID, handle: p.Agent, turn: p.Turn}.with("text", blocktext.Text(p.Message.Content, ""))
		}))
	},
	dsh.InboxDiscardedEventName: func(reg *dsh.Registrar, l *listener) {
		reg.OnInboxDiscarded(onObserve(l, func(p *dsh.InboxDiscardedPayload) scope {
			return scope{agentID: p.AgentID, handle: p.Agent}.with("text", blocktext.Text(p.Message.Content, ""))
		}))
	},
}

// errUnsupported reports a point the harness cannot script.
var errUnsupported = errors.New("conformance: unsupported extension point")

// register turns one scripted listener into a registration at its point, by the
// point's row.
func (r *run) register(l sc.Listener) error {
	row, ok := points[l.Point]
	if !ok {
		return fmt.Errorf("%w %q", errUnsupported, l.Point)
	}
	name := ""
	if l.Name != nil {
		name = *l.Name
	}
	reg := r.rt.Registrar(l.Point, name)
	if l.Agent != nil {
		reg = reg.ForAgent(*l.Agent)
	}
	row(reg, &listener{r: r, point: l.Point, acts: l.Do, match: matcher(l.When)})
	return nil
}

// callScope is the scope of a tool call's event.
func callScope(e dsh.ToolExecution) scope {
	s := scope{callID: e.CallID}
	if e.AgentID != nil {
		s.agentID = *e.AgentID
	}
	return s.with("args", string(e.Arguments)).with("modelArgs", string(e.ModelArguments))
}

// responseScope is the scope of an agent/response event.
func responseScope(p *dsh.ResponsePayload) scope {
	s := scope{agentID: p.AgentID, handle: p.Agent, turn: p.Turn, step: p.Step}.with("response", blocktext.Text(p.Response.Content, ""))
	if src, ok := p.Source.(dsh.ResponseByListener); ok {
		s = s.with("source", src.Listener)
	}
	return s
}

// The generic paths, one per domain: each runs the script where the listener's `when`
// matches the scope scopeOf gives, and otherwise leaves the event as if it had no
// listener.

// onWaterfall is the path of a waterfall point (waterfall); transform, when set, gives
// the add-context and rewrite actions their meaning in scope s.
func onWaterfall[P, D any](l *listener, scopeOf func(*P) scope, decode func([]byte) (D, error),
	transform func(s scope) func(D, sc.Action) (D, error)) func(context.Context, *P, dsh.WaterfallNext[D]) (D, error) {
	return func(ctx context.Context, p *P, next dsh.WaterfallNext[D]) (D, error) {
		s := scopeOf(p)
		if !l.match(s) {
			return next.Call(ctx)
		}
		var tf func(D, sc.Action) (D, error)
		if transform != nil {
			tf = transform(s)
		}
		return waterfall(l.r, ctx, s, l.acts, next.Call, decode, tf)
	}
}

// onWrapper is the path of a wrapper point: a waterfall whose chain cannot fail, and
// whose own failure, having no error return, is a panic.
func onWrapper[P, D any](l *listener, scopeOf func(*P) scope, decode func([]byte) (D, error)) func(context.Context, *P, dsh.WrapperNext[D]) D {
	return func(ctx context.Context, p *P, next dsh.WrapperNext[D]) D {
		s := scopeOf(p)
		if !l.match(s) {
			return next.Call(ctx)
		}
		res, err := waterfall(l.r, ctx, s, l.acts, func(ctx context.Context) (D, error) { return next.Call(ctx), nil }, decode, nil)
		if err != nil {
			panic(err) // a wrapper has no error return: its failure is a panic
		}
		return res
	}
}

// onGuard is the path of a guard point (guard); a guard that does not match abstains.
func onGuard[P any](l *listener, scopeOf func(*P) scope) func(context.Context, *P) dsh.GuardVerdict {
	return func(ctx context.Context, p *P) dsh.GuardVerdict {
		s := scopeOf(p)
		if !l.match(s) {
			return dsh.GuardAbstain{}
		}
		return l.r.guard(ctx, s, l.acts)
	}
}

// onRewrite is the path of a rewrite fold (rewrite); a listener that does not match
// keeps the input.
func onRewrite[P any](l *listener, scopeOf func(*P) scope) func(context.Context, *P) (dsh.RewriteDecision, error) {
	return func(ctx context.Context, p *P) (dsh.RewriteDecision, error) {
		s := scopeOf(p)
		if !l.match(s) {
			return dsh.RewriteKeep{}, nil
		}
		return l.r.rewrite(ctx, s, l.acts)
	}
}

// onModelFold is the path of a model-call fold (modelFold): def when the listener does
// not match; redact gives the redact action its meaning on the payload.
func onModelFold[P, D any](l *listener, scopeOf func(*P) scope, def D, decode func([]byte) (D, error),
	redact func(p *P, text, with string) D) func(context.Context, *P) (D, error) {
	return func(ctx context.Context, p *P) (D, error) {
		s := scopeOf(p)
		if !l.match(s) {
			return def, nil
		}
		return modelFold(l.r, ctx, s, l.acts, def, decode, func(text, with string) D { return redact(p, text, with) })
	}
}

// onVote is the path of a vote point (vote): def when the listener does not match;
// addContext, when set, gives add-context its meaning.
func onVote[P, D any](l *listener, scopeOf func(*P) scope, def D, decode func([]byte) (D, error),
	addContext func(D, string) D) func(context.Context, *P) (D, error) {
	return func(ctx context.Context, p *P) (D, error) {
		s := scopeOf(p)
		if !l.match(s) {
			return def, nil
		}
		return vote(l.r, ctx, s, l.acts, def, decode, addContext)
	}
}

// onNotify is the path of a notification point (notify), whose listener may fail.
func onNotify[P any](l *listener, scopeOf func(*P) scope) func(context.Context, *P) error {
	return func(ctx context.Context, p *P) error {
		s := scopeOf(p)
		if !l.match(s) {
			return nil
		}
		return l.r.notify(ctx, s, l.acts)
	}
}

// onObserve is the path of an observer point, which cannot fail: a failure panics.
func onObserve[P any](l *listener, scopeOf func(*P) scope) func(context.Context, *P) {
	return func(ctx context.Context, p *P) {
		s := scopeOf(p)
		if !l.match(s) {
			return
		}
		if err := l.r.notify(ctx, s, l.acts); err != nil {
			panic(err)
		}
	}
}

// addContextOnly gives add-context, its text expanded in the scope, its meaning at a
// point whose decisions take contexts (addContext); other transforms fail.
func addContextOnly[D any](l *listener) func(s scope) func(D, sc.Action) (D, error) {
	return func(s scope) func(D, sc.Action) (D, error) {
		return func(d D, a sc.Action) (D, error) {
			ac, ok := a.(sc.ActAddContext)
			if !ok {
				return d, fmt.Errorf("conformance: %s is not supported at %s", a.Kind(), l.point)
			}
			out, err := addContext(l.r, s.label(ac.Text), d)
			if err != nil {
				return d, err
			}
			return out.(D), nil
		}
	}
}

// rewriteOrAddContext is agent/pre-step's transform: rewrite replaces the text of the
// first message an enter decision enters; add-context appends one.
func rewriteOrAddContext(l *listener) func(s scope) func(dsh.PreStepDecision, sc.Action) (dsh.PreStepDecision, error) {
	add := addContextOnly[dsh.PreStepDecision](l)
	return func(s scope) func(dsh.PreStepDecision, sc.Action) (dsh.PreStepDecision, error) {
		addCtx := add(s)
		return func(d dsh.PreStepDecision, a sc.Action) (dsh.PreStepDecision, error) {
			rw, ok := a.(sc.ActRewrite)
			if !ok {
				return addCtx(d, a)
			}
			enter, ok := d.(dsh.PreStepEnter)
			if !ok || len(enter.Messages) == 0 {
				return d, fmt.Errorf("conformance: rewrite needs an enter decision with messages, got %T", d)
			}
			msgs := append([]dsh.UserMessage{}, enter.Messages...)
			msgs[0].Content = []dsh.ContentBlock{dsh.TextBlock{Text: s.label(rw.Text)}}
			enter.Messages = msgs
			return enter, nil
		}
	}
}
