package loop

import (
	"context"
	"errors"
	"time"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/internal/blocktext"
	"github.com/dshkit/dsh/internal/duration"
	"github.com/dshkit/dsh/runtime/llm"
	"github.com/dshkit/dsh/runtime/session"
)

// ErrNoModel is the failure of a request whose config, after agent/request, names no
// provider or no model (B §2.4).
var ErrNoModel = errors.New("loop: agent/request left the request without a provider or model")

// openStep runs B §5.2 step 6: step/start, the entered messages as user/message, the step
// (§5.3) and step/end, which is appended even when the step failed. A step stopped by a
// Cancel returns endNone without failure; the turn's abort check ends the turn.
func (a *Agent) openStep(t *turnRun, step int, msgs []dsh.UserMessage) (ending, *dsh.LLMFailure, error) {
	if _, err := a.log.Append(a.base, dsh.StepStart{Turn: t.n, Step: step}); err != nil {
		return endNone, nil, err
	}
	ctx := withScope(t.ctx, scope{agent: a, turn: t.n, step: step})
	out, failure, err := a.runStep(ctx, t, step, msgs)
	if _, e := a.log.Append(a.base, dsh.StepEnd{Turn: t.n, Step: step}); e != nil && err == nil {
		err = e
	}
	return out, failure, err
}

// runStep logs the entered messages and runs the step (B §5.3): the request, the stream,
// agent/request-error and its retries, the assistant message and the tool batch.
func (a *Agent) runStep(ctx context.Context, t *turnRun, step int, msgs []dsh.UserMessage) (ending, *dsh.LLMFailure, error) {
	for _, m := range msgs {
		m, err := prepareMessage(m, nil)
		if err != nil {
			return endNone, nil, err
		}
		if _, err := a.log.Append(a.base, dsh.UserMessageLogged{Message: m}); err != nil {
			return endNone, nil, err
		}
	}
	overflowed := false // overflow recovery runs once per step
	for attempt := 1; ; attempt++ {
		plan, err := a.prepareRequest(ctx, t, step, attempt)
		if err != nil {
			if t.ctx.Err() != nil {
				return endNone, nil, nil // cancelled while a listener ran: the turn ends aborted
			}
			return endNone, nil, err
		}
		if plan.deny != nil {
			t.blocked = plan.deny
			return endBlocked, nil, nil
		}
		if plan.answer != nil {
			resp, chunks := answerResponse(plan.answer)
			return a.respond(ctx, t, step, resp, chunks, nil, dsh.ResponseByListener{Listener: plan.answer.by})
		}
		hold := a.reg.Listens(dsh.ResponseEventName)
		resp, held, seqs, failure, err := a.stream(ctx, t, step, plan.req, hold)
		if err != nil {
			return endNone, nil, err
		}
		if t.ctx.Err() != nil && (failure != nil || !resp.Finished()) {
			// B §5.3 step 2: cancelled mid-stream; keep the visible prefix, unless
			// agent/response held it back: it never saw it, so nothing of it is logged.
			if hold {
				return endNone, nil, nil
			}
			return endNone, nil, a.logInterrupted(t, step, resp, seqs)
		}
		if failure == nil {
			return a.respond(ctx, t, step, resp, held, seqs, nil)
		}
		if !overflowed && !a.cfg.Compaction.Disabled && llm.IsContextWindowExceeded(*failure) {
			overflowed = true
			retry, deferred, err := a.overflow(ctx, t)
			switch {
			case err != nil:
				return endNone, nil, err
			case t.ctx.Err() != nil:
				return endNone, nil, nil
			case deferred:
				return endNone, failure, nil // no retry: the original failure ends the turn
			case retry:
				continue
			}
		}
		retry, err := a.requestError(ctx, t, step, plan.req.Config.Provider, *failure, attempt)
		switch {
		case err != nil:
			return endNone, nil, err
		case t.ctx.Err() != nil:
			return endNone, nil, nil // a retry after the abort is ignored
		case !retry:
			return endNone, failure, nil
		}
	}
}

