package hookbridge

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/dshkit/dsh/bridges/hookproto"
	"github.com/dshkit/dsh/runtime/approval"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/internal/blocktext"
)

// timeExecute records how long a call's execution took, for PostToolUse's duration.
func (b *Bridge) timeExecute(ctx context.Context, p *dsh.ExecutePayload, next dsh.ExecuteNext) dsh.ToolExecutionResult {
	start := time.Now()
	res := next.Call(ctx)
	took := time.Since(start)
	b.calls.update(p.Exec.Token, func(c *call) { c.took, c.dispatched = took, true })
	return res
}

// duration is a call's execution time in ms, -1 when unknown, and whether the call was
// dispatched (when the execute wrapper is registered).
func (b *Bridge) duration(c call) (int, bool) {
	if !c.dispatched {
		return -1, false
	}
	if !b.d.Durations {
		return -1, true
	}
	return int(c.took.Milliseconds()), true
}

// askDenial is the ask of a call a PreToolUse hook asked about with a reason: the
// dialect's rendering of the call's result when no one could answer.
type askDenial struct {
	text string
}

// unanswered returns the rendering of an asked call's result when the runtime denied it
// because no one could answer the ask (approval.Unanswered marks ctx).
func (a *askDenial) unanswered(ctx context.Context) (string, bool) {
	if a == nil {
		return "", false
	}
	if _, ok := approval.UnansweredOf(ctx); !ok {
		return "", false
	}
	return a.text, true
}

// toolResult drops the state of a call whose post-execute never ran, and the report of
// one whose pre-execute never ran (a failed rewrite).
func (b *Bridge) toolResult(_ context.Context, p *dsh.ToolResultPayload) {
	b.calls.drop(callKey{agentID(p.Exec), p.Exec.CallID}, p.Exec.Token)
}

// toolResponse is the tool_response of a successful result: its value, or its text.
func toolResponse(s dsh.ToolSuccess) json.RawMessage {
	if len(s.Value) > 0 {
		return s.Value
	}
	data, _ := json.Marshal(blocktext.Text(s.Content, "\n"))
	return data
}

// blockTexts are the texts of content's text blocks, one each.
func blockTexts(content []dsh.ContentBlock) []string {
	var out []string
	for _, c := range content {
		if t, ok := c.(dsh.TextBlock); ok {
			out = append(out, t.Text)
		}
	}
	return out
}

