package loop

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/internal/variant"
	"github.com/dshkit/dsh/runtime/llm"
)

// Failure codes of the model-call points (agent/request, agent/response): the turn ends
// error{failure} with one of them and a message naming the listener.
const (
	// CodeModelListenerFailed is a model-call listener that returned an error, panicked
	// or overran Config.ModelListenerTimeout.
	CodeModelListenerFailed = "MODEL_LISTENER_FAILED"
	// CodeModelRewriteInvalid is an agent/request rewrite or answer a provider could not
	// accept (an empty message list, a tool result without its call, a tool the registry
	// does not have, ...).
	CodeModelRewriteInvalid = "MODEL_REWRITE_INVALID"
)

// errFoldStop stops a model-call fold at a terminal decision (answer, deny, block).
var errFoldStop = errors.New("loop: fold stopped")

// requestPlan is what the agent/request fold made of one attempt: the config the header
// records, the request to send, or a synthetic answer, or a denial.
type requestPlan struct {
	cfg    dsh.LLMCallConfig // the durable config (request/header)
	req    llm.Request       // what the provider receives
	answer *answer           // a synthetic answer: the provider is not called
	deny   *dsh.TurnEndBlocked
}

// answer is a synthetic response an agent/request listener gave.
type answer struct {
	content []dsh.ContentBlock
	usage   *dsh.Usage
	by      string
}

// modelCalls is the driver's reusable state of the model-call folds, so that a step with
// listeners allocates little more than its payloads. Only the driver (one at a time) uses
// it; an abandoned, overrunning listener holds its payload, never this state.
type modelCalls struct {
	rf      requestFold
	rfApply func(context.Context, string, dsh.RequestDecision) (*dsh.RequestPayload, error)
	sf      responseFold
	sfApply func(context.Context, string, dsh.ResponseDecision) (*dsh.ResponsePayload, error)
	held    []dsh.AssistantChunk // the chunks a stream holds back for agent/response
	names   []string             // the tool names tools was built for
	tools   []dsh.ModelTool      // the payloads' tools (read-only for listeners)
	// offered are the names of the tools the step's request offered when agent/request
	// changed them (nil: the registry's, unchanged): a call to another tool is unknown.
	offered []string
}

// hidden reports whether the step's request did not offer the tool name.
func (c *modelCalls) hidden(name string) bool {
	return c.offered != nil && !slices.Contains(c.offered, name)
}

// modelTools returns the payload's tools for specs, rebuilt only when the names change.
func (c *modelCalls) modelTools(specs []llm.ToolSpec, names []string) []dsh.ModelTool {
	if c.tools == nil || !slices.Equal(c.names, names) {
		c.names, c.tools = names, toModelTools(specs)
	}
	return c.tools[:len(c.tools):len(c.tools)]
}

// requestFold is one run of the agent/request fold.
type requestFold struct {
	plan  requestPlan
	cur   dsh.ModelRequest // the request as the listeners so far left it
	p     *dsh.RequestPayload
	names []string // the registry's tool names visible to the agent, sorted
	// behind are the deferred tools the request leaves out, callable unless a restrict
	// left them out of its allow-list.
	behind []string
	chain  []dsh.ModelRewriteStep
}

