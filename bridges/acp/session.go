package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/dshkit/dsh/bridges/mcp"
	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/approval"
	"github.com/dshkit/dsh/runtime/loop"
	"github.com/dshkit/dsh/runtime/session"
	"github.com/dshkit/dsh/runtime/tools"
	"github.com/dshkit/dsh/runtime/tools/builtin"
)

// acpSession is one ACP session: a loop agent, its log, its MCP servers, and the prompt in
// flight.
type acpSession struct {
	srv   *Server
	id    string
	cwd   string
	log   *session.Log
	env   *Env
	rt    *tools.Runtime
	mcp   *mcp.Set
	tr    *translator
	agent *loop.Agent
	// children are the translators of the agent's children (subagents) that run, by
	// agent id: their tool calls are shown with ids of their own (childCallID).
	childMu  sync.Mutex
	children map[string]*translator

	closers []func()
	// servers are the session's own MCP servers (mcpServers), kept for reopening it.
	servers []mcp.ServerConfig
	// used and pins are guarded by Server.mu: the session's last use (Server.tick), and
	// the prompts that hold it open.
	used int64
	pins int
	// closed is closed once close has released everything.
	closed chan struct{}

	// admit serializes admitting a prompt (check, then Followup) against cancel, so that
	// a cancel never falls between them.
	admit sync.Mutex
	mu    sync.Mutex
	cur   *promptRun
	gone  bool

	closeOnce sync.Once
}

// promptRun is one session/prompt in flight.
type promptRun struct {
	msgID     string
	turn      int // the turn that claimed the prompt; 0 until then
	cancelled bool
	done      chan struct{}
}

func newSession(srv *Server, id, cwd string, lg *session.Log, env *Env) *acpSession {
	ss := &acpSession{srv: srv, id: id, cwd: cwd, log: lg, env: env, closed: make(chan struct{})}
	ss.tr = newTranslator(cwd, func(u update) { srv.sendUpdate(id, u) })
	ss.tr.fileText = func(filePath string) (string, bool, error) {
		if env.FileText != nil {
			return env.FileText(context.Background(), filePath)
		}
		return builtin.CurrentText(context.Background(), builtin.Options{Workspace: cwd}, filePath)
	}
	srv.mu.Lock()
	ss.tr.terminalMeta = srv.terminalMeta
	srv.mu.Unlock()
	return ss
}

// wire builds the tool runtime with the approval seam and registers the bridge's
// listeners: the permission policy (after the session's hooks, so theirs decide first),
// tool progress, and the prompt's turn correlation.
func (ss *acpSession) wire() {
	svc := approval.NewService(approval.WithRecorder(loop.ApprovalRecorder()), approval.WithLogger(ss.srv.log))
	svc.AddAnswerer(approval.AnswererFunc(ss.answer))
	opts := append([]tools.Option{tools.WithApprover(svc), tools.WithLogger(ss.srv.log)}, ss.env.ToolOptions...)
	ss.rt = tools.New(ss.env.Tools, ss.env.Hooks, opts...)
	// The session's registry is its own: the permission policy and the progress apply to
	// its agent and to the agent's children alike.
	all := ss.env.Hooks.Plugin("acp")
	if ss.srv.cfg.Permissions == PermissionsAsk {
		ss.closers = append(ss.closers, all.OnPreTool(ss.permissionPolicy))
	}
	ss.closers = append(ss.closers,
		all.WrapExecute(ss.progress),
		all.ForAgent(AgentID).OnInboxClaimed(ss.claimed))
	if ss.env.SetChildRuntime != nil {
		ss.env.SetChildRuntime(func() *tools.Runtime { return ss.rt })
	}
	if ss.env.ObserveChildren != nil {
		ss.env.ObserveChildren(ss.observeChild)
	}
}

