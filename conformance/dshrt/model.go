package dshrt

import (
	"context"
	"iter"
	"sync"

	"github.com/dshkit/dsh/conformance"
	sc "github.com/dshkit/dsh/generated/conformance"
	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/llm"
)

// SetModel scripts the model; wait serves the responses' gates.
func (r *Runtime) SetModel(responses []sc.Response, wait func(ctx context.Context, gate string) error) {
	var out []llm.ScriptedResponse
	var gates []string
	for _, resp := range responses {
		s := llm.ScriptedResponse{}
		if resp.Text != nil {
			s.Text = *resp.Text
		}
		if resp.Hang != nil {
			s.Hang = *resp.Hang
		}
		if resp.Usage != nil {
			s.Usage = &dsh.Usage{InputTokens: resp.Usage.InputTokens, OutputTokens: resp.Usage.OutputTokens}
		}
		gate := ""
		if resp.Gate != nil {
			gate = *resp.Gate
		}
		gates = append(gates, gate)
		for _, tc := range resp.ToolCalls {
			s.ToolCalls = append(s.ToolCalls, llm.ScriptedToolCall{ID: tc.ID, Name: tc.Name, Arguments: tc.Arguments})
		}
		switch resp.Finish {
		case sc.ResponseFinishMaxTokens:
			s.Finish = dsh.FinishReasonMaxTokens
		case sc.ResponseFinishError:
			s.Finish = dsh.FinishReasonError
			s.Error = &llm.ScriptedError{Message: "scripted provider failure", Code: "SCRIPTED"}
		case sc.ResponseFinishStop:
			s.Finish = dsh.FinishReasonStop
		}
		out = append(out, s)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	window := r.opts.Compaction.ModelWindow
	r.model = &gatedModel{inner: llm.NewScripted(out...).RecordRequests().WithContextWindow(window), responses: out,
		gates: gates, wait: wait, window: window}
}

// gatedModel is the scripted model with the harness's response gates: a gated response
// waits at its gate once its text has streamed (at once when it has none), before its
// tool calls and finish. Agents share it; calls take the responses in order.
type gatedModel struct {
	inner     *llm.Scripted
	responses []llm.ScriptedResponse
	gates     []string
	wait      func(ctx context.Context, gate string) error
	window    int // the scripted model's window: a larger request consumes no response

	mu    sync.Mutex
	calls int
}

// Stream plays the next response, waiting at its gate if it has one.
func (g *gatedModel) Stream(ctx context.Context, req llm.Request) iter.Seq2[dsh.AssistantChunk, error] {
	inner := g.inner.Stream(ctx, req)
	if g.window > 0 && llm.EstimateRequest(req) > g.window {
		return inner // refused for its size: it takes no response, hence no gate
	}
	return func(yield func(dsh.AssistantChunk, error) bool) {
		g.mu.Lock()
		i := g.calls
		g.calls++
		g.mu.Unlock()
		gate, visible := "", ""
		if i < len(g.gates) {
			gate, visible = g.gates[i], g.responses[i].Reasoning+g.responses[i].Text
		}
		waited := gate == ""
		pass := func() {
			waited = true
			_ = g.wait(ctx, gate) // a cancelled wait goes on: the stream then ends aborted
		}
		if !waited && visible == "" {
			pass()
		}
		streamed := ""
		for c, err := range inner {
			if !yield(c, err) {
				return
			}
			if waited {
				continue
			}
			//dshvet:partial the streamed text is what is compared; tool calls and the finish carry none
			switch d := c.(type) {
			case dsh.ChunkTextDelta:
				streamed += d.Text
			case dsh.ChunkReasoningDelta:
				streamed += d.Text
			}
			if streamed == visible {
				pass()
			}
		}
	}
}

// Requests returns the requests the model received.
func (g *gatedModel) Requests() []llm.Request { return g.inner.Requests() }

// Requests returns the model requests, each as the texts of its messages.
func (r *Runtime) Requests() [][]string {
	r.mu.Lock()
	model := r.model
	r.mu.Unlock()
	var out [][]string
	for _, req := range model.Requests() {
		var texts []string
		for _, m := range req.Messages {
			texts = append(texts, conformance.BlockTexts(m.Content)...)
		}
		out = append(out, texts)
	}
	return out
}

// RequestInfo returns the system prompt and tool names of each model request.
func (r *Runtime) RequestInfo() []conformance.RequestInfo {
	r.mu.Lock()
	model := r.model
	r.mu.Unlock()
	var out []conformance.RequestInfo
	for _, req := range model.Requests() {
		info := conformance.RequestInfo{System: req.System, Tools: []string{}}
		for _, t := range req.Tools {
			info.Tools = append(info.Tools, t.Name)
		}
		out = append(out, info)
	}
	return out
}
