// Package loop is the dsh agent: a durable inbox, a driver that runs turns of steps over
// a model (runtime/llm) and a tool runtime (runtime/tools), and the dispatch of every
// agent/* event to the listeners of a generated registry (generated/dsh). It follows
// docs/design/SEMANTICS.md#5-the-agent-loop with dsh's Part A decisions; every event it records goes to the
// agent's session log (runtime/session), from which a resumed agent rebuilds its state
// and the history it sends.
//
// # Creating an agent
//
//	reg := dsh.NewRegistry(loop.DecisionAudit()) // the option only matters with Config.Audit
//	a, err := loop.New(ctx, loop.Config{ID: "agent-1", Registry: reg, Tools: rt, Model: model,
//		Log: log, System: "You are terse.", LLM: dsh.LLMCallConfig{Provider: "openai", Model: "gpt-x"}})
//	err = a.Followup(ctx, dsh.UserMessage{Content: []dsh.ContentBlock{dsh.TextBlock{Text: "hello"}}})
//	err = a.Wait(ctx) // until idle
//
// New appends session/created and runs agent/session-start (source startup); Resume
// replays an existing log, closes a turn a crash left open as turn/end{interrupted} and
// runs agent/session-start (source resume). Session-start listeners are awaited, all
// together bounded by Config.SessionStartTimeout (5 s): what they Inject reaches the first
// request. They cannot veto startup; an overrunning listener gets its context cancelled
// and is recorded as session/start-listener-overrun.
//
// # The inbox
//
// An agent has two durable FIFO lists. Every change is first appended to the log as
// agent/inbox/spliced and then applied, so Replay rebuilds the same lists.
//
//	send       list        wakes   typical sender
//	Followup   next-turn   yes     the user: one prompt per turn, never batched
//	Steer      next-step   yes     a plugin continuing the turn (e.g. at turn-stopping)
//	Inject     next-step   no      context for the next step, whenever it happens
//
// A waking send on an idle agent starts a turn before it returns: agent/status running,
// turn/start and the claim happen on the caller's goroutine. On a running agent a send
// only inserts; the driver reads the inbox at its boundaries. While the turn is being
// cancelled, a waking send goes to next-turn and a wake is replayed once the agent is
// idle. Messages are copied when sent: changing yours afterwards changes nothing. Steer
// and Inject need a Source (plugins must say who wrote the text); Followup defaults to
// the user source; an empty ID is minted.
//
// # A turn
//
//  1. turn/start, then the claim: every next-step message, then (at a turn's first step)
//     the first next-turn message; agent/inbox/claimed per message. Claimed messages
//     belong to the step and are never requeued.
//  2. agent/pre-step (waterfall), before every proposed step, tool continuations
//     included, with the claimed batch (possibly empty). enter{messages} is the complete
//     batch (rewrite in place, drop, add); reject{reason?} ends the turn
//     blocked{reason, droppedMessageIds}; halt{reason} ends it aborted{hook{reason}}. An
//     empty batch on the first step ends the turn completed without a model call.
//  3. step/start, one user/message per entered message, then the step: the request is
//     derived from the agent's config and the log (user/message, assistant/message,
//     tool/result, in order) and agent/request (a fold) may change its config, rewrite or
//     restrict it for this request (request/rewritten), answer it (the provider is not
//     called) or deny it (turn/end blocked); request/header is logged on this instance's
//     first request and whenever it changes, request/context when the provider or model
//     changes; every chunk is logged as assistant/chunk, the response as
//     assistant/message, after agent/response (a fold: accept, replace its text, block
//     it; while one listens, the chunks are held until it decided). A failed request
//     runs agent/request-error (retry within the step, or none: the turn ends error). A
//     max-tokens finish drops its tool calls.
//  4. The tool batch, in model order: tool/call, then the tools pipeline; exclusive calls
//     alone, parallel ones (tools.Runtime.ExecutionMode) in a pool of at most
//     Config.MaxParallelToolCalls; tool/result in model order, each citing its
//     tool/call; the results' additionalContexts go to the end of next-step after the
//     last tool/result and become user/message at the next step. A success that called
//     ConcludeTurn ends the turn at this step unless next-step holds something.
//  5. step/end. When the step ended naturally (text only, max-tokens, concluded) and
//     next-step is empty, agent/turn-stopping (awaited; every listener runs) may Steer or
//     Inject to continue the same turn, or Halt it. Its payload counts the continuations
//     of the turn; past Config.ContinuationCap (8) the steered input is discarded,
//     turn/continuation-capped is recorded and the turn ends.
//  6. turn/end{completed | max-tokens | blocked | aborted{cause} | error{failure}}. After
//     completed or max-tokens the driver goes on while the inbox holds messages, after
//     blocked while a follow-up is pending; after error or aborted it stops and keeps the
//     queue for the next waking send. agent/status idle when the driver exits.
//
// A text turn logs: spliced (the prompt), turn/start, spliced (the claim), step/start,
// user/message, request/header, request/context, assistant/chunk..., assistant/message,
// step/end, turn/end.
//
// # What listeners see
//
// Every payload carries the agent's handle (Agent: ID, Inject, Steer, Halt; assert
// *loop.Agent for Followup and Cancel) and AgentID; listeners registered with
// Registrar.ForAgent(id) see only that agent's events. The context a listener, tool body
// or approver gets is cancelled when the turn is, and AgentFromContext recovers the
// agent from it.
//
//   - agent/session-start: once per New or Resume, before the first claim.
//   - agent/status: running (in the waking send) and idle (when the driver exits).
//   - agent/inbox/inserted, discarded, claimed: each message, after its splice.
//   - agent/pre-step: the turn, the proposed step and a private copy of the claimed batch;
//     sends during the waterfall land in the inbox for a later boundary.
//   - agent/request: turn, step, attempt, the request (config, messages, tools) as the
//     listeners before left it and the one derived from the log; the seed config is the
//     agent options, then the logged header on resume. agent/response: the complete
//     response and its source. agent/request-error: the failure and the attempt.
//   - agent/turn-stopping: turn, Continuations, StopHookActive.
//   - agent/error: every turn failure that is not a cancellation, before turn/end.
//
// A failing (or panicking) pre-step, request-error or turn-stopping listener ends the turn
// error{message, "UNKNOWN"} (the failure's own text; an llm.FailureError keeps its facts)
// and emits agent/error; the pending inbox is kept. A failing, panicking or overrunning
// agent/request or agent/response listener, or an invalid rewrite or answer, ends it
// error{CodeModelListenerFailed or CodeModelRewriteInvalid} with a message naming the
// listener, and nothing is sent. Observer and
// session-start failures are logged and change nothing.
//
// # Stopping a turn
//
// Cancel(cause, keepInbox) aborts the turn's context: the stream stops (its visible
// prefix is logged as an interrupted assistant message), no further tool call starts,
// in-flight calls drain and are committed, unstarted ones get tool/call and an
// ABORTED_BEFORE_DISPATCH tool/result, and the turn ends aborted{cause}; the first cause
// wins. Without keepInbox both lists are discarded and so is every context of the current
// batch, accepted before or after the cancel. Halt(reason) (and a halt decision at
// pre-step, pre-execute or post-execute) stops the turn at the next boundary without
// cancelling what runs, and keeps the inbox. Close cancels with the cause disposed,
// keeping the inbox in the log for a later Resume.
//
// # Auditing and approval
//
// With Config.Audit and a registry created with DecisionAudit, every decision a listener
// resolves at a policy point is appended as decision/recorded. ApprovalRecorder wires an
// approval.Service to the log of the agent whose tool call asks.
//
// # Concurrency
//
// An Agent is safe for concurrent use. Session-log observers (session.Log.Subscribe) run on
// the appending goroutine: they may call Cancel and Halt, but must not send (Followup,
// Steer, Inject) to the same agent synchronously.
package loop