// stream streams one response, appending every chunk as assistant/chunk (or, with hold,
// holding them back for agent/response), and returns the folded response, the held chunks,
// the chunk seqs and the failure of an error or aborted finish, a transport error or a
// broken stream. err is a failed append.
func (a *Agent) stream(ctx context.Context, t *turnRun, step int, req llm.Request, hold bool) (llm.Response, []dsh.AssistantChunk, []int64, *dsh.LLMFailure, error) {
	var (
		asm     llm.Assembler
		held    []dsh.AssistantChunk
		seqs    []int64
		failure *dsh.LLMFailure
	)
	if hold {
		held = a.calls.held[:0]
		defer func() { a.calls.held = held[:0] }()
	}
	for chunk, err := range a.model.Stream(ctx, req) {
		if err != nil {
			f := llm.AsFailure(err)
			failure = &f
			break
		}
		if err := asm.Add(chunk); err != nil {
			failure = &dsh.LLMFailure{Message: err.Error(), Code: llm.CodeBadResponse}
			break
		}
		if hold {
			held = append(held, chunk)
			continue
		}
		ev, err := a.log.Append(a.base, dsh.AssistantChunkLogged{Turn: t.n, Step: step, Chunk: chunk})
		if err != nil {
			return llm.Response{}, nil, nil, nil, err
		}
		seqs = append(seqs, ev.Seq)
	}
	resp := asm.Response()
	if failure == nil {
		switch {
		case !resp.Finished():
			failure = &dsh.LLMFailure{Message: llm.ErrNoFinish.Error(), Code: llm.CodeBadResponse}
		case resp.Finish.Reason == dsh.FinishReasonError || resp.Finish.Reason == dsh.FinishReasonAborted:
			f := dsh.LLMFailure{Message: string(resp.Finish.Reason), Code: llm.CodeUnknown}
			if resp.Finish.Error != nil {
				f = *resp.Finish.Error
			}
			failure = &f
		}
	}
	return resp, held, seqs, failure, nil
}

// logInterrupted appends the visible prefix of a cancelled stream as an interrupted
// assistant message; a stream with no visible text or reasoning appends nothing.
func (a *Agent) logInterrupted(t *turnRun, step int, resp llm.Response, seqs []int64) error {
	var visible []dsh.ContentBlock
	for _, b := range resp.Content {
		//dshvet:partial only text and reasoning are visible in an interrupted answer
		switch v := b.(type) {
		case dsh.TextBlock:
			if v.Text != "" {
				visible = append(visible, v)
			}
		case dsh.ReasoningBlock:
			if v.Text != "" {
				visible = append(visible, v)
			}
		}
	}
	if len(visible) == 0 {
		return nil
	}
	interrupted := true
	_, err := a.log.Append(a.base, dsh.AssistantMessageLogged{
		Turn: t.n, Step: step, Usage: resp.Usage, Interrupted: &interrupted,
		Message: dsh.AssistantMessage{Role: dsh.AssistantMessageRoleAssistant, Content: visible},
	}, session.WithSources(seqs...))
	return err
}

// requestError runs the agent/request-error waterfall (B §2.5) and, for retry, waits the
// delay it asks for (cut short by a cancel). It reports whether to retry.
func (a *Agent) requestError(ctx context.Context, t *turnRun, step int, provider string, f dsh.LLMFailure, attempt int) (bool, error) {
	p := &dsh.RequestErrorPayload{Agent: a, AgentID: a.id, Turn: t.n, Step: step, Provider: provider, Failure: f, Attempt: attempt}
	d, err := a.reg.RunRequestError(ctx, p, nil)
	if err != nil {
		return false, err
	}
	var delay *int
	switch v := d.(type) {
	case dsh.RequestErrorRetry:
		delay = v.DelayMS
	default:
		return false, nil
	}
	if delay != nil && *delay > 0 {
		timer := time.NewTimer(duration.Millis(*delay)) // a delay too long for a Duration is the longest one
		defer timer.Stop()
		select {
		case <-timer.C:
		case <-t.ctx.Done():
		}
	}
	return true, nil
}

// settle appends the assistant message (with source when a listener answered) and acts
// on the finish (B §5.3 steps 4-5): a max-tokens finish drops its tool calls; tool calls
// run as a batch.
func (a *Agent) settle(ctx context.Context, t *turnRun, step int, resp llm.Response, seqs []int64, source dsh.ResponseSource) (ending, *dsh.LLMFailure, error) {
	content, calls := resp.Content, resp.ToolCalls
	maxTokens := resp.Finish.Reason == dsh.FinishReasonMaxTokens
	if maxTokens {
		kept := content[:0:0]
		for _, b := range content {
			if _, ok := b.(dsh.ToolCallBlock); !ok {
				kept = append(kept, b)
			}
		}
		content, calls = kept, nil
	}
	if content == nil {
		content = []dsh.ContentBlock{}
	}
	if _, err := a.log.Append(a.base, dsh.AssistantMessageLogged{
		Turn: t.n, Step: step, Usage: resp.Usage, Source: source,
		Message: dsh.AssistantMessage{Role: dsh.AssistantMessageRoleAssistant, Content: content},
	}, session.WithSources(seqs...)); err != nil {
		return endNone, nil, err
	}
	t.answer = answerOf(content)
	switch {
	case maxTokens:
		return endMaxTokens, nil, nil
	case len(calls) == 0:
		return endCompleted, nil, nil
	}
	concluded, err := a.runBatch(ctx, t, step, calls)
	if err != nil {
		return endNone, nil, err
	}
	if concluded {
		return endCompleted, nil, nil
	}
	return endNone, nil, nil
}

// answerOf is the text of an assistant message's text blocks, joined, or nil when it has
// none (a subagent's answer: agent/subagent-stop's payload).
func answerOf(content []dsh.ContentBlock) *string {
	if s, ok := blocktext.Join(content, ""); ok {
		return &s
	}
	return nil
}
