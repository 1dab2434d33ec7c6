package loop

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/internal/variant"
	"github.com/dshkit/dsh/runtime/llm"
	"github.com/dshkit/dsh/runtime/session"
	"github.com/dshkit/dsh/runtime/tools"
)

// requestState is the driver's own state: what the requests of one agent instance depend
// on besides the config (the header and context last logged, the history derived from
// the log so far), and a turn/end left pending by a failed append. Only the driver (one
// at a time) uses it.
type requestState struct {
	first      dsh.HeaderReason    // reason of this instance's first request/header
	sent       bool                // this instance logged a request/header
	header     []byte              // JSON of the last logged header; nil: none
	logged     *dsh.LLMCallConfig  // config of the last logged header (folded into the seed)
	context    *dsh.RequestContext // the last logged request/context
	folded     int64               // the seq up to which history is folded
	history    []llm.Message       // user/message, assistant/message and tool/result, in order
	model      []dsh.ModelMessage  // a mirror of a prefix of history for the agent/request payloads
	seqs       []int64             // the seq of the event each history message came from
	pendingEnd *dsh.TurnEnd        // a turn/end whose append failed, appended before the next turn

	// The compaction state, folded from the log too (compaction.go).
	usage       int    // input+output tokens the provider reported for the last response
	usageAt     int    // len(history) when usage applied; -1: no usage since the last checkpoint
	attempts    int    // compaction/start events so far (the next attempt's ordinal - 1)
	generation  int    // compaction/checkpoint events so far
	defers      int    // consecutive deferred pressure attempts
	openAttempt string // the compactionId of a compaction/start without its end: stale

	respondedAt      time.Time // when the last assistant/message was logged (zero: none)
	checkpointTokens int       // the projected size after the last compaction/checkpoint
}

// fold folds one event into the history (B §5.3 step 1: the messages are derived from
// the log, so a resumed agent sends the same history) and, when headers is set (on
// resume), the last request/header and request/context into the state (a running agent
// keeps those as it appends them). Events must come in seq order; fold skips the events
// before r.folded.
func (r *requestState) fold(ev session.Event, headers bool) error {
	if ev.Seq < r.folded {
		return nil
	}
	r.folded = ev.Seq + 1
	switch ev.Type {
	case dsh.UserMessageLoggedType, dsh.ToolResultLoggedType, dsh.AssistantMessageLoggedType,
		dsh.CompactionCheckpointType, dsh.CompactionStartType, dsh.CompactionEndType, dsh.CompactionSkippedType:
	case dsh.RequestHeaderLoggedType, dsh.RequestContextType:
		if !headers {
			return nil
		}
	default:
		return nil
	}
	data, err := ev.Decode()
	if err != nil {
		return fmt.Errorf("loop: history: event %d: %w", ev.Seq, err)
	}
	role := llm.RoleUser
	var content []dsh.ContentBlock
	var source dsh.MessageSource
	//dshvet:partial the switch on ev.Type above lets only these types through
	switch d := data.(type) {
	case dsh.RequestHeaderLogged:
		r.header, err = d.Header.MarshalJSON()
		if err != nil {
			return err
		}
		cfg := d.Header.Config
		r.logged = &cfg
		return nil
	case dsh.RequestContext:
		r.context = &d
		return nil
	case dsh.UserMessageLogged:
		content, source = d.Message.Content, d.Message.Source
	case dsh.ToolResultLogged:
		content = withNotice(d.Message.Content, d.RewriteNotice)
	case dsh.AssistantMessageLogged:
		r.respondedAt = ev.Time
		if d.Usage != nil && d.Interrupted == nil {
			r.usage, r.usageAt = d.Usage.InputTokens+d.Usage.OutputTokens, len(r.history)
			if len(d.Message.Content) > 0 {
				r.usageAt++
			}
		}
		if len(d.Message.Content) == 0 {
			return nil // nothing to replay (e.g. a max-tokens finish of dropped calls)
		}
		role, content = llm.RoleAssistant, d.Message.Content
	case dsh.CompactionCheckpoint:
		return r.checkpoint(ev.Seq, d)
	case dsh.CompactionStart:
		r.attempts++
		r.defers = 0
		r.openAttempt = d.CompactionID
		return nil
	case dsh.CompactionEnd:
		if r.openAttempt == d.CompactionID {
			r.openAttempt = ""
		}
		return nil
	case dsh.CompactionSkipped:
		if d.Trigger == dsh.CompactionTriggerPressure {
			r.defers = d.Consecutive
			if d.Overridden != nil && *d.Overridden {
				r.defers = 0
			}
		}
		return nil
	}
	r.history = append(r.history, llm.Message{Role: role, Content: content, Source: source})
	r.seqs = append(r.seqs, ev.Seq)
	return nil
}