// prepareRequest derives the request of one attempt from the log and the agent's config,
// runs agent/request over it (B §2.4), and logs request/header (and request/rewritten when
// the request sent differs from the derived one). A listener failure or an invalid
// rewrite is returned as an *llm.FailureError naming the listener: nothing is sent.
func (a *Agent) prepareRequest(ctx context.Context, t *turnRun, step, attempt int) (requestPlan, error) {
	plan := requestPlan{cfg: a.seed()}
	a.calls.offered = nil
	history, err := a.req.messages(a.log)
	if err != nil {
		return plan, err
	}
	specs, names, behind := a.toolSpecs(history)
	var f *requestFold
	if a.reg.Listens(dsh.RequestEventName) {
		c := &a.calls
		f = &c.rf
		all := names
		if len(behind) > 0 {
			all = slices.Sorted(slices.Values(append(slices.Clone(names), behind...)))
		}
		*f = requestFold{plan: plan, names: all, behind: behind}
		if c.rfApply == nil {
			c.rfApply = f.apply
		}
		orig := dsh.ModelRequest{Config: cloneConfig(plan.cfg), Messages: a.req.modelMessages(), Tools: c.modelTools(specs, names)}
		f.cur = orig
		f.p = &dsh.RequestPayload{Agent: a, AgentID: a.id, Turn: t.n, Step: step, Attempt: attempt, Request: orig, Original: orig}
		err := a.reg.RunRequest(ctx, f.p, a.cfg.ModelListenerTimeout, c.rfApply)
		plan = f.plan
		if err != nil && !errors.Is(err, errFoldStop) {
			return plan, listenerFailure(err, a.cfg.ModelListenerTimeout)
		}
	}
	if plan.deny != nil {
		return plan, nil
	}
	if plan.cfg.Provider == "" || plan.cfg.Model == "" {
		return plan, ErrNoModel
	}
	if err := a.logHeader(dsh.RequestHeader{Config: plan.cfg, Tools: names}); err != nil {
		return plan, err
	}
	if f != nil && len(f.chain) > 0 {
		before := dsh.ModelRequest{Config: plan.cfg, Messages: toModelMessages(history), Tools: toModelTools(specs)}
		if _, err := a.log.Append(a.base, dsh.RequestRewritten{Turn: t.n, Step: step, Chain: f.chain,
			Before: digestOf(before), After: digestOf(f.cur)}); err != nil {
			return plan, err
		}
		plan.req = fromModelRequest(f.cur)
		a.calls.offered = slices.Clone(f.behind) // callable, though no request declares them yet
		for _, tool := range f.cur.Tools {
			a.calls.offered = append(a.calls.offered, tool.Name)
		}
		return plan, nil
	}
	plan.req = llm.Request{Config: cloneConfig(plan.cfg), Messages: history, Tools: specs}
	if plan.cfg.System != nil {
		plan.req.System = *plan.cfg.System
	}
	return plan, nil
}

// apply applies one listener's decision to the current request and returns the payload
// the next listener sees.
func (f *requestFold) apply(_ context.Context, listener string, d dsh.RequestDecision) (*dsh.RequestPayload, error) {
	switch v := d.(type) { // the registry returns value variants only
	case dsh.RequestPass:
		return nil, nil
	case dsh.RequestUse:
		f.plan.cfg = cloneConfig(v.Config)
		f.cur.Config = cloneConfig(v.Config)
	case dsh.RequestRewrite:
		if err := f.rewrite(listener, v); err != nil {
			return nil, err
		}
		f.chain = append(f.chain, dsh.ModelRewriteStep{By: listener, Kind: dsh.ModelRewriteKindRewrite, Reason: v.Reason, Digest: ptrOf(digestOf(f.cur))})
	case dsh.RequestRestrict:
		kept := make([]dsh.ModelTool, 0, len(f.cur.Tools))
		for _, tool := range f.cur.Tools {
			if slices.Contains(v.Allow, tool.Name) {
				kept = append(kept, tool)
			}
		}
		f.cur.Tools = kept
		f.behind = slices.DeleteFunc(slices.Clone(f.behind), func(name string) bool { return !slices.Contains(v.Allow, name) })
		f.chain = append(f.chain, dsh.ModelRewriteStep{By: listener, Kind: dsh.ModelRewriteKindRestrict, Reason: v.Reason, Digest: ptrOf(digestOf(f.cur))})
	case dsh.RequestAnswer:
		if err := checkAnswer(v.Content); err != nil {
			return nil, invalid(dsh.RequestEventName, listener, "answer", err)
		}
		f.plan.answer = &answer{content: v.Content, usage: v.Usage, by: listener}
		return nil, errFoldStop
	case dsh.RequestDeny:
		by := listener // a copy: taking the parameter's address would move it to the heap
		f.plan.deny = &dsh.TurnEndBlocked{Reason: &v.Reason, By: &by}
		return nil, errFoldStop
	}
	np := *f.p
	np.Request = f.cur
	f.p = &np
	return f.p, nil
}

// rewrite applies a rewrite decision after checking that a provider can accept it.
func (f *requestFold) rewrite(listener string, v dsh.RequestRewrite) error {
	next := f.cur
	if v.System != nil {
		next.Config = cloneConfig(next.Config)
		if *v.System == "" {
			next.Config.System = nil
		} else {
			s := *v.System
			next.Config.System = &s
		}
	}
	if v.Messages != nil {
		if err := checkMessages(v.Messages); err != nil {
			return invalid(dsh.RequestEventName, listener, "rewrite", err)
		}
		next.Messages = slices.Clone(v.Messages)
	}
	if v.Tools != nil {
		seen := make(map[string]bool, len(v.Tools))
		for _, tool := range v.Tools {
			if _, ok := slices.BinarySearch(f.names, tool.Name); !ok {
				return invalid(dsh.RequestEventName, listener, "rewrite", fmt.Errorf("tool %q is not in the registry", tool.Name))
			}
			if seen[tool.Name] {
				return invalid(dsh.RequestEventName, listener, "rewrite", fmt.Errorf("tool %q is offered twice", tool.Name))
			}
			seen[tool.Name] = true
		}
		next.Tools = slices.Clone(v.Tools)
	}
	f.cur = next
	return nil
}

