package hookbridge

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/internal/jsonmerge"
)

func agentID(ex dsh.ToolExecution) string {
	if ex.AgentID != nil {
		return *ex.AgentID
	}
	return ""
}

func toolInput(ex dsh.ToolExecution) json.RawMessage {
	if len(ex.Arguments) == 0 {
		return json.RawMessage("{}")
	}
	return ex.Arguments
}

// preTool maps PreToolUse: deny denies, ask asks the approval seam, halt halts; allow and
// pass call next (allow never pre-approves). Contexts are kept for the tool result.
func (b *Bridge) preTool(ctx context.Context, p *dsh.PreToolPayload, next dsh.PreToolNext) (dsh.PreToolDecision, error) {
	ex := p.Exec
	ev := b.event(dsh.PreToolEventName)
	s := b.execSession(ctx, ex)
	rep := b.calls.takeFired(callKey{agentID(ex), ex.CallID})
	if rep == nil {
		// No rewrite phase ran for the call (no model arguments to rewrite): fire here.
		in := Input{Event: ev, Session: s, Turn: s.Turn, ToolName: ex.Name, ToolInput: toolInput(ex), ToolUseID: ex.CallID,
			OriginalName: deref(ex.OriginalName)}
		var err error
		if rep, err = b.fire(ctx, in, ex.Name, ex.AgentID != nil && s.TurnOpen, s.Agent); err != nil {
			return nil, err
		}
	} else if b.d.Revalidate && b.o.RevalidateAfterRewrite && len(ex.ModelArguments) > 0 {
		// The rewrite phase changed the input: run the hooks again on the effective input
		// (revalidateAfterRewrite); the stricter of the two passes decides, the first
		// pass's contexts are kept, and a second-pass updatedInput is ignored.
		in := Input{Event: ev, Session: s, Turn: s.Turn, ToolName: ex.Name, ToolInput: toolInput(ex), ToolUseID: ex.CallID,
			OriginalName: deref(ex.OriginalName)}
		second, err := b.fireIgnoring(ctx, in, ex.Name, ex.AgentID != nil && s.TurnOpen, s.Agent, revalidateIgnored)
		if err != nil {
			return nil, err
		}
		for _, h := range second.Hooks {
			for _, d := range h.Verdict.Diagnostics {
				if d == revalidateIgnored {
					b.log.Warn("tool hook rewrite ignored in the revalidation pass", "event", ev, "handler", h.ID, "call", ex.CallID)
				}
			}
		}
		if strictness(second.Merged.Outcome) > strictness(rep.Merged.Outcome) {
			first := rep.Merged.Contexts
			cp := *second
			cp.Merged.Contexts = first
			rep = &cp
		}
	}
	if len(rep.Merged.Contexts) > 0 && !ex.Token.IsZero() {
		texts := b.contexts(ev, ex.Name, rep)
		b.calls.update(ex.Token, func(c *call) { c.contexts = append(c.contexts, texts...) })
	}
	switch rep.Merged.Outcome {
	case dsh.HookOutcomeHalt:
		if b.d.Render.PreHaltRunsTool && !rep.Merged.HaltBefore && !ex.Token.IsZero() {
			// The engine lets the call run and ends the turn after it (postTool halts);
			// a halt of a rule (a deferred call) ends the turn before it.
			b.calls.update(ex.Token, func(c *call) { c.halt, c.halts = rep.Merged.Reason, true })
			return next.Call(ctx)
		}
		return dsh.PreToolHalt{Reason: rep.Merged.Reason}, nil
	case dsh.HookOutcomeDeny, dsh.HookOutcomeBlock:
		if b.d.Render.Deny != nil && !ex.Token.IsZero() {
			text := b.d.Render.Deny(ex.Name, toolInput(ex), rep)
			b.calls.update(ex.Token, func(c *call) { c.denied, c.isDenied = text, true })
		}
		return dsh.PreToolDeny{Reason: rep.Merged.Reason}, nil
	case dsh.HookOutcomeAsk:
		var reason *string
		if r := rep.Merged.Reason; r != "" {
			reason = &r
			if b.d.Render.AskDenied != nil && !ex.Token.IsZero() {
				a := &askDenial{text: b.d.Render.AskDenied(r)}
				b.calls.update(ex.Token, func(c *call) { c.ask = a })
			}
		}
		return dsh.PreToolAsk{Reason: reason}, nil
	}
	return next.Call(ctx)
}

