// Package llm is the model seam of the dsh agent loop: the [Model] interface the loop
// streams a step's response from (docs/design/SEMANTICS.md#53-step), a [Scripted] model for tests
// and demos, the token estimator, dsh's [RetryPolicy] and the [ContextWindow] table. It
// imports no vendor SDK: the providers that reach real models through the vendors'
// official Go SDKs, and their registry, are in package runtime/llm/provider, so a plugin
// module that imports the runtime does not depend on them.
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