// observeChild shows the tool calls of a child (a subagent of the session's agent) as tool
// calls of the prompt that runs it: its log's tool/call and tool/result become tool_call
// and tool_call_update, with ids of their own (childCallID) and _meta.dsh naming the
// child, its type and the call that started it. The child's text is not shown: its answer
// reaches the editor as the result of that call.
func (ss *acpSession) observeChild(agentID string, lineage dsh.Lineage, log *session.Log) func() {
	tr := ss.childTranslator(agentID, lineage)
	ss.childMu.Lock()
	if ss.children == nil {
		ss.children = map[string]*translator{}
	}
	ss.children[agentID] = tr
	ss.childMu.Unlock()
	cancel := log.Subscribe(func(e session.Event) { tr.observe(e, false) })
	return func() {
		cancel()
		ss.childMu.Lock()
		delete(ss.children, agentID)
		ss.childMu.Unlock()
	}
}

// childTranslator is the translator of a child's log: its tool_call and tool_call_update
// alone, with ids of their own (childCallID) and _meta.dsh naming the child, its type and
// the call that started it.
func (ss *acpSession) childTranslator(agentID string, lineage dsh.Lineage) *translator {
	meta := map[string]any{"dsh": map[string]any{"agentId": agentID, "agentType": lineage.AgentType,
		"parentToolCallId": lineage.ParentCallID}}
	tr := newTranslator(ss.cwd, func(u update) {
		if u.SessionUpdate != "tool_call" && u.SessionUpdate != "tool_call_update" {
			return
		}
		u.ToolCallID, u.Meta = childCallID(agentID, u.ToolCallID), meta
		ss.srv.sendUpdate(ss.id, u)
	})
	tr.fileText, tr.terminalMeta = ss.tr.fileText, ss.tr.terminalMeta
	return tr
}

// replayChild shows again, on session/load, the tool calls of the child whose start e
// records (a subagent/started event of the session's log), as they were shown live.
func (ss *acpSession) replayChild(e session.Event) {
	if e.Type != dsh.SubagentStartedType || ss.env.ChildEvents == nil {
		return
	}
	var d dsh.SubagentStarted
	if err := json.Unmarshal(e.Data, &d); err != nil || d.SessionID == "" {
		return
	}
	tr := ss.childTranslator(d.AgentID, dsh.Lineage{AgentType: d.AgentType, ParentCallID: d.CallID})
	for ce, err := range ss.env.ChildEvents(d.SessionID) {
		if err != nil {
			ss.srv.log.Warn("acp: a subagent's log not replayed", "session", ss.id, "agent", d.AgentID, "error", err)
			return
		}
		tr.observe(ce, true)
	}
}

// childCallID is the id the editor knows a child's call by: the child's id and the call's.
func childCallID(agentID, callID string) string { return agentID + "/" + callID }

// translatorOf is the translator of agent agentID's calls and the id the editor knows
// its call callID by: the session's own, or a child's.
func (ss *acpSession) translatorOf(agentID, callID string) (*translator, string) {
	if agentID == "" || agentID == AgentID {
		return ss.tr, callID
	}
	ss.childMu.Lock()
	defer ss.childMu.Unlock()
	if tr := ss.children[agentID]; tr != nil {
		return tr, childCallID(agentID, callID)
	}
	return ss.tr, callID
}

// subscribe streams every new log event to the client.
func (ss *acpSession) subscribe() {
	ss.closers = append(ss.closers, ss.log.Subscribe(func(e session.Event) { ss.tr.observe(e, false) }))
}

// needsPermission is the default policy: everything but Read and the MCP tools annotated
// read-only by a server the user trusts (mcp.Options.TrustedServers): an untrusted
// server's readOnlyHint is a hint, not a permission.
func (ss *acpSession) needsPermission(name string) bool {
	if name == "Read" {
		return false
	}
	if strings.HasPrefix(name, "mcp__") && ss.mcp != nil && ss.mcp.ReadOnly(name) {
		return false
	}
	return true
}

func (ss *acpSession) permissionPolicy(ctx context.Context, p *dsh.PreToolPayload, next dsh.PreToolNext) (dsh.PreToolDecision, error) {
	d, err := next.Call(ctx)
	if err != nil {
		return d, err
	}
	if _, allow := d.(dsh.PreToolAllow); allow && p.Exec.Parent.IsZero() && ss.needsPermission(p.Exec.Name) {
		return dsh.PreToolAsk{}, nil
	}
	return d, nil
}