// checkpoint folds a compaction/checkpoint: its message replaces the history range it
// names (docs/design/REWRITE-COMPACTION.md#22-design-a-compaction-phase-with-two-typed-points), and the provider's last usage no longer applies.
func (r *requestState) checkpoint(seq int64, d dsh.CompactionCheckpoint) error {
	start, end := d.Replace.Start, d.Replace.End
	if start < 0 || end < start || end > len(r.history) {
		return fmt.Errorf("loop: history: event %d: checkpoint range [%d, %d) outside a history of %d messages",
			seq, start, end, len(r.history))
	}
	msg := llm.Message{Role: llm.RoleUser, Content: d.Message.Content, Source: d.Message.Source}
	history := make([]llm.Message, 0, len(r.history)-(end-start)+1)
	history = append(append(append(history, r.history[:start]...), msg), r.history[end:]...)
	seqs := make([]int64, 0, len(history))
	seqs = append(append(append(seqs, r.seqs[:start]...), seq), r.seqs[end:]...)
	r.history, r.seqs = history, seqs
	r.model = nil // the mirror no longer matches: modelMessages rebuilds it
	r.usageAt = -1
	r.checkpointTokens = d.TokensAfter
	r.generation++
	return nil
}

// messages folds the events appended since the last call into the history and returns
// it. It reads only those events, so a step costs the same however long the log is. The
// returned slice must not be appended to.
func (r *requestState) messages(log *session.Log) ([]llm.Message, error) {
	for ev, err := range log.EventsFrom(r.folded) {
		if err != nil {
			return nil, err
		}
		if err := r.fold(ev, false); err != nil {
			return nil, err
		}
	}
	return r.history[:len(r.history):len(r.history)], nil
}

// modelMessages returns the history as the agent/request payloads show it: a mirror kept
// in step with the history (extended by the messages folded since the last call, rebuilt
// after a checkpoint), so that a step with a listener copies no history. The returned
// slice must not be appended to; listeners read it and never change it in place.
func (r *requestState) modelMessages() []dsh.ModelMessage {
	if len(r.model) > len(r.history) {
		r.model = nil
	}
	for _, m := range r.history[len(r.model):] {
		r.model = append(r.model, dsh.ModelMessage{Role: dsh.ModelRole(m.Role), Content: m.Content, Source: m.Source})
	}
	return r.model[:len(r.model):len(r.model)]
}

// seed is the config agent/request starts from: the agent's options, then what the
// logged header adds (B §2.4).
func (a *Agent) seed() dsh.LLMCallConfig {
	c := cloneConfig(a.cfg.LLM)
	if c.System == nil && a.cfg.System != "" {
		s := a.cfg.System
		c.System = &s
	}
	if h := a.req.logged; h != nil {
		if c.Provider == "" {
			c.Provider = h.Provider
		}
		if c.Model == "" {
			c.Model = h.Model
		}
		if c.MaxTokens == nil && h.MaxTokens != nil {
			v := *h.MaxTokens
			c.MaxTokens = &v
		}
		if c.Temperature == nil && h.Temperature != nil {
			v := *h.Temperature
			c.Temperature = &v
		}
		if c.System == nil && h.System != nil {
			v := *h.System
			c.System = &v
		}
	}
	return c
}