// revalidateIgnored is the diagnostic of a second-pass PreToolUse hook whose updatedInput
// the revalidation ignored.
const revalidateIgnored = "updatedInput ignored: revalidateAfterRewrite runs the hooks on the rewritten input and does not rewrite it again"

// strictness orders PreToolUse outcomes for the revalidation pass: halt, then a denial,
// then ask, then everything else.
func strictness(o dsh.HookOutcome) int {
	switch o {
	case dsh.HookOutcomeHalt:
		return 3
	case dsh.HookOutcomeDeny, dsh.HookOutcomeBlock:
		return 2
	case dsh.HookOutcomeAsk:
		return 1
	}
	return 0
}

// rewriteInput runs the call's PreToolUse hooks, once and in parallel, on the input the
// fold has so far (docs/design/REWRITE-COMPACTION.md#13-composing-several-rewriters), keeps their report for the pre-execute
// listener, and folds their rewrites (updatedInput) in configuration order, whatever
// order they finished in: a replacement replaces, a merge patches the value so far. The
// result is one replace of the effective value, or keep when nothing changed.
func (b *Bridge) rewriteInput(ctx context.Context, p *dsh.RewriteInputPayload) (dsh.RewriteDecision, error) {
	agent := ""
	if p.AgentID != nil {
		agent = *p.AgentID
	}
	s := b.child(ctx, agent, p.Lineage)
	input := p.Input
	if len(input) == 0 {
		input = json.RawMessage("{}")
	}
	in := Input{Event: b.event(dsh.PreToolEventName), Session: s, Turn: s.Turn, ToolName: p.Name, ToolInput: input, ToolUseID: p.CallID,
		OriginalName: deref(p.OriginalName)}
	rep, err := b.fire(ctx, in, p.Name, p.AgentID != nil && s.TurnOpen, s.Agent)
	if err != nil {
		return nil, err
	}
	b.calls.keepFired(callKey{agent, p.CallID}, rep)
	cur := input
	changed := false
	var by []string
	for _, h := range rep.Hooks {
		rw := h.Verdict.Rewrite
		if len(rw) == 0 {
			continue
		}
		if b.d.MapRewrite != nil {
			rw = b.d.MapRewrite(p.Name, cur, rw)
		}
		next := rw
		if h.Verdict.RewriteMerge {
			if next, err = mergePatch(cur, rw); err != nil {
				b.log.Warn("tool hook rewrite ignored: not a merge patch", "event", in.Event, "handler", h.ID, "error", err)
				continue
			}
		}
		cur, changed = next, true
		by = append(by, h.ID)
	}
	if !changed {
		return dsh.RewriteKeep{}, nil
	}
	reason := in.Event + " hook updatedInput (" + strings.Join(by, ", ") + ")"
	d := dsh.RewriteReplace{Args: cur, Reason: &reason}
	if b.d.Render.RewriteSilent {
		d.Disclosure = dsh.RewriteDisclosureSilent
	}
	return d, nil
}

// mergePatch applies the JSON merge patch (RFC 7396) patch to target.
func mergePatch(target, patch json.RawMessage) (json.RawMessage, error) {
	var t, p any
	if err := decodeNumbers(patch, &p); err != nil {
		return nil, err
	}
	if len(target) > 0 {
		if err := decodeNumbers(target, &t); err != nil {
			t = nil
		}
	}
	return json.Marshal(jsonmerge.Apply(t, p))
}

// decodeNumbers decodes data keeping numbers as written (json.Number).
func decodeNumbers(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	return dec.Decode(v)
}

// deref is *s, or "" for nil.
func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
