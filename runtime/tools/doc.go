// Package tools runs tool calls: a registry of tool definitions and the five-phase
// pipeline every call goes through (docs/design/SEMANTICS.md#4-tool-execution-pipeline, with dsh's Part A decisions).
//
// # Defining a tool
//
// A [Definition] names the tool, gives the JSON Schema of its arguments, optionally
// declares its [Output] (value schema, rendering, presentation meta) and supplies the body,
// Run. Run gets a [RunContext] (the sealed call, DeferContext, ConcludeTurn, and Execute
// for nested calls) and returns the canonical value, which must be lossless JSON. Register
// definitions in a [Registry]: globally, or for one agent (which shadows a global tool of
// the same name for that agent).
//
// # The pipeline
//
// [Runtime.Execute] takes an [Input] and always returns a [Result]; it never returns an
// error, and every failure at every stage (an error or a panic of a listener, guard,
// wrapper, body, projector, approver or finalizer) becomes a normalized failure result
// {content [Error: <msg>], error{message, info?{name, code}}}. The listeners live on the
// generated *dsh.Registry given to [New], where native plugins and hook bridges register
// them; listeners registered ForAgent see only that agent's calls.
//
//  0. Rewrite (docs/design/REWRITE-COMPACTION.md#1-the-toolsrewrite-input-phase). When tools/rewrite-input listeners are
//     registered, they fold over the parsed arguments in registration order (no next;
//     each sees the previous output and the model's untouched input) and may keep,
//     replace or merge-patch them. The result is validated against the tool's input
//     schema; a rewrite that is not lossless JSON or fails the schema (REWRITE_INVALID),
//     conflicts under ConflictFail (REWRITE_CONFLICT), or a listener that fails, panics
//     or overruns its deadline (REWRITE_FAILED) fails the call closed: the failure is
//     final (step 5) with the model's arguments, and no pre-execute or dispatch runs.
//     Otherwise the effective arguments are what every later phase, the approval seam
//     (bound to their ArgsDigest: a stale allowed-once is a denial, APPROVAL_STALE), the
//     body and the classifier (Call.Mode) see; ToolExecution.ModelArguments keeps the
//     model's. Call.Rewritten is the record the agent loop writes to tool/call and
//     tool/result.
//  1. Creation. The input is read once, a fresh dsh.Token is minted, the definition
//     visible to the call is resolved and its FinalizeContent captured. The (effective)
//     arguments are snapshotted (invalid JSON is the final failure "tool execution arguments must be
//     losslessly JSON-serializable") and then validated against the input schema: a
//     violation is the final failure "invalid arguments: ..." {ToolArgsError,
//     INVALID_ARGS}. Both happen before any policy, so policy listeners and guards only
//     ever see valid arguments; both win over a cancelled context, and a final failure
//     goes straight to step 5 (no pre-execute, no post-execute).
//  2. Pre-dispatch. A call whose context is already cancelled ends
//     ABORTED_BEFORE_DISPATCH (step 5). Otherwise the tools/pre-execute waterfall decides
//     (default allow): deny and halt deny the call with their reason (halt also ends the
//     turn, see [Halt]); ask goes to the approval seam (runtime/approval), where only
//     allowed-once proceeds; an allow then runs the guards, which can only deny. A denial
//     still reaches post-execute. A listener, approver or guard failure is final.
//  3. Dispatch. The tools/execute wrappers run around core dispatch, which resolves the
//     tool again (UNKNOWN_TOOL if it is gone) and runs the body under a context cancelled
//     by either the caller's context or the one the innermost wrapper passed to next. The
//     body's failure arrives at the wrappers as a failure result, never as a panic. What
//     the wrappers return is normalized: core dispatch's own result passes, another
//     success is re-validated and re-rendered through the output declaration, a failure
//     is kept. A wrapper failure is final; the body's deferred contexts survive it.
//  4. Post-execute. The tools/post-execute waterfall sees every outcome (default accept):
//     accept may replace the content or the value (not both), block turns the result
//     into a failure with the feedback as content (and replaces every context), halt
//     keeps the result and ends the turn. A success whose caller was cancelled becomes
//     ABORTED (body invoked) or ABORTED_BEFORE_DISPATCH.
//  5. Finalization. The captured FinalizeContent runs exactly once, whatever the outcome
//     (it may replace only the content; its failure replaces the result), and the
//     tools/result observers see the final result; their failures are logged and change
//     nothing.
//
// Execute runs a call in one go. A scheduler that must keep pre-dispatch and finishing in
// model order while bodies overlap (the agent loop, docs/design/SEMANTICS.md#54-tool-batch-scheduling-and-ordering) drives a [Call]
// instead: [Runtime.Start], then PreDispatch, Dispatch and Finish.
//
// Every payload a phase gets holds its own copy of the arguments, the agent id and the
// result, and the body gets its own copy of the arguments, so nobody can change what the
// pipeline, the caller or another phase sees through them; listeners of one phase share
// that phase's payload and should treat it as read-only. Whatever a listener hands back
// (a decision's content or contexts, a wrapper's result) is snapshotted when the pipeline
// takes it. Lossless JSON means text too: a value, content, context or supplied failure
// holding a string that is not valid UTF-8 (which JSON would carry only with U+FFFD in
// its place) gets the not-lossless failure of its point, while failure messages and halt
// reasons made from errors, panics and reasons are made valid (U+FFFD for invalid bytes),
// so that every result is JSON-safe. Contexts are ordered body-deferred, wrapper-added, post-execute-added; the
// body-deferred ones are kept on every failure path unless a post-execute block replaces
// them.
//
// Composite tools run nested calls with RunContext.Execute (the nested call's Parent is
// the composite's token; it computes no meta; calls nest at most [MaxNesting] deep) and
// pass a nested result's contexts and conclusion on with RunContext.Forward.
package tools