// logHeader appends request/header when this is the instance's first request or the
// header changed, and request/context when provider or model changed (B §5.3 step 1).
func (a *Agent) logHeader(h dsh.RequestHeader) error {
	data, err := h.MarshalJSON()
	if err != nil {
		return err
	}
	r := &a.req
	reason := dsh.HeaderReasonChange
	if !r.sent {
		reason = r.first
	}
	if !r.sent || !bytes.Equal(data, r.header) {
		if _, err := a.log.Append(a.base, dsh.RequestHeaderLogged{Header: h, Reason: reason}); err != nil {
			return err
		}
		r.sent, r.header = true, data
		cfg := cloneConfig(h.Config)
		r.logged = &cfg
	}
	ctx := dsh.RequestContext{Provider: h.Config.Provider, Model: h.Config.Model}
	if w := a.window(h.Config); w > 0 {
		ctx.ContextWindow = &w
	}
	if r.context == nil || r.context.Provider != ctx.Provider || r.context.Model != ctx.Model {
		if _, err := a.log.Append(a.base, ctx); err != nil {
			return err
		}
		r.context = &ctx
	}
	return nil
}

// toolSpecs returns the tools offered to the model, in canonical (name) order, and their
// names. A tool offered behind a tool search (tools.LoadDeferred) is declared only once a
// tool reference (a text block's toolReference) of history names it, and then with DeferLoading; those left out
// are behind (a call to one still runs). While one is left out, the placeholders
// (tools.LoadPlaceholder) are declared with DeferLoading, else they are left out too.
func (a *Agent) toolSpecs(history []llm.Message) (specs []llm.ToolSpec, names, behind []string) {
	defs := a.rt.Tools().Visible(a.id)
	if len(defs) == 0 {
		return nil, nil, nil
	}
	var loaded map[string]bool
	deferred := false
	for _, d := range defs {
		if d.Loading == tools.LoadDeferred {
			if loaded == nil {
				loaded = referencedTools(history)
			}
			deferred = deferred || !loaded[d.Name]
		}
	}
	specs = make([]llm.ToolSpec, 0, len(defs))
	names = make([]string, 0, len(defs))
	for _, d := range defs {
		switch d.Loading {
		case tools.LoadDeferred:
			if !loaded[d.Name] {
				behind = append(behind, d.Name)
				continue
			}
		case tools.LoadPlaceholder:
			if !deferred {
				continue
			}
		}
		specs = append(specs, llm.ToolSpec{Name: d.Name, Description: d.Description, InputSchema: slices.Clone(d.InputSchema),
			DeferLoading: d.Loading != tools.LoadEager})
		names = append(names, d.Name)
	}
	return specs, names, behind
}

// referencedTools are the names the tool references (text blocks' toolReference) of
// history's tool results name: the tools a tool search loaded into the conversation.
func referencedTools(history []llm.Message) map[string]bool {
	out := map[string]bool{}
	for _, m := range history {
		for _, b := range m.Content {
			tr, ok := variant.Value(b).(dsh.ToolResultBlock)
			if !ok {
				continue
			}
			for _, c := range tr.Content {
				if t, ok := variant.Value(c).(dsh.TextBlock); ok && t.ToolReference != nil {
					out[*t.ToolReference] = true
				}
			}
		}
	}
	return out
}

// cloneConfig deep-copies c.
func cloneConfig(c dsh.LLMCallConfig) dsh.LLMCallConfig {
	out := c
	if c.MaxTokens != nil {
		v := *c.MaxTokens
		out.MaxTokens = &v
	}
	if c.Temperature != nil {
		v := *c.Temperature
		out.Temperature = &v
	}
	if c.System != nil {
		v := *c.System
		out.System = &v
	}
	if c.Extra != nil {
		out.Extra = make(map[string]json.RawMessage, len(c.Extra))
		for k, v := range maps.All(c.Extra) {
			out.Extra[k] = slices.Clone(v)
		}
	}
	return out
}

// withNotice is the model-facing content of a tool/result: its content, with the notice of
// a disclosed tools/rewrite-input rewrite as the first text block of the tool-result
// block (docs/design/REWRITE-COMPACTION.md#16-model-history-and-presentation). The logged content itself is never changed.
func withNotice(content []dsh.ContentBlock, n *dsh.RewriteNotice) []dsh.ContentBlock {
	if n == nil {
		return content
	}
	out := slices.Clone(content)
	for i, b := range out {
		if tr, ok := b.(dsh.ToolResultBlock); ok {
			tr.Content = append([]dsh.ContentBlock{dsh.TextBlock{Text: tools.RewriteNoticeText(*n)}}, tr.Content...)
			out[i] = tr
		}
	}
	return out
}
