package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	sc "github.com/dshkit/dsh/generated/conformance"
	"github.com/dshkit/dsh/generated/dsh"
)

// scope is what a script knows about the event it runs at.
type scope struct {
	agentID string
	handle  dsh.Agent
	callID  string
	turn    int
	step    int
	// vars are the values of the point-specific placeholders (see #Action).
	vars map[string]string
}

// label expands the placeholders of a label, message text or gate name.
func (s scope) label(l string) string {
	if !strings.Contains(l, "{") {
		return l
	}
	pairs := []string{"{callId}", s.callID, "{turn}", strconv.Itoa(s.turn), "{step}", strconv.Itoa(s.step)}
	for _, k := range []string{"messages", "text", "status", "source", "continuations", "stopHookActive", "error",
		"trigger", "origin", "instructions", "outcome", "summary", "args", "modelArgs", "tools", "system", "attempt",
		"response", "calls", "path", "reason", "agentType", "parentCallId", "task", "answer"} {
		pairs = append(pairs, "{"+k+"}", s.vars[k])
	}
	return strings.NewReplacer(pairs...).Replace(l)
}

// with returns s with the placeholder k set to v.
func (s scope) with(k, v string) scope {
	vars := make(map[string]string, len(s.vars)+1)
	for kk, vv := range s.vars {
		vars[kk] = vv
	}
	vars[k] = v
	s.vars = vars
	return s
}

// matcher returns the filter of a listener's `when`: whether the script runs at an event
// of scope s. times counts the matching events, safely across goroutines.
func matcher(w *sc.When) func(s scope) bool {
	if w == nil {
		return func(scope) bool { return true }
	}
	var mu sync.Mutex
	seen := 0
	return func(s scope) bool {
		if (w.Turn != nil && *w.Turn != s.turn) || (w.Step != nil && *w.Step != s.step) ||
			(w.CallID != nil && *w.CallID != s.callID) {
			return false
		}
		if w.Times == nil {
			return true
		}
		mu.Lock()
		defer mu.Unlock()
		seen++
		return seen <= *w.Times
	}
}

// errScript is the error a `fail` action returns.
type errScript struct{ msg string }

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
		return true, h.Steer(ctx, r.message(s.label(a.Text), pluginSource))
	case sc.ActInject:
		h, err := r.handle(s)
		if err != nil {
			return true, err
		}
		return true, h.Inject(ctx, r.message(s.label(a.Text), pluginSource))
	case sc.ActFollowup:
		ag := r.existing(s.agentID)
		if ag == nil {
			return true, fmt.Errorf("followup: no agent %q", s.agentID)
		}
		return true, ag.Followup(ctx, r.message(s.label(a.Text), dsh.SourceUser{}))
	case sc.ActHalt:
		h, err := r.handle(s)
		if err != nil {
			return true, err
		}
		h.Halt(s.label(a.Reason))
	case sc.ActCancel:
		ag := r.existing(s.agentID)
		if ag == nil {
			return true, fmt.Errorf("cancel: no agent %q", s.agentID)
		}
		ag.Cancel(string(a.Cause), a.KeepInbox != nil && *a.KeepInbox)
	case sc.ActWait:
		if a.IgnoreCancel != nil && *a.IgnoreCancel {
			return true, r.wait(r.ctx, s.label(a.Gate)) // bounded by the scenario only
		}
		return true, r.wait(ctx, s.label(a.Gate))
	case sc.ActRelease:
		r.release(s.label(a.Gate))
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

// ToolErrorInfo returns {HarnessError, Code}, so that a runtime reading structured error
// identity through this method (dsh: tools.InfoError) reports it in the failure's info.
func (e *HarnessError) ToolErrorInfo() dsh.ToolErrorInfo {
	return dsh.ToolErrorInfo{Name: "HarnessError", Code: e.Code}
}

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

// rewrite interprets a script at tools/rewrite-input, a fold without next: decide returns
// the decision, fail an error; a script that ends without deciding keeps the input.
func (r *run) rewrite(ctx context.Context, s scope, acts []sc.Action) (dsh.RewriteDecision, error) {
	for _, a := range acts {
		ok, err := r.effect(ctx, s, a)
		if err != nil {
			return nil, err
		}
		if ok {
			continue
		}
		switch a := a.(type) {
		case sc.ActDecide:
			return dsh.UnmarshalRewriteDecision(a.Decision)
		case sc.ActFail:
			return nil, scriptError(a.Message, a.Code)
		default:
			return nil, fmt.Errorf("conformance: action %s is not supported at tools/rewrite-input", a.Kind())
		}
	}
	return dsh.RewriteKeep{}, nil
}