// progress marks a call in_progress when its dispatch starts.
func (ss *acpSession) progress(ctx context.Context, p *dsh.ExecutePayload, next dsh.ExecuteNext) dsh.ToolExecutionResult {
	agentID := ""
	if p.Exec.AgentID != nil {
		agentID = *p.Exec.AgentID
	}
	tr, editorID := ss.translatorOf(agentID, p.Exec.CallID)
	if p.Exec.Parent.IsZero() && tr.waitAnnounced(ctx, p.Exec.CallID) {
		u := update{SessionUpdate: "tool_call_update", ToolCallID: editorID, Status: "in_progress"}
		if tr != ss.tr {
			u.Meta = map[string]any{"dsh": map[string]any{"agentId": agentID}}
		}
		ss.srv.sendUpdate(ss.id, u)
	}
	return next.Call(ctx)
}

func (ss *acpSession) claimed(_ context.Context, p *dsh.InboxClaimedPayload) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.cur != nil && ss.cur.turn == 0 && p.Message.ID == ss.cur.msgID {
		ss.cur.turn = p.Turn
	}
}

// answer asks the client through session/request_permission: allow-once allows, any
// other selected option rejects, cancelled cancels; a failed request is unavailable.
func (ss *acpSession) answer(ctx context.Context, req approval.Request) (dsh.ApprovalOutcome, error) {
	if req.CallID == "" {
		return approval.Pass, nil
	}
	tr, editorID := ss.translatorOf(req.AgentID, req.CallID)
	if !tr.waitAnnounced(ctx, req.CallID) {
		return dsh.ApprovalOutcomeCancelled, nil
	}
	title := tr.title(req.CallID)
	if title == "" {
		title = req.ToolName
	}
	if req.Reason != "" {
		title += ": " + req.Reason
	}
	var res requestPermissionResult
	err := ss.srv.c.call(ctx, "session/request_permission", requestPermissionParams{
		SessionID: ss.id,
		ToolCall:  permissionToolCall{ToolCallID: editorID, Title: title},
		Options: []permissionOption{
			{OptionID: optionAllowOnce, Name: "Allow", Kind: "allow_once"},
			{OptionID: optionRejectOnce, Name: "Reject", Kind: "reject_once"},
		},
	}, &res)
	switch {
	case ctx.Err() != nil:
		return dsh.ApprovalOutcomeCancelled, nil
	case err != nil:
		ss.srv.log.Warn("acp: permission request failed", "session", ss.id, "call", req.CallID, "error", err)
		return dsh.ApprovalOutcomeUnavailable, nil
	case res.Outcome.Outcome == "cancelled":
		return dsh.ApprovalOutcomeCancelled, nil
	case res.Outcome.Outcome == "selected" && res.Outcome.OptionID == optionAllowOnce:
		return dsh.ApprovalOutcomeAllowedOnce, nil
	}
	return dsh.ApprovalOutcomeRejected, nil
}

// Overlapping prompts (dsh decision): a prompt for a session whose previous prompt was
// cancelled waits for that one to settle and then runs (editors let the user type right
// after Stop); a prompt while another one runs uncancelled is refused with -32602.