// checkMessages checks that a provider can accept msgs: at least one message; roles user
// or assistant; no nil block; tool calls in assistant messages only, with an id and a
// name; tool results in user messages only, each answering a call of an earlier assistant
// message, at most once. msgs come from a decision, whose pointer variants the registry
// has made values, except a nil one, which variant.Value makes nil.
func checkMessages(msgs []dsh.ModelMessage) error {
	if len(msgs) == 0 {
		return errors.New("the message list is empty")
	}
	calls := map[string]bool{} // call id -> answered
	for i, m := range msgs {
		if m.Role != dsh.ModelRoleUser && m.Role != dsh.ModelRoleAssistant {
			return fmt.Errorf("message %d: role %q", i, m.Role)
		}
		for _, b := range m.Content {
			//dshvet:partial only these blocks have constraints to check; the others are valid as decoded
			switch v := variant.Value(b).(type) {
			case nil:
				return fmt.Errorf("message %d: a nil content block", i)
			case dsh.ToolCallBlock:
				if m.Role != dsh.ModelRoleAssistant {
					return fmt.Errorf("message %d: tool call %q in a %s message", i, v.ID, m.Role)
				}
				if v.ID == "" || v.Name == "" {
					return fmt.Errorf("message %d: a tool call without an id or a name", i)
				}
				if _, dup := calls[v.ID]; dup {
					return fmt.Errorf("message %d: tool call id %q used twice", i, v.ID)
				}
				calls[v.ID] = false
			case dsh.ToolResultBlock:
				if m.Role != dsh.ModelRoleUser {
					return fmt.Errorf("message %d: tool result %q in an assistant message", i, v.ToolCallID)
				}
				answered, ok := calls[v.ToolCallID]
				if !ok {
					return fmt.Errorf("message %d: tool result %q without its call", i, v.ToolCallID)
				}
				if answered {
					return fmt.Errorf("message %d: tool call %q answered twice", i, v.ToolCallID)
				}
				calls[v.ToolCallID] = true
			}
		}
	}
	return nil
}

// checkAnswer checks a synthetic answer: text, reasoning and tool-call blocks only (no
// nil block), each call with an id unique in the answer and a tool name. As in
// checkMessages, only a nil pointer variant is left to variant.Value.
func checkAnswer(content []dsh.ContentBlock) error {
	ids := map[string]bool{}
	for i, b := range content {
		switch v := variant.Value(b).(type) {
		case dsh.TextBlock, dsh.ReasoningBlock:
		case dsh.ToolCallBlock:
			if v.ID == "" || v.Name == "" {
				return fmt.Errorf("block %d: a tool call without an id or a name", i)
			}
			if ids[v.ID] {
				return fmt.Errorf("block %d: tool call id %q used twice", i, v.ID)
			}
			ids[v.ID] = true
		case nil:
			return fmt.Errorf("block %d: a nil content block", i)
		default:
			return fmt.Errorf("block %d: a %s block cannot be part of a response", i, v.Kind())
		}
	}
	return nil
}

// invalid is the failure of a decision a provider could not accept.
func invalid(event, listener, what string, err error) error {
	return &llm.FailureError{Failure: dsh.LLMFailure{Code: CodeModelRewriteInvalid,
		Message: fmt.Sprintf("%s listener %s returned an invalid %s: %v", event, listener, what, err)}}
}

// listenerFailure is the failure of a model-call fold stopped by err: a listener's error,
// panic or overrun names the listener; an invalid decision is already a failure.
func listenerFailure(err error, bound interface{ String() string }) error {
	var fe *llm.FailureError
	if errors.As(err, &fe) {
		return err
	}
	var le *dsh.ListenerError
	if !errors.As(err, &le) {
		return err
	}
	msg := fmt.Sprintf("%s listener %s failed: %v", le.Event, le.Listener, le.Err)
	if errors.Is(le.Err, dsh.ErrListenerOverrun) {
		msg = fmt.Sprintf("%s listener %s overran its bound of %s", le.Event, le.Listener, bound)
	}
	return &llm.FailureError{Failure: dsh.LLMFailure{Code: CodeModelListenerFailed, Message: msg}, Err: err}
}