// postTool maps PostToolUse (successful results only, decision 8) and delivers the
// PreToolUse contexts: block becomes feedback, halt halts; otherwise next, then the hook
// contexts are prepended to the downstream decision's contexts.
func (b *Bridge) postTool(ctx context.Context, p *dsh.PostToolPayload, next dsh.PostToolNext) (dsh.PostToolDecision, error) {
	st := b.calls.end(p.Exec.Token)
	texts := st.contexts
	askText, asked := st.ask.unanswered(ctx)
	took, dispatched := b.duration(st)
	deniedText, isDenied, haltReason, halts := st.denied, st.isDenied, st.halt, st.halts
	if asked {
		deniedText, isDenied = askText, true
	}
	if isDenied {
		// The dialect's wording of the denial replaces dsh's "Error: <reason>".
		d, err := next.Call(ctx)
		if err != nil {
			return d, err
		}
		acc := dsh.PostToolAccept{Content: []dsh.ContentBlock{dsh.TextBlock{Text: deniedText}}}
		if len(texts) > 0 {
			acc.AdditionalContexts = []dsh.UserMessage{b.message(texts)}
		}
		if x, ok := d.(dsh.PostToolAccept); ok {
			acc.AdditionalContexts = append(acc.AdditionalContexts, x.AdditionalContexts...)
		}
		return acc, nil
	}
	var (
		succ     *dsh.ToolSuccess
		fail     *dsh.ToolFailure
		replaced []dsh.ContentBlock // the hooks' replacement of the content (UpdatedOutput)
	)
	switch r := p.Result.(type) {
	case dsh.ToolSuccess:
		succ = &r
	case dsh.ToolFailure:
		fail = &r
	}
	if ev := b.failureEvent(); fail != nil && dispatched && ev != "" {
		// A call that ran and failed (a denied call never reaches dispatch).
		ex := p.Exec
		s := b.execSession(ctx, ex)
		interrupted := fail.Error.Info != nil && fail.Error.Info.Code == abortedCode
		in := Input{Event: ev, Session: s, Turn: s.Turn, ToolName: ex.Name, ToolInput: toolInput(ex),
			ToolUseID: ex.CallID, DurationMS: took, Error: fail.Error.Message, IsInterrupt: interrupted,
			OriginalName: deref(ex.OriginalName)}
		rep, err := b.fire(ctx, in, ex.Name, ex.AgentID != nil && s.TurnOpen, s.Agent)
		if err != nil {
			return nil, err
		}
		texts = append(texts, b.contexts(ev, ex.Name, rep)...)
		if rep.Merged.Outcome == dsh.HookOutcomeHalt {
			if len(texts) > 0 {
				b.log.Info("tool hook contexts dropped: the turn halts", "event", ev, "count", len(texts))
			}
			return dsh.PostToolHalt{Reason: rep.Merged.Reason}, nil
		}
	}
	if ev, _ := b.resultEventRan(succ != nil, st.dispatched); (succ != nil || fail != nil) && ev != "" {
		ex := p.Exec
		s := b.execSession(ctx, ex)
		in := Input{Event: ev, Session: s, Turn: s.Turn, ToolName: ex.Name, ToolInput: toolInput(ex),
			ToolUseID: ex.CallID, DurationMS: took, OriginalName: deref(ex.OriginalName)}
		if succ != nil {
			in.ToolResponse, in.ToolText, in.ToolTexts = toolResponse(*succ), blocktext.Text(succ.Content, "\n"), blockTexts(succ.Content)
		} else {
			in.Error, in.ToolText = fail.Error.Message, blocktext.Text(fail.Content, "\n")
			if fail.Error.Info != nil {
				in.ErrorCode = fail.Error.Info.Code
			}
			in.ToolResponse, _ = json.Marshal(in.ToolText)
		}
		if b.d.OriginalInput && len(ex.ModelArguments) > 0 {
			in.OriginalInput = ex.ModelArguments
		}
		rep, err := b.fire(ctx, in, ex.Name, ex.AgentID != nil && s.TurnOpen, s.Agent)
		if err != nil {
			return nil, err
		}
		post := b.contexts(ev, ex.Name, rep)
		if succ != nil && b.d.UpdatedOutput != nil && rep.Merged.Outcome != dsh.HookOutcomeHalt {
			if c, ok := b.d.UpdatedOutput(ex.Name, rep); ok {
				replaced = c
			}
		}
		switch rep.Merged.Outcome {
		case dsh.HookOutcomeBlock, dsh.HookOutcomeDeny:
			if b.d.Render.PostBlock != nil {
				// The result stays; the reason follows it as feedback (Claude Code).
				texts = append(texts, b.d.Render.PostBlock(ex.Name, rep))
				rep.Merged.Outcome = dsh.HookOutcomePass
			}
		}
		texts = append(texts, post...)
		switch rep.Merged.Outcome {
		case dsh.HookOutcomeHalt:
			if len(texts) > 0 {
				b.log.Info("tool hook contexts dropped: the turn halts", "event", ev, "count", len(texts))
			}
			return dsh.PostToolHalt{Reason: rep.Merged.Reason}, nil
		case dsh.HookOutcomeBlock, dsh.HookOutcomeDeny:
			blk := dsh.PostToolBlock{Feedback: []dsh.ContentBlock{dsh.TextBlock{Text: rep.Merged.Reason}}}
			if len(texts) > 0 {
				blk.AdditionalContexts = []dsh.UserMessage{b.message(texts)}
			}
			return blk, nil
		}
		e, _ := b.d.Table.Lookup(ev)
		if name, args, ok := hookproto.TailCall(b.d.Table, &e, rep); ok {
			// A tail call replaces the result, and the contexts that would follow it
			// (measured in Gemini CLI 0.61.0: they are lost with the first result).
			if len(texts) > 0 {
				b.log.Info("tool hook contexts dropped: a tail call replaces the result", "event", ev, "tail", name, "count", len(texts))
			}
			return dsh.PostToolTail{Name: name, Arguments: args}, nil
		}
	}
	if halts {
		if len(texts) > 0 {
			b.log.Info("tool hook contexts dropped: the turn halts", "count", len(texts))
		}
		return dsh.PostToolHalt{Reason: haltReason}, nil
	}
	d, err := next.Call(ctx)
	if x, ok := d.(dsh.PostToolAccept); ok && err == nil && replaced != nil && x.Content == nil && x.Value == nil {
		// The hooks' replacement output, unless a later listener replaced the result.
		x.Content = replaced
		d = x
	}
	if err == nil && (succ != nil || fail != nil) {
		var content []dsh.ContentBlock
		suffix := ""
		if succ != nil {
			content = succ.Content
		} else {
			content = fail.Content
		}
		if b.d.Render.ResultContexts && len(texts) > 0 {
			suffix = "\n\n" + strings.Join(texts, "\n")
		}
		target := d
		if x, ok := d.(dsh.PostToolAccept); ok && replaced != nil && x.Content != nil {
			// The replacement is the content the suffix follows.
			content, target = x.Content, dsh.PostToolAccept{Value: x.Value, AdditionalContexts: x.AdditionalContexts}
		}
		if x, ok := appendText(content, target, b.rewriteNote(p.Exec, succ != nil)+suffix); ok {
			d = x
			if suffix != "" {
				texts = nil
			}
		}
	}
	if err != nil || len(texts) == 0 {
		return d, err
	}
	msg := b.message(texts)
	prepend := func(ms []dsh.UserMessage) []dsh.UserMessage {
		out := make([]dsh.UserMessage, 0, len(ms)+1)
		return append(append(out, msg), ms...)
	}
	//dshvet:partial a halt carries no contexts: it is returned as it is, after the switch
	switch x := d.(type) {
	case dsh.PostToolAccept:
		x.AdditionalContexts = prepend(x.AdditionalContexts)
		return x, nil
	case dsh.PostToolBlock:
		x.AdditionalContexts = prepend(x.AdditionalContexts)
		return x, nil
	}
	b.log.Info("tool hook contexts dropped: the downstream decision carries none", "decision", string(d.Kind()))
	return d, nil
}