// addContext appends a plugin context to an accept, block or enter decision.
func addContext(r *run, text string, d any) (any, error) {
	msg := r.message(text, pluginSource)
	switch v := d.(type) {
	case dsh.PostToolAccept:
		v.AdditionalContexts = append(append([]dsh.UserMessage{}, v.AdditionalContexts...), msg)
		return v, nil
	case dsh.PreStepEnter:
		v.Messages = append(append([]dsh.UserMessage{}, v.Messages...), msg)
		return v, nil
	case dsh.PostToolBlock:
		v.AdditionalContexts = append(append([]dsh.UserMessage{}, v.AdditionalContexts...), msg)
		return v, nil
	}
	return d, fmt.Errorf("conformance: add-context needs an accept, block or enter decision, got %T", d)
}

// requestScope is the scope of an agent/request event.
func requestScope(p *dsh.RequestPayload) scope {
	var msgs, tools []string
	for _, m := range p.Request.Messages {
		msgs = append(msgs, BlockTexts(m.Content)...)
	}
	for _, t := range p.Request.Tools {
		tools = append(tools, t.Name)
	}
	system := ""
	if p.Request.Config.System != nil {
		system = *p.Request.Config.System
	}
	return scope{agentID: p.AgentID, handle: p.Agent, turn: p.Turn, step: p.Step}.
		with("messages", strings.Join(msgs, "|")).with("tools", strings.Join(tools, ",")).
		with("system", system).with("attempt", strconv.Itoa(p.Attempt))
}

// BlockTexts lists the texts of blocks, those of tool results included: what a scenario
// matches messages on. A runtime's own model (dshrt) reads requests with it too.
func BlockTexts(blocks []dsh.ContentBlock) []string {
	var out []string
	for _, b := range blocks {
		//dshvet:partial a scenario matches on text, in messages and tool results; the other blocks have none
		switch b := b.(type) {
		case dsh.TextBlock:
			out = append(out, b.Text)
		case dsh.ToolResultBlock:
			out = append(out, BlockTexts(b.Content)...)
		}
	}
	return out
}

// redactRequest is the rewrite of req's messages with every text occurrence replaced,
// in new slices (the request's own are shared with the runtime).
func redactRequest(req dsh.ModelRequest, text, with string) dsh.RequestDecision {
	msgs := make([]dsh.ModelMessage, len(req.Messages))
	for i, m := range req.Messages {
		m.Content = redactBlocks(m.Content, text, with)
		msgs[i] = m
	}
	return dsh.RequestRewrite{Messages: msgs}
}

func redactBlocks(blocks []dsh.ContentBlock, text, with string) []dsh.ContentBlock {
	out := make([]dsh.ContentBlock, len(blocks))
	for i, b := range blocks {
		switch v := b.(type) {
		case dsh.TextBlock:
			v.Text = strings.ReplaceAll(v.Text, text, with)
			out[i] = v
		case dsh.ToolResultBlock:
			v.Content = redactBlocks(v.Content, text, with)
			out[i] = v
		default:
			out[i] = b
		}
	}
	return out
}

// modelFold interprets a listener script at agent/request or agent/response: side
// effects, then decide, fail or redact (through redact); a script that ends without
// deciding returns def.
func modelFold[D any](r *run, ctx context.Context, s scope, acts []sc.Action, def D, decode func([]byte) (D, error),
	redact func(text, with string) D) (D, error) {
	for _, a := range acts {
		if ok, err := r.effect(ctx, s, a); ok {
			if err != nil {
				return def, err
			}
			continue
		}
		switch a := a.(type) {
		case sc.ActDecide:
			return decode(a.Decision)
		case sc.ActFail:
			return def, scriptError(a.Message, a.Code)
		case sc.ActRedact:
			return redact(a.Text, a.With), nil
		default:
			return def, fmt.Errorf("conformance: action %s is not supported at a model-call point", a.Kind())
		}
	}
	return def, nil
}

// compactScope is the scope of a compaction point's event.
func compactScope(agentID string, h dsh.Agent, turn *int, trigger dsh.CompactionTrigger, origin dsh.CompactionOrigin) scope {
	s := scope{agentID: agentID, handle: h}
	if turn != nil {
		s.turn = *turn
	}
	return s.with("trigger", string(trigger)).with("origin", string(origin))
}

// vote interprets a listener script at a fold point: side effects, then decide (the
// decision), fail, or add-context (through addContext); a script that ends without
// deciding votes the current decision (def at first).
func vote[D any](r *run, ctx context.Context, s scope, acts []sc.Action, def D, decode func([]byte) (D, error),
	addContext func(D, string) D) (D, error) {
	cur := def
	for _, a := range acts {
		if ok, err := r.effect(ctx, s, a); ok {
			if err != nil {
				return cur, err
			}
			continue
		}
		switch a := a.(type) {
		case sc.ActDecide:
			return decode(a.Decision)
		case sc.ActFail:
			return cur, scriptError(a.Message, a.Code)
		case sc.ActAddContext:
			if addContext == nil {
				return cur, fmt.Errorf("conformance: add-context is not supported at this point")
			}
			cur = addContext(cur, s.label(a.Text))
		default:
			return cur, fmt.Errorf("conformance: action %s is not supported at a fold point", a.Kind())
		}
	}
	return cur, nil
}