// respond runs agent/response over a complete response (B §5.3 step 4) and logs what it
// let through: the chunks (the held ones as they came when nothing changed, else the
// chunks of the new response) and then settles. held are the chunks a stream held back
// because a listener listens; seqs the chunks already logged otherwise. A block ends the
// step endBlocked with t.blocked set.
func (a *Agent) respond(ctx context.Context, t *turnRun, step int, resp llm.Response, held []dsh.AssistantChunk,
	seqs []int64, source dsh.ResponseSource) (ending, *dsh.LLMFailure, error) {
	if a.reg.Listens(dsh.ResponseEventName) {
		c := &a.calls
		orig := dsh.ModelResponse{Content: resp.Content, Finish: resp.Finish.Reason, Usage: resp.Usage}
		f := &c.sf
		*f = responseFold{cur: orig}
		if c.sfApply == nil {
			c.sfApply = f.apply
		}
		f.p = &dsh.ResponsePayload{Agent: a, AgentID: a.id, Turn: t.n, Step: step, Response: orig, Original: orig, Source: source}
		err := a.reg.RunResponse(ctx, f.p, a.cfg.ModelListenerTimeout, c.sfApply)
		if err != nil && !errors.Is(err, errFoldStop) {
			if t.ctx.Err() != nil {
				return endNone, nil, nil // cancelled: the turn ends aborted, nothing logged
			}
			return endNone, nil, listenerFailure(err, a.cfg.ModelListenerTimeout)
		}
		if len(f.chain) > 0 {
			rec := dsh.ResponseRewritten{Turn: t.n, Step: step, Chain: f.chain, Before: digestOf(orig)}
			if f.blocked == nil {
				rec.After = ptrOf(digestOf(f.cur))
			}
			if _, err := a.log.Append(a.base, rec); err != nil {
				return endNone, nil, err
			}
			if f.blocked != nil {
				t.blocked = f.blocked
				return endBlocked, nil, nil
			}
			resp, held = assemble(f.cur.Content, f.cur.Finish, f.cur.Usage)
		}
	}
	for _, c := range held {
		ev, err := a.log.Append(a.base, dsh.AssistantChunkLogged{Turn: t.n, Step: step, Chunk: c})
		if err != nil {
			return endNone, nil, err
		}
		seqs = append(seqs, ev.Seq)
	}
	return a.settle(ctx, t, step, resp, seqs, source)
}

// responseFold is one run of the agent/response fold.
type responseFold struct {
	cur     dsh.ModelResponse
	p       *dsh.ResponsePayload
	chain   []dsh.ModelRewriteStep
	blocked *dsh.TurnEndBlocked
}

// apply applies one agent/response decision.
func (f *responseFold) apply(_ context.Context, listener string, d dsh.ResponseDecision) (*dsh.ResponsePayload, error) {
	switch v := d.(type) { // the registry returns value variants only
	case dsh.ResponseAccept:
		return nil, nil
	case dsh.ResponseReplace:
		f.cur = replaceText(f.cur, v.Text, v.ToolCalls == dsh.ReplaceToolCallsDrop)
		f.chain = append(f.chain, dsh.ModelRewriteStep{By: listener, Kind: dsh.ModelRewriteKindReplace, Reason: v.Reason, Digest: ptrOf(digestOf(f.cur))})
	case dsh.ResponseBlock:
		f.chain = append(f.chain, dsh.ModelRewriteStep{By: listener, Kind: dsh.ModelRewriteKindBlock, Reason: &v.Reason})
		by := listener
		f.blocked = &dsh.TurnEndBlocked{Reason: &v.Reason, By: &by}
		return nil, errFoldStop
	}
	np := *f.p
	np.Response = f.cur
	f.p = &np
	return f.p, nil
}