// rewriteNote is the table's rewrite note (Rewrite.Note) for the successful result of a
// call whose arguments a rewrite changed; "" otherwise.
func (b *Bridge) rewriteNote(ex dsh.ToolExecution, success bool) string {
	ev, ok := b.d.Table.Lookup(b.event(dsh.PreToolEventName))
	if !ok || ev.Rewrite == nil || !success || len(ex.ModelArguments) == 0 {
		return ""
	}
	return ev.Rewrite.Note
}

// appendText appends suffix to the last text block of content (a new block when it has
// none) as the downstream decision's content, when that decision keeps the content.
func appendText(content []dsh.ContentBlock, d dsh.PostToolDecision, suffix string) (dsh.PostToolDecision, bool) {
	x, ok := d.(dsh.PostToolAccept)
	if suffix == "" || !ok || x.Content != nil || x.Value != nil {
		return d, false
	}
	x.Content = append(slices.Clone(content), dsh.TextBlock{Text: suffix})
	if n := len(content); n > 0 {
		if t, ok := content[n-1].(dsh.TextBlock); ok {
			x.Content = append(slices.Clone(content[:n-1]), dsh.TextBlock{Text: t.Text + suffix})
		}
	}
	return x, true
}

// abortedCode is the error code of a call cancelled while its body ran (runtime/tools
// CodeAborted; not imported, to keep the bridges off the runtime).
const abortedCode = "ABORTED"