// prompt runs one session/prompt to its stop reason.
func (ss *acpSession) prompt(blocks []json.RawMessage) (any, *RPCError) {
	msg, e := userMessage(blocks)
	if e != nil {
		return nil, e
	}
	p := &promptRun{msgID: msg.ID, done: make(chan struct{})}
	for {
		ss.mu.Lock()
		cur := ss.cur
		switch {
		case ss.gone:
			ss.mu.Unlock()
			return nil, rpcErr(CodeInvalidRequest, "session %q is closing", ss.id)
		case cur == nil:
			ss.cur = p
		case !cur.cancelled:
			ss.mu.Unlock()
			return nil, rpcErr(CodeInvalidParams, "Invalid params: session %q already has a prompt in flight; send session/cancel first", ss.id)
		}
		ss.mu.Unlock()
		if cur == nil {
			break
		}
		<-cur.done
	}
	finish := func() {
		ss.mu.Lock()
		ss.cur = nil
		ss.mu.Unlock()
		close(p.done)
	}
	ctx := context.Background()
	ss.admit.Lock()
	ss.mu.Lock()
	cancelled := p.cancelled
	ss.mu.Unlock()
	if cancelled {
		ss.admit.Unlock()
		finish()
		return promptResult{StopReason: "cancelled"}, nil
	}
	if instructions, ok := compactCommand(msg); ok {
		ss.admit.Unlock()
		defer finish()
		return ss.compact(ctx, instructions)
	}
	err := ss.agent.Followup(ctx, msg)
	ss.admit.Unlock()
	if err != nil {
		finish()
		return nil, rpcErr(CodeInternalError, "Internal error: %v", err)
	}
	_ = ss.agent.Wait(ctx)
	ss.tr.waitSeen(ss.log.Len() - 1)
	ss.mu.Lock()
	cancelled, turn := p.cancelled, p.turn
	ss.mu.Unlock()
	defer finish()
	if cancelled {
		return promptResult{StopReason: "cancelled"}, nil
	}
	if turn == 0 {
		return promptResult{StopReason: "cancelled"}, nil // no turn claimed the prompt
	}
	reason, ok := ss.tr.turnEnd(turn)
	if !ok {
		return nil, rpcErr(CodeInternalError, "Internal error: turn %d of the prompt did not end", turn)
	}
	return stopReason(reason)
}

// compactCommandJSON is the /compact entry of available_commands_update.
const compactCommandJSON = `{"name":"compact","description":"Compact the conversation: summarize it to free the context window","input":{"hint":"optional instructions for the summary"}}`

// compactCommand reports whether msg is the command "/compact [instructions]": one text
// block whose first word is /compact.
func compactCommand(msg dsh.UserMessage) (instructions string, ok bool) {
	if len(msg.Content) != 1 {
		return "", false
	}
	tb, isText := msg.Content[0].(dsh.TextBlock)
	if !isText {
		return "", false
	}
	text := strings.TrimSpace(tb.Text)
	rest, found := strings.CutPrefix(text, "/compact")
	if !found || (rest != "" && rest[0] != ' ' && rest[0] != '\n' && rest[0] != '\t') {
		return "", false
	}
	return strings.TrimSpace(rest), true
}

// compact runs /compact: the session's agent compacts while idle. The outcome is told as
// an agent message; a compaction a plugin deferred, or that failed, answers an error
// naming why.
func (ss *acpSession) compact(ctx context.Context, instructions string) (any, *RPCError) {
	res, err := ss.agent.Compact(ctx, instructions)
	say := func(text string) {
		ss.srv.sendUpdate(ss.id, update{SessionUpdate: "agent_message_chunk", Content: contentBlock{Type: "text", Text: text}})
	}
	switch {
	case errors.Is(err, loop.ErrNothingToCompact):
		say("Nothing to compact yet.")
	case err != nil:
		return nil, rpcErr(CodeInternalError, "Internal error: /compact: %v", err)
	default:
		say(fmt.Sprintf("Compacted the conversation: about %d tokens before, %d after.", res.TokensBefore, res.TokensAfter))
	}
	_ = ss.agent.Wait(ctx) // a prompt queued meanwhile
	ss.tr.waitSeen(ss.log.Len() - 1)
	return promptResult{StopReason: "end_turn"}, nil
}

