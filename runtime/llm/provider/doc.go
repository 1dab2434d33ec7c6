// Package provider holds the model providers that reach real models through the vendors'
// official Go SDKs, behind the [llm.Model] seam: [Anthropic] (Messages API),
// [OpenAIResponses] (Responses API), [OpenAIChat] (chat completions, for OpenAI-compatible
// servers) and [Gemini] (Gemini API). It is a package of its own so that the loop, and
// every plugin module that imports it, does not depend on the SDKs.
//
// A [Registry] maps provider names to [Provider] factories; [Builtin] is dsh's, the one
// place a provider is added. [Registry.Open] builds the model of a --model PROVIDER:MODEL
// with its call configuration, [Registry.Check] reports a missing credential (a
// [*MissingEnvError] naming the variable) before anything starts. Keys and endpoints come
// from the variables the engines read ([Options].Getenv). The SDKs' own retries are off:
// [llm.RetryPolicy] is dsh's, as an agent/request-error listener. Each call is bounded by
// [Options].Timeout, and each response by [Options].Limits ([Limits]: its body, one event,
// one tool call's arguments, what dsh holds of it, its blocks; past one,
// [llm.CodeResponseTooLarge]); a redirect to another origin is refused
// ([llm.CodeRedirectRefused]).
//
// Failures are normalized alike for every provider: an HTTP error status is a failure with
// the status, the provider's message and code, the request id and Retry-After (as
// providerRetryAfterMs); a 200 response with an error body, or an error event inside the
// stream, a failure with the provider's message and code; any way of saying "over the
// context window" is [llm.CodeContextWindowExceeded]; an authentication failure names the
// credential variable; an undecodable event is [llm.CodeBadResponse]; a stream that ends or
// breaks before its terminal event is [llm.CodeStreamInterrupted] (its tool calls in
// progress are not yielded, so the loop never logs it as a complete message); a call past
// its timeout is [llm.CodeTimeout]. Every provider keeps the stream contract of package
// llm.
package provider
