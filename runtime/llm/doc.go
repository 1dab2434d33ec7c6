// Package llm is the model seam of the dsh agent loop: the [Model] interface the loop
// streams a step's response from (docs/design/SEMANTICS.md#53-step), a [Scripted] model for tests
// and demos, and the providers that reach real models through the vendors' official Go
// SDKs: [Anthropic] (Messages API), [OpenAIResponses] (Responses API), [OpenAIChat] (chat
// completions, for OpenAI-compatible servers) and [Gemini] (Gemini API).
//
// # Providers
//
// A [Registry] maps provider names to [Provider] factories; [Builtin] is dsh's, the one
// place a provider is added. [Registry.Open] builds the model of a --model PROVIDER:MODEL
// with its call configuration, [Registry.Check] reports a missing credential (a
// [*MissingEnvError] naming the variable) before anything starts. Keys and endpoints come
// from the variables the engines read ([Options].Getenv). The SDKs' own retries are off:
// [RetryPolicy] is dsh's, as an agent/request-error listener. Each call is bounded by
// [Options].Timeout.
//
// Failures are normalized alike for every provider: an HTTP error status is a failure with
// the status, the provider's message and code, the request id and Retry-After (as
// providerRetryAfterMs); a 200 response with an error body, or an error event inside the
// stream, a failure with the provider's message and code; any way of saying "over the
// context window" is [CodeContextWindowExceeded]; an authentication failure names the
// credential variable; an undecodable event is [CodeBadResponse]; a stream that ends or
// breaks before its terminal event is [CodeStreamInterrupted] (its tool calls in progress
// are not yielded, so the loop never logs it as a complete message); a call past its
// timeout is [CodeTimeout].
//
// # The stream contract
//
// [Model.Stream] returns a lazy sequence; each iteration of it is one model call (the
// scripted model consumes a response and records the request, a provider sends one HTTP
// request). A call yields, in order:
//
//   - zero or more [dsh.ChunkTextDelta], [dsh.ChunkReasoningDelta] and [dsh.ChunkToolCall]
//     chunks. A tool call is yielded only once it is complete (id, name and the whole raw
//     argument string); a half-received tool call is never yielded.
//   - then exactly one [dsh.ChunkFinish], after which nothing more is yielded. Its reason
//     is stop, tool-calls, max-tokens, error or aborted; Usage is set when the provider
//     reported it; Error is set for error and aborted finishes.
//
// Failures are values. A failure the provider reported (an HTTP error status, an error
// event inside the stream) and a stream that broke before its end are a finish with reason
// error and an [dsh.LLMFailure]{message, code, status?, providerRetryAfterMs?, requestId?}.
// Only a transport-level failure with no response at all (dial, TLS, a request that could
// not be encoded) may instead end the stream with a yielded non-nil Go error, with a nil
// chunk; that pair is the last thing yielded, no finish follows it, and the loop turns it
// into a failure with [AsFailure]. Codes the package itself produces are the Code*
// constants.
//
// Cancellation: when ctx is cancelled the stream ends promptly with a finish whose reason
// is aborted and whose Error carries [CodeAborted] and the context's cause; chunks that
// arrived before are kept (the loop appends them as an interrupted assistant message). If
// the consumer stops the iteration early (break), the stream stops yielding and releases
// its resources; no finish is yielded then.
//
// [Collect] and [Assembler] fold a stream into a [Response]: the assistant message content
// in stream order, the text, the reasoning, the tool calls in order, the finish and the
// usage.
//
// The loop, not the model, applies the step rules of §5.3: it logs every chunk, drops
// truncated tool calls on a max-tokens finish, and runs agent/request-error on an error or
// aborted finish.
package llm