// stopReason maps how the prompt's turn ended.
func stopReason(r dsh.TurnEndReason) (any, *RPCError) {
	//dshvet:partial completed and blocked end the turn as end_turn, after the switch
	switch v := r.(type) {
	case dsh.TurnEndMaxTokens:
		return promptResult{StopReason: "max_tokens"}, nil
	case dsh.TurnEndError:
		return nil, rpcErr(CodeInternalError, "turn failed: %s", v.Error.Message)
	case dsh.TurnEndInterrupted:
		return promptResult{StopReason: "cancelled"}, nil
	case dsh.TurnEndAborted:
		//dshvet:partial an abort by a hook or a parent is end_turn, after the switch
		switch v.Reason.(type) {
		case dsh.CancelUser, dsh.CancelDisposed:
			return promptResult{StopReason: "cancelled"}, nil
		}
	}
	return promptResult{StopReason: "end_turn"}, nil // completed, blocked, other aborts
}

// userMessage builds the prompt's message: text as text, links and embedded text
// resources as text references; images and audio are refused (not advertised).
func userMessage(blocks []json.RawMessage) (dsh.UserMessage, *RPCError) {
	var content []dsh.ContentBlock
	for i, raw := range blocks {
		var b contentBlock
		if err := json.Unmarshal(raw, &b); err != nil {
			return dsh.UserMessage{}, rpcErr(CodeInvalidParams, "Invalid params: prompt[%d]: %v", i, err)
		}
		switch b.Type {
		case "text":
			content = append(content, dsh.TextBlock{Text: b.Text})
		case "resource_link":
			content = append(content, dsh.TextBlock{Text: fmt.Sprintf("[resource_link name=%s uri=%s]", b.Name, b.URI)})
		case "resource":
			switch {
			case b.Resource == nil:
				return dsh.UserMessage{}, rpcErr(CodeInvalidParams, "Invalid params: prompt[%d].resource is required", i)
			case b.Resource.Blob != "":
				content = append(content, dsh.TextBlock{Text: fmt.Sprintf("[resource uri=%s (binary, not included)]", b.Resource.URI)})
			default:
				content = append(content, dsh.TextBlock{Text: fmt.Sprintf("[resource uri=%s]\n%s", b.Resource.URI, b.Resource.Text)})
			}
		default:
			return dsh.UserMessage{}, rpcErr(CodeInvalidParams, "Invalid params: prompt[%d]: %q content is not supported (see promptCapabilities)", i, b.Type)
		}
	}
	if len(content) == 0 {
		return dsh.UserMessage{}, rpcErr(CodeInvalidParams, "Invalid params: the prompt is empty")
	}
	return dsh.UserMessage{ID: fmt.Sprintf("prompt_%d", time.Now().UnixNano()), Role: dsh.UserMessageRoleUser,
		Content: content, Source: dsh.SourceUser{}}, nil
}

// cancel aborts the session's turn; a prompt in flight answers cancelled once the agent
// is idle and every update is written.
func (ss *acpSession) cancel(cause dsh.AgentCancelCause) {
	ss.admit.Lock()
	defer ss.admit.Unlock()
	ss.mu.Lock()
	if ss.cur != nil {
		ss.cur.cancelled = true
	}
	if _, disposed := cause.(dsh.CancelDisposed); disposed {
		ss.gone = true
	}
	agent := ss.agent
	ss.mu.Unlock()
	if agent != nil {
		agent.Cancel(cause, false)
	}
}

// close stops the agent, the MCP servers and the hooks, and closes the log.
func (ss *acpSession) close() {
	ss.closeOnce.Do(func() {
		if ss.agent != nil {
			_ = ss.agent.Close() // cancels (disposed) and waits until idle
		}
		for i := len(ss.closers) - 1; i >= 0; i-- {
			ss.closers[i]()
		}
		if ss.env.Close != nil {
			ss.env.Close()
		}
		ss.mcp.Close()
		if err := ss.log.Close(); err != nil {
			ss.srv.log.Warn("acp: closing the log", "session", ss.id, "error", err)
		}
		close(ss.closed)
	})
}

// idle reports that no prompt is in flight and the agent runs no turn (one an async
// hook started, say).
func (ss *acpSession) idle() bool {
	ss.mu.Lock()
	idle, agent := ss.cur == nil && !ss.gone, ss.agent
	ss.mu.Unlock()
	return idle && (agent == nil || agent.Status() == dsh.AgentStatusIdle)
}
