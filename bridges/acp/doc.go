// Package acp runs dsh sessions as an ACP (Agent Client Protocol) v1 agent, so that an
// editor such as Zed drives them: the editor is the client, [Server.Serve] speaks
// JSON-RPC 2.0 on the agent's stdio, one compact frame a line, and writes nothing else to
// its output. `dsh acp` (package cli, built as cmd/dsh) is the command; the design notes' docs/design/ACP.md is the research
// it follows.
//
// # Methods
//
//   - initialize: protocol 1 (whatever the client asks), loadSession, embedded-context
//     prompts, MCP over stdio, HTTP and SSE, one agent-type auth method (dsh needs no
//     login: the model comes from the command line) and agentInfo.
//   - session/new {cwd, mcpServers}: cwd must pass [CheckCWD] (an absolute path to a
//     directory the user can list, neither / nor in a system tree such as /etc or /proc,
//     symbolic links resolved), else -32602 names it; the session's log
//     is SessionsDir/<sessionId>.jsonl, or the session sessionId of Config.Logs (dsh acp
//     --sessions postgres://... keeps them in PostgreSQL); Config.Setup builds its registries and model (dsh
//     acp shares dsh run's setup: built-in tools in cwd, hooks, native plugins); the
//     configured and the session's MCP servers start (bridges/mcp) and their tools are
//     registered. available_commands_update (one command, /compact) follows the response.
//   - session/load {sessionId, cwd, mcpServers}: the log is replayed as session/update
//     (user_message_chunk, agent_message_chunk, agent_thought_chunk, tool_call,
//     tool_call_update), the agent is resumed from it (loop.Resume), and the response ({})
//     follows the replay. A log that is damaged (anywhere but a torn last line), not a
//     session log, or a symbolic link is refused with an error (-32603) naming the file
//     and the line, and left as it is (session.OpenFile). An id with no log is -32002
//     Resource not found, whichever the store.
//   - A Write's tool_call shows a diff whose old text is read, before any permission is
//     asked, only as the Write tool itself could read it (Env.FileText,
//     builtin.CurrentText): confined to the session's cwd through os.Root, regular files
//     only, never /proc or /sys, under Read's byte cap. Anything else shows no diff.
//   - session/prompt: the prompt (text; resource links and embedded text resources as text
//     references; images and audio are refused with -32602) is one follow-up message;
//     agent/inbox/claimed names its turn; the prompt settles when the agent is idle and
//     every update is written. Stop reasons: completed, blocked and aborts not caused by
//     the client → end_turn; max-tokens → max_tokens; session/cancel (and the end of the
//     connection) → cancelled; an error turn → -32603 "turn failed: ...".
//   - session/cancel (notification, or request): cancels the turn (agent.Cancel with the
//     cause user, the inbox discarded); the approval seam resolves a pending permission as
//     cancelled; in-flight tools drain; the prompt then answers cancelled.
//   - Subagents (Env.SetChildRuntime, Env.ObserveChildren): a child's calls run on the
//     session's tool runtime, so the permission policy asks the editor for them as for the
//     agent's own; they show as tool_call and tool_call_update of the prompt that runs
//     the child, with the id "<agentId>/<callId>" and _meta.dsh {agentId, agentType,
//     parentToolCallId}. The child's text is not shown (its answer is the result of the
//     call that started it). session/load shows a child's calls again as they were shown
//     live, from the child's log (Env.ChildEvents).
//
// A second prompt while one runs is refused with -32602; a prompt that follows a
// session/cancel waits for the cancelled one to settle and then runs (editors let the user
// type right after Stop). Unparseable frames get -32700 (id null) and the connection goes
// on; batches -32600; unknown methods -32601; requests before initialize -32600; unknown
// sessions -32002. When the input ends every session is cancelled, every prompt answered,
// and the agents, MCP servers and logs are closed.
//
// # Backpressure and idle sessions
//
// At most Config.MaxInFlight requests (default 64) are handled at once; one past that is
// answered at once with -32000 "Server busy" by the goroutine that reads the input, so a
// client that stops reading the agent's output stops being read from once the pipe is
// full: memory stays flat however many requests it sends. Responses to the agent's own
// requests (session/request_permission), notifications and session/cancel never wait for
// a slot. At most
// Config.MaxOpenSessions sessions (default 16) stay open: past that, the least recently
// used idle ones (no prompt in flight) are closed, releasing their agent, hooks, MCP
// servers and log file; a prompt naming such a session reopens it from its log (as
// session/load does, resuming the agent, but without replaying the log to the client),
// and session/load reopens it too.
//
// # Updates
//
// Updates are translated from the session log, so live streaming and load replay are one
// code path: assistant/chunk text and reasoning deltas → agent_message_chunk and
// agent_thought_chunk; tool/call → tool_call (pending; kind execute for Bash, read for
// Read, edit with diff content for Write and Edit, other otherwise; rawInput; locations);
// dispatch (a tools/execute wrapper) → tool_call_update in_progress; tool/result →
// completed or failed, with the diff again for edits, the output fenced as console text
// for Bash (or, for a client advertising clientCapabilities._meta.terminal_output, Zed's
// terminal card convention: a terminal content block and _meta.terminal_info on the call,
// _meta.terminal_output and terminal_exit on the result), the content otherwise, and the
// text as rawOutput. A permission request or
// in_progress update waits until the call's tool_call is on the wire.
//
// # Permissions
//
// With [PermissionsAsk] (the default) every top-level call except Read and MCP tools
// annotated readOnlyHint by a server the user trusts (Config.MCP.TrustedServers, dsh acp
// --mcp-trust NAME; another server's annotation is a hint, not a permission) asks the
// client, after the session's own listeners (a hook's deny
// wins; a hook's ask asks). The request goes through the approval seam
// (runtime/approval, recorded as approval/asked and approval/decided) to
// session/request_permission with two options, allow-once and reject-once: allow-once
// allows; any other option rejects; cancelled cancels; a failed request (the client gone,
// an error answer) is unavailable, which denies.
package acp