// replaceText is r with its text replaced (#ResponseReplace): one text block in place of
// the first, reasoning kept, tool calls kept or dropped. r's content holds value forms
// only: a response the llm.Assembler built, or an earlier replaceText.
func replaceText(r dsh.ModelResponse, text string, drop bool) dsh.ModelResponse {
	out := make([]dsh.ContentBlock, 0, len(r.Content)+1)
	placed, dropped := false, false
	for _, b := range r.Content {
		switch b.(type) {
		case dsh.TextBlock:
			if !placed && text != "" {
				out = append(out, dsh.TextBlock{Text: text})
			}
			placed = true
		case dsh.ToolCallBlock:
			if drop {
				dropped = true
				continue
			}
			out = append(out, b)
		default:
			out = append(out, b)
		}
	}
	if !placed && text != "" {
		out = append([]dsh.ContentBlock{dsh.TextBlock{Text: text}}, out...)
	}
	r.Content = out
	if dropped && r.Finish == dsh.FinishReasonToolCalls {
		r.Finish = dsh.FinishReasonStop
	}
	return r
}

// assemble turns content into the chunks that stream it and the response they fold to.
// content holds value forms only: a response's content (see replaceText), or an answer
// the registry normalized and checkAnswer let through.
func assemble(content []dsh.ContentBlock, finish dsh.FinishReason, usage *dsh.Usage) (llm.Response, []dsh.AssistantChunk) {
	chunks := make([]dsh.AssistantChunk, 0, len(content)+1)
	for _, b := range content {
		//dshvet:partial an answer holds text, reasoning and tool calls; other blocks have no chunk
		switch v := b.(type) {
		case dsh.TextBlock:
			if v.Text != "" {
				chunks = append(chunks, dsh.ChunkTextDelta{Text: v.Text})
			}
		case dsh.ReasoningBlock:
			if v.Text != "" {
				chunks = append(chunks, dsh.ChunkReasoningDelta{Text: v.Text})
			}
		case dsh.ToolCallBlock:
			chunks = append(chunks, dsh.ChunkToolCall{ID: v.ID, Name: v.Name, Arguments: v.Arguments})
		}
	}
	chunks = append(chunks, dsh.ChunkFinish{Reason: finish, Usage: usage})
	var asm llm.Assembler
	for _, c := range chunks {
		_ = asm.Add(c) // cannot fail: no nil chunk, one finish, last
	}
	return asm.Response(), chunks
}

// answerResponse is the response of a synthetic answer: "tool-calls" when it calls a tool.
func answerResponse(ans *answer) (llm.Response, []dsh.AssistantChunk) {
	finish := dsh.FinishReasonStop
	for _, b := range ans.content {
		if _, ok := b.(dsh.ToolCallBlock); ok {
			finish = dsh.FinishReasonToolCalls
		}
	}
	return assemble(ans.content, finish, ans.usage)
}

// toModelMessages is the history as the payload shows it: a new slice, the content shared.
func toModelMessages(history []llm.Message) []dsh.ModelMessage {
	out := make([]dsh.ModelMessage, len(history))
	for i, m := range history {
		out[i] = dsh.ModelMessage{Role: dsh.ModelRole(m.Role), Content: m.Content, Source: m.Source}
	}
	return out
}

// toModelTools is the tools as the payload shows them.
func toModelTools(specs []llm.ToolSpec) []dsh.ModelTool {
	out := make([]dsh.ModelTool, len(specs))
	for i, s := range specs {
		out[i] = dsh.ModelTool{Name: s.Name, Description: s.Description, InputSchema: s.InputSchema}
		if s.DeferLoading {
			out[i].DeferLoading = ptrOf(true)
		}
	}
	return out
}

// fromModelRequest is the llm.Request of a rewritten request, sharing nothing mutable with
// the listeners' values.
func fromModelRequest(r dsh.ModelRequest) llm.Request {
	req := llm.Request{Config: cloneConfig(r.Config)}
	if r.Config.System != nil {
		req.System = *r.Config.System
	}
	req.Messages = make([]llm.Message, len(r.Messages))
	for i, m := range r.Messages {
		req.Messages[i] = llm.Message{Role: llm.Role(m.Role), Content: m.Content, Source: m.Source}
	}
	if len(r.Tools) > 0 {
		req.Tools = make([]llm.ToolSpec, len(r.Tools))
		for i, t := range r.Tools {
			req.Tools[i] = llm.ToolSpec{Name: t.Name, Description: t.Description, InputSchema: slices.Clone(t.InputSchema),
				DeferLoading: t.DeferLoading != nil && *t.DeferLoading}
		}
	}
	return req.Clone()
}

// digestOf is "sha256:" and the hex SHA-256 of v's dsh JSON encoding.
func digestOf(v json.Marshaler) string {
	data, err := v.MarshalJSON()
	if err != nil {
		data = []byte(err.Error())
	}
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// ptrOf returns a pointer to a copy of v.
func ptrOf[T any](v T) *T { return &v }
