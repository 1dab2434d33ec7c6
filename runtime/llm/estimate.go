package llm

import (
	"strings"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/internal/variant"
)

// CodeContextWindowExceeded is the failure code of a request the model's context window
// cannot hold. The OpenAI adapter normalizes the provider's "context_length_exceeded" to
// it, and a [Scripted] model with a context window reports it; the loop answers it with
// overflow compaction.
const CodeContextWindowExceeded = "CONTEXT_WINDOW_EXCEEDED"

// IsContextWindowExceeded reports whether f is a context-window failure (the code
// [CodeContextWindowExceeded], to which the adapters normalize their providers' codes).
func IsContextWindowExceeded(f dsh.LLMFailure) bool {
	return f.Code == CodeContextWindowExceeded
}

// Token estimation. The estimator is deliberately simple and deterministic: a text costs
// one token per started 4 bytes, every message 4 tokens of framing, an image a flat 256.
// The loop measures requests with it where the provider reports no usage, and the
// [Scripted] model reports the same figures as its usage, so that tests of compaction are
// deterministic.
const (
	// estimateBytesPerToken is the bytes of text one token stands for.
	estimateBytesPerToken = 4
	// estimateMessageOverhead is the framing tokens of one message.
	estimateMessageOverhead = 4
	// estimateImageTokens is the flat cost of one image block.
	estimateImageTokens = 256
)

// EstimateText returns the estimated tokens of a text.
func EstimateText(s string) int {
	return (len(s) + estimateBytesPerToken - 1) / estimateBytesPerToken
}

// EstimateBlocks returns the estimated tokens of content blocks; a pointer variant counts
// as the value it points to, and nil as nothing.
func EstimateBlocks(bs []dsh.ContentBlock) int {
	n := 0
	for _, b := range bs {
		switch v := variant.Value(b).(type) {
		case dsh.TextBlock:
			n += EstimateText(v.Text)
		case dsh.ReasoningBlock:
			n += EstimateText(v.Text)
		case dsh.ToolCallBlock:
			n += EstimateText(v.Name) + EstimateText(v.Arguments) + 2
		case dsh.ToolResultBlock:
			n += EstimateBlocks(v.Content) + 2
		case dsh.ImageBlock:
			n += estimateImageTokens
		}
	}
	return n
}

// EstimateMessage returns the estimated tokens of one message.
func EstimateMessage(m Message) int { return estimateMessageOverhead + EstimateBlocks(m.Content) }

// EstimateMessages returns the estimated tokens of messages.
func EstimateMessages(ms []Message) int {
	n := 0
	for _, m := range ms {
		n += EstimateMessage(m)
	}
	return n
}

// EstimatePrefix returns the estimated tokens of what a request sends besides its
// messages: the system prompt and the tools.
func EstimatePrefix(system string, tools []ToolSpec) int {
	n := 0
	if system != "" {
		n += estimateMessageOverhead + EstimateText(system)
	}
	for _, t := range tools {
		n += estimateMessageOverhead + EstimateText(t.Name) + EstimateText(t.Description) + EstimateText(string(t.InputSchema))
	}
	return n
}

// EstimateRequest returns the estimated input tokens of a request: its system prompt (or
// Config.System when System is empty), tools and messages.
func EstimateRequest(r Request) int {
	system := r.System
	if system == "" && r.Config.System != nil {
		system = *r.Config.System
	}
	return EstimatePrefix(system, r.Tools) + EstimateMessages(r.Messages)
}

// estimateResponse returns the estimated output tokens of a scripted response.
func estimateResponse(r ScriptedResponse, calls []dsh.ChunkToolCall) int {
	var b strings.Builder
	b.WriteString(r.Reasoning)
	b.WriteString(r.Text)
	n := EstimateText(b.String())
	for _, c := range calls {
		n += EstimateText(c.Name) + EstimateText(c.Arguments) + 2
	}
	return n
}