// tool builds a scripted tool.
func (r *run) tool(t sc.Tool) Tool {
	out := Tool{Name: t.Name, Parallel: t.Parallel != nil && *t.Parallel, OutputSchema: t.OutputSchema, InputSchema: t.InputSchema}
	if t.ExclusiveWhen != nil {
		out.ExclusiveWhen = *t.ExclusiveWhen
	}
	body := t.Body
	out.Run = func(ctx context.Context, call Call) (any, error) {
		s := scope{agentID: call.AgentID(), callID: call.CallID()}.with("args", string(call.Arguments()))
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
				if err := call.Defer(r.message(s.label(a.Text), pluginSource)); err != nil {
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
				case sc.ActFail:
					return nil, scriptError(a.Message, a.Code)
				case sc.ActError:
					return nil, scriptError(a.Message, a.Code)
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
	opts := Options{MaxParallelToolCalls: max, ContinuationCap: cap, Audit: s.Audit != nil && *s.Audit}
	if s.RewriteConflict != "" {
		opts.RewriteConflict = string(s.RewriteConflict)
	}
	if s.RewriteDeadlineMS != nil {
		opts.RewriteDeadline = time.Duration(*s.RewriteDeadlineMS) * time.Millisecond
	}
	if c := s.Compaction; c != nil {
		opts.Compaction = CompactionOptions{ContextWindow: c.ContextWindow, ModelWindow: c.ContextWindow}
		if c.ModelWindow != nil {
			opts.Compaction.ModelWindow = *c.ModelWindow
		}
		if c.ThresholdRatio != nil {
			opts.Compaction.ThresholdRatio = *c.ThresholdRatio
		}
		if c.ListenerTimeoutMS != nil {
			opts.Compaction.ListenerTimeout = time.Duration(*c.ListenerTimeoutMS) * time.Millisecond
		}
	}
	opts.Setup = dsh.SetupTrigger(s.Setup)
	for _, f := range s.Instructions {
		opts.Instructions = append(opts.Instructions, dsh.InstructionFile{Path: f.Path, Scope: dsh.InstructionScope(f.Scope),
			Reason: dsh.InstructionReason(f.Reason), Parent: f.Parent})
	}
	if s.SessionStartTimeoutMS != nil {
		opts.SessionStartTimeout = time.Duration(*s.SessionStartTimeoutMS) * time.Millisecond
	}
	if s.ModelListenerTimeoutMS != nil {
		opts.ModelListenerTimeout = time.Duration(*s.ModelListenerTimeoutMS) * time.Millisecond
	}
	r.rt.SetOptions(opts)
	r.rt.SetModel(s.Model, r.wait)
	if s.Approver != "" {
		answer := dsh.ApprovalOutcome(s.Approver)
		r.rt.SetApprover(func(ctx context.Context, tool string) (dsh.ApprovalOutcome, error) {
			switch s.Approver {
			case "none":
				return "", errors.New("conformance: no answer")
			case "hang":
				<-ctx.Done()
				return dsh.ApprovalOutcomeCancelled, nil
			case "stale":
				return AllowedOnceStale, nil
			}
			return answer, nil
		})
	}
	for _, t := range s.Tools {
		if err := r.rt.RegisterTool(r.tool(t)); err != nil {
			return err
		}
	}
	if s.Hooks != nil {
		if err := r.hooks(r.tempDir(), *s.Hooks); err != nil {
			return fmt.Errorf("hooks: %w", err)
		}
	}
	if s.Permissions != nil {
		if err := r.rt.AttachPermissions(*s.Permissions); err != nil {
			return fmt.Errorf("permissions: %w", err)
		}
	}
	if s.Subagents != nil {
		if err := r.rt.AttachSubagents(*s.Subagents); err != nil {
			return fmt.Errorf("subagents: %w", err)
		}
	}
	for i, l := range s.Listeners {
		if err := r.register(l); err != nil {
			return fmt.Errorf("listeners[%d]: %w", i, err)
		}
	}
	return nil
}

// postToolDecision decodes a scripted post-execute decision. An accept that sets both
// content and value, which the strict decoder refuses, is built as is: a Go listener can
// return it, and what the runtime makes of it is what a scenario checks (SEMANTICS B6.84).
func postToolDecision(data []byte) (dsh.PostToolDecision, error) {
	d, err := dsh.UnmarshalPostToolDecision(data)
	if err == nil || !errors.Is(err, dsh.ErrExclusive) {
		return d, err
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(data, &fields) != nil {
		return d, err
	}
	value := fields["value"]
	delete(fields, "value")
	rest, merr := json.Marshal(fields)
	if merr != nil {
		return d, err
	}
	d, uerr := dsh.UnmarshalPostToolDecision(rest)
	accept, ok := d.(dsh.PostToolAccept)
	if uerr != nil || !ok {
		return d, err
	}
	accept.Value = value
	return accept, nil
}
