package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/internal/blocktext"
	"github.com/dshkit/dsh/runtime/tools"
)

// points are the extension points dsh hooks run fires an event at, each a row: the
// generic path of its domain with the point's payload builder and decision describer.
// Adding a point that an event of a dialect's table fires at is adding its row.
var points = map[string]pointRow{
	dsh.SessionStartEventName:       notification(sessionStartPayload, (*dsh.Registry).NotifySessionStart, nil),
	dsh.ApprovalPromptEventName:     notification(approvalPromptPayload, (*dsh.Registry).EmitApprovalPrompt, nil),
	dsh.StatusEventName:             notification(statusPayload, (*dsh.Registry).EmitStatus, nil),
	dsh.SessionEndEventName:         notification(sessionEndPayload, (*dsh.Registry).NotifySessionEnd, nil),
	dsh.AgentErrorEventName:         notification(agentErrorPayload, (*dsh.Registry).EmitAgentError, nil),
	dsh.SetupEventName:              notification(setupPayload, (*dsh.Registry).NotifySetup, nil),
	dsh.InstructionsLoadedEventName: notification(instructionsLoadedPayload, (*dsh.Registry).NotifyInstructionsLoaded, nil),
	dsh.PostBatchEventName:          notification(postBatchPayload, (*dsh.Registry).NotifyPostBatch, describePostBatch),
	dsh.TurnInterruptedEventName:    notification(turnInterruptedPayload, (*dsh.Registry).NotifyTurnInterrupted, nil),
	dsh.TurnStoppingEventName:       notification(turnStoppingPayload, (*dsh.Registry).NotifyTurnStopping, describeStop),
	dsh.SubagentStartEventName:      notification(subagentStartPayload, (*dsh.Registry).NotifySubagentStart, nil),
	dsh.SubagentStopEventName:       notification(subagentStopPayload, (*dsh.Registry).NotifySubagentStop, describeStop),
	dsh.PreStepEventName:            waterfall(preStepPayload, (*dsh.Registry).RunPreStep, enterAll, describePreStep),
	dsh.ApprovalAnswerEventName:     waterfall(approvalAnswerPayload, (*dsh.Registry).RunApprovalAnswer, nil, describeApprovalAnswer),
	dsh.PreToolEventName:            waterfall(preToolPayload, (*dsh.Registry).RunPreTool, nil, describePreTool),
	dsh.PostToolEventName:           waterfall(postToolPayload, (*dsh.Registry).RunPostTool, nil, describePostTool),
	dsh.RequestEventName:            fold(requestPayload, (*dsh.Registry).RunRequest, decisionJSON{Kind: "pass"}, applyRequest, sentRequest),
	dsh.ResponseEventName:           fold(responsePayload, (*dsh.Registry).RunResponse, decisionJSON{Kind: "accept"}, applyResponse, nil),
	dsh.PreCompactEventName:         vote(preCompactPayload, (*dsh.Registry).RunPreCompact, decisionJSON{Kind: "proceed"}, tallyPreCompact),
	dsh.PostCompactEventName:        vote(postCompactPayload, (*dsh.Registry).RunPostCompact, decisionJSON{Kind: "accept"}, tallyPostCompact),
}

// session/start

func sessionStartPayload(_ context.Context, _ *dsh.Registry, f *fireIn) (*dsh.SessionStartPayload, error) {
	src := dsh.SessionStartSource(f.in.Source)
	if f.in.Source == "" {
		src = dsh.SessionStartSourceStartup
	}
	if !src.Valid() {
		return nil, fmt.Errorf("invalid %s source %q", f.ev.Name, f.in.Source)
	}
	return &dsh.SessionStartPayload{Agent: f.agent, AgentID: hooksAgentID, Source: src}, nil
}

// approval/prompt

func approvalPromptPayload(_ context.Context, _ *dsh.Registry, f *fireIn) (*dsh.ApprovalPromptPayload, error) {
	aid := hooksAgentID
	ex := dsh.ToolExecution{CallID: "dsh-hooks-call", Name: f.in.ToolName, Arguments: json.RawMessage("{}"), AgentID: &aid,
		RootCallID: "dsh-hooks-call", Token: dsh.NewToken()}
	return &dsh.ApprovalPromptPayload{Exec: ex}, nil
}

// agent/status: the status of the table's also entry the input fired at, else idle.

func statusPayload(_ context.Context, _ *dsh.Registry, f *fireIn) (*dsh.StatusPayload, error) {
	status := dsh.AgentStatusIdle
	if f.at.also != nil && f.at.also.Status != "" {
		status = dsh.AgentStatus(f.at.also.Status)
	}
	return &dsh.StatusPayload{Agent: f.agent, AgentID: hooksAgentID, Status: status}, nil
}

// session/end: dsh ends a session with one of two reasons: clear (the same word in every
// dialect), or close, which the hooks see in the dialect's words ("other", "exit").

func sessionEndPayload(_ context.Context, _ *dsh.Registry, f *fireIn) (*dsh.SessionEndPayload, error) {
	reason := dsh.SessionEndReasonClose
	if f.in.Reason == string(dsh.SessionEndReasonClear) {
		reason = dsh.SessionEndReasonClear
	}
	return &dsh.SessionEndPayload{Agent: f.agent, AgentID: hooksAgentID, Reason: reason}, nil
}

// agent/setup: the input's trigger ("init" when it names none).

func setupPayload(_ context.Context, _ *dsh.Registry, f *fireIn) (*dsh.SetupPayload, error) {
	trigger := dsh.SetupTriggerInit
	if f.in.Trigger == string(dsh.SetupTriggerMaintenance) {
		trigger = dsh.SetupTriggerMaintenance
	}
	return &dsh.SetupPayload{Agent: f.agent, AgentID: hooksAgentID, Trigger: trigger}, nil
}

// agent/instructions-loaded: the input's file (a project file read at session start when
// it names no scope or reason).

func instructionsLoadedPayload(_ context.Context, _ *dsh.Registry, f *fireIn) (*dsh.InstructionsLoadedPayload, error) {
	if f.in.FilePath == "" {
		return nil, fmt.Errorf("%s input needs a file_path", f.ev.Name)
	}
	file := dsh.InstructionFile{Path: f.in.FilePath, Scope: dsh.InstructionScope(strings.ToLower(f.in.MemoryType)),
		Reason: dsh.InstructionReason(f.in.LoadReason), Parent: f.in.ParentFilePath}
	if file.Scope == "" {
		file.Scope = dsh.InstructionScopeProject
	}
	if file.Reason == "" {
		file.Reason = dsh.InstructionReasonSessionStart
	}
	if !slices.Contains(dsh.InstructionScopeValues, file.Scope) || !slices.Contains(dsh.InstructionReasonValues, file.Reason) {
		return nil, fmt.Errorf("%s input: memory_type %q or load_reason %q is not one dsh fires", f.ev.Name, f.in.MemoryType, f.in.LoadReason)
	}
	return &dsh.InstructionsLoadedPayload{Agent: f.agent, AgentID: hooksAgentID, File: file}, nil
}

// agent/post-batch: the input's settled calls; the listeners halt the turn before the
// next request, or add what the model reads with the results.

func postBatchPayload(_ context.Context, _ *dsh.Registry, f *fireIn) (*dsh.PostBatchPayload, error) {
	calls := make([]dsh.BatchCall, len(f.in.ToolCalls))
	for i, c := range f.in.ToolCalls {
		text := string(c.ToolResponse)
		var s string
		if json.Unmarshal(c.ToolResponse, &s) == nil {
			text = s
		}
		args := c.ToolInput
		if len(args) == 0 {
			args = json.RawMessage("{}")
		}
		calls[i] = dsh.BatchCall{CallID: c.ToolUseID, Name: c.ToolName, Arguments: args,
			Content: []dsh.ContentBlock{dsh.TextBlock{Text: text}}}
	}
	return &dsh.PostBatchPayload{Agent: f.agent, AgentID: hooksAgentID, Turn: f.turn, Step: 1, Calls: calls}, nil
}

func describePostBatch(f *fireIn) decisionJSON {
	if halted := f.agent.Halted(); len(halted) > 0 {
		return decisionJSON{Kind: "halt", Reason: &halted[0]}
	}
	out := decisionJSON{Kind: "continue"}
	for _, m := range f.agent.Injected() {
		out.Model = append(out.Model, blocktext.Text(m.Content, "\n"))
	}
	return out
}

// agent/turn-interrupted: the input's turn, which a user's cancel ended.

func turnInterruptedPayload(_ context.Context, _ *dsh.Registry, f *fireIn) (*dsh.TurnInterruptedPayload, error) {
	return &dsh.TurnInterruptedPayload{Agent: f.agent, AgentID: hooksAgentID, Turn: f.turn}, nil
}

// agent/error: the turn's failure, its code the input's kind of error (Claude Code
// StopFailure's error) and its message the one the engine showed.

func agentErrorPayload(_ context.Context, _ *dsh.Registry, f *fireIn) (*dsh.AgentErrorPayload, error) {
	failure := dsh.LLMFailure{Code: "unknown", Message: "the turn failed"}
	if f.in.Error != nil && *f.in.Error != "" {
		failure.Code = *f.in.Error
	}
	if m := f.in.LastAssistantMessage; m != nil && *m != "" {
		failure.Message = *m
	}
	return &dsh.AgentErrorPayload{Agent: f.agent, AgentID: hooksAgentID, Turn: f.turn, Step: 1, Error: failure}, nil
}

// turn/stopping: the listeners halt or steer the agent (a continuation), else it stops.

func turnStoppingPayload(_ context.Context, _ *dsh.Registry, f *fireIn) (*dsh.TurnStoppingPayload, error) {
	p := &dsh.TurnStoppingPayload{Agent: f.agent, AgentID: hooksAgentID, Turn: f.turn, StopHookActive: f.in.StopHookActive}
	if f.in.StopHookActive {
		p.Continuations = 1
	}
	return p, nil
}

// agent/subagent-start and agent/subagent-stop: the input's agent_id and agent_type name
// the child (general-purpose when it names none); a stop's listeners halt or steer it.

func lineageOf(f *fireIn) (string, dsh.Lineage) {
	id, typ := f.in.AgentID, f.in.AgentType
	if id == "" {
		id = hooksAgentID + "-child"
	}
	if typ == "" {
		typ = "general-purpose"
	}
	return id, dsh.Lineage{ParentAgentID: hooksAgentID, ParentCallID: "dsh-hooks-call", AgentType: typ, Depth: 1}
}

func subagentStartPayload(_ context.Context, _ *dsh.Registry, f *fireIn) (*dsh.SubagentStartPayload, error) {
	id, l := lineageOf(f)
	return &dsh.SubagentStartPayload{Agent: f.agent, AgentID: id, Lineage: l}, nil
}

func subagentStopPayload(_ context.Context, _ *dsh.Registry, f *fireIn) (*dsh.SubagentStopPayload, error) {
	id, l := lineageOf(f)
	p := &dsh.SubagentStopPayload{Agent: f.agent, AgentID: id, Lineage: l, Turn: f.turn, StopHookActive: f.in.StopHookActive,
		Answer: f.in.LastAssistantMessage}
	if f.in.StopHookActive {
		p.Continuations = 1
	}
	return p, nil
}

func describeStop(f *fireIn) decisionJSON {
	halted, steered := f.agent.Halted(), f.agent.Steered()
	switch {
	case len(halted) > 0:
		return decisionJSON{Kind: "halt", Reason: &halted[0]}
	case len(steered) > 0:
		var parts []string
		for _, m := range steered {
			parts = append(parts, blocktext.Text(m.Content, "\n"))
		}
		return decisionJSON{Kind: "continue", Reason: ptr(strings.Join(parts, "\n\n"))}
	}
	return decisionJSON{Kind: "stop"}
}

// agent/pre-step: the prompt enters as the turn's first step; its default enters it.

func preStepPayload(_ context.Context, _ *dsh.Registry, f *fireIn) (*dsh.PreStepPayload, error) {
	if f.in.Prompt == nil {
		return nil, fmt.Errorf("the %s input has no prompt", f.ev.Name)
	}
	return &dsh.PreStepPayload{Agent: f.agent, AgentID: hooksAgentID, Turn: f.turn, Step: 1, Messages: []dsh.UserMessage{{
		ID: "dsh-hooks-prompt", Role: dsh.UserMessageRoleUser, Source: dsh.SourceUser{},
		Content: []dsh.ContentBlock{dsh.TextBlock{Text: *f.in.Prompt}},
	}}}, nil
}

func enterAll(p *dsh.PreStepPayload) func(context.Context) (dsh.PreStepDecision, error) {
	return func(context.Context) (dsh.PreStepDecision, error) {
		return dsh.PreStepEnter{Messages: slices.Clone(p.Messages)}, nil
	}
}

func describePreStep(d dsh.PreStepDecision, _ *fireIn) decisionJSON {
	return dsh.SwitchPreStepDecision(d,
		func(dsh.PreStepEnter) decisionJSON { return decisionJSON{Kind: "enter"} },
		func(r dsh.PreStepReject) decisionJSON { return decisionJSON{Kind: "reject", Reason: r.Reason} },
		func(h dsh.PreStepHalt) decisionJSON { return decisionJSON{Kind: "halt", Reason: ptr(h.Reason)} },
	)
}

// approval/answer

func approvalAnswerPayload(_ context.Context, _ *dsh.Registry, f *fireIn) (*dsh.ApprovalAnswerPayload, error) {
	_, _, ex, err := toolExecution(f.ev.Name, f.in)
	if err != nil {
		return nil, err
	}
	return &dsh.ApprovalAnswerPayload{Exec: ex}, nil
}

func describeApprovalAnswer(d dsh.ApprovalAnswerDecision, _ *fireIn) decisionJSON {
	return dsh.SwitchApprovalAnswerDecision(d,
		func(dsh.ApprovalAnswerPass) decisionJSON { return decisionJSON{Kind: "pass"} },
		func(dsh.ApprovalAnswerAllow) decisionJSON { return decisionJSON{Kind: "allow"} },
		func(x dsh.ApprovalAnswerDeny) decisionJSON {
			if x.Interrupt != nil && *x.Interrupt {
				return decisionJSON{Kind: "halt", Reason: x.Message}
			}
			return decisionJSON{Kind: "deny", Reason: x.Message}
		},
	)
}

// tools/pre-execute: the rewrite phase first, where the hooks run and their rewrites
// count; pre-execute then replays their decision.

func preToolPayload(ctx context.Context, reg *dsh.Registry, f *fireIn) (*dsh.PreToolPayload, error) {
	callID, args, ex, err := toolExecution(f.ev.Name, f.in)
	if err != nil {
		return nil, err
	}
	rp := &dsh.RewriteInputPayload{CallID: callID, Name: f.in.ToolName, Input: args, ModelInput: args, AgentID: ex.AgentID}
	err = reg.RunRewriteInput(ctx, rp, 0, func(_ context.Context, _ string, d dsh.RewriteDecision) (*dsh.RewriteInputPayload, error) {
		if x, ok := d.(dsh.RewriteReplace); ok {
			f.updated = x.Args
		}
		return nil, nil
	})
	if err != nil {
		return nil, err
	}
	if f.updated != nil {
		ex.Arguments = f.updated
	}
	return &dsh.PreToolPayload{Exec: ex}, nil
}

func describePreTool(d dsh.PreToolDecision, f *fireIn) decisionJSON {
	out := dsh.SwitchPreToolDecision(d,
		func(dsh.PreToolAllow) decisionJSON { return decisionJSON{Kind: "allow"} },
		func(x dsh.PreToolDeny) decisionJSON { return decisionJSON{Kind: "deny", Reason: ptr(x.Reason)} },
		func(x dsh.PreToolAsk) decisionJSON { return decisionJSON{Kind: "ask", Reason: x.Reason} },
		func(x dsh.PreToolHalt) decisionJSON { return decisionJSON{Kind: "halt", Reason: ptr(x.Reason)} },
	)
	out.UpdatedInput = f.updated
	return out
}

// tools/post-execute: the table's results column says which result the event follows;
// an event that follows every result (or every call that ran) takes the input's word. A
// failed call ran (through the execute wrappers) and failed; so does a successful one
// where the event follows only the calls that ran.

func postToolPayload(ctx context.Context, reg *dsh.Registry, f *fireIn) (*dsh.PostToolPayload, error) {
	_, _, ex, err := toolExecution(f.ev.Name, f.in)
	if err != nil {
		return nil, err
	}
	in := f.in
	every := f.ev.Results == "" || f.ev.Results == "ran"
	if f.ev.Results == "failure" || (every && in.Error != nil) {
		msg := ""
		if in.Error != nil {
			msg = *in.Error
		}
		text := in.ToolText
		if text == "" {
			text = "Error: " + msg
		}
		failure := dsh.ToolFailure{Error: dsh.ToolError{Message: msg}, Content: []dsh.ContentBlock{dsh.TextBlock{Text: text}}}
		if in.IsInterrupt {
			failure.Error.Info = &dsh.ToolErrorInfo{Name: tools.NameAbort, Code: tools.CodeAborted}
		}
		if _, err := reg.RunExecute(ctx, &dsh.ExecutePayload{Exec: ex}, func(context.Context) dsh.ToolExecutionResult { return failure }); err != nil {
			return nil, err
		}
		return &dsh.PostToolPayload{Exec: ex, Result: failure}, nil
	}
	resp := in.ToolResponse
	if len(resp) == 0 {
		resp = json.RawMessage("null")
	}
	text := in.ToolText
	if text == "" && json.Unmarshal(resp, &text) != nil {
		text = string(resp)
	}
	success := dsh.ToolSuccess{Value: resp, Content: []dsh.ContentBlock{dsh.TextBlock{Text: text}}}
	if f.ev.Results == "ran" {
		if _, err := reg.RunExecute(ctx, &dsh.ExecutePayload{Exec: ex}, func(context.Context) dsh.ToolExecutionResult { return success }); err != nil {
			return nil, err
		}
	}
	return &dsh.PostToolPayload{Exec: ex, Result: success}, nil
}

func describePostTool(d dsh.PostToolDecision, _ *fireIn) decisionJSON {
	return dsh.SwitchPostToolDecision(d,
		func(x dsh.PostToolAccept) decisionJSON {
			out := decisionJSON{Kind: "accept", Model: messageTexts(x.AdditionalContexts)}
			if x.Content != nil {
				out.Content = ptr(blocktext.Text(x.Content, "\n"))
			}
			return out
		},
		func(x dsh.PostToolBlock) decisionJSON {
			return decisionJSON{Kind: "block", Reason: ptr(blocktext.Text(x.Feedback, "\n")), Model: messageTexts(x.AdditionalContexts)}
		},
		func(x dsh.PostToolHalt) decisionJSON { return decisionJSON{Kind: "halt", Reason: ptr(x.Reason)} },
		func(x dsh.PostToolTail) decisionJSON {
			tail, _ := json.Marshal(struct {
				Name      string          `json:"name"`
				Arguments json.RawMessage `json:"arguments"`
			}{x.Name, x.Arguments})
			return decisionJSON{Kind: "tail", Tail: tail}
		},
	)
}

// agent/request: where the fold left the request: denied, answered, or sent as the
// listeners changed it (or unchanged).

func requestPayload(_ context.Context, _ *dsh.Registry, f *fireIn) (*dsh.RequestPayload, error) {
	if f.in.Request == nil {
		return nil, fmt.Errorf("%s fires at %s, and its input carries no model request to build the payload from", f.ev.Name, f.at.point)
	}
	req := *f.in.Request
	return &dsh.RequestPayload{Agent: f.agent, AgentID: f.agent.AgentID, Turn: f.turn, Step: 1, Attempt: 1, Request: req, Original: req}, nil
}

func applyRequest(p *dsh.RequestPayload, d dsh.RequestDecision, out *decisionJSON) (*dsh.RequestPayload, bool) {
	cur := p.Request
	switch x := d.(type) {
	case dsh.RequestPass:
		return nil, false
	case dsh.RequestUse:
		cur.Config = x.Config
	case dsh.RequestRewrite:
		if x.System != nil {
			cur.Config.System = x.System
		}
		if x.Messages != nil {
			cur.Messages = x.Messages
		}
		if x.Tools != nil {
			cur.Tools = x.Tools
		}
	case dsh.RequestRestrict:
		allow := slices.Clone(x.Allow)
		out.Allow = &allow
		cur.Tools = slices.DeleteFunc(slices.Clone(cur.Tools), func(t dsh.ModelTool) bool { return !slices.Contains(allow, t.Name) })
	case dsh.RequestAnswer:
		*out = decisionJSON{Kind: "answer", Text: ptr(blocktext.Text(x.Content, ""))}
		return nil, true
	case dsh.RequestDeny:
		*out = decisionJSON{Kind: "deny", Reason: ptr(x.Reason)}
		return nil, true
	}
	np := *p
	np.Request = cur
	return &np, false
}

func sentRequest(p *dsh.RequestPayload, out decisionJSON, changed bool) (decisionJSON, error) {
	if out.Kind == "pass" && changed {
		out.Kind = "send"
		data, err := p.Request.MarshalJSON()
		if err != nil {
			return decisionJSON{}, err
		}
		out.Request = data
	}
	return out, nil
}

// agent/response: what the fold let through: accepted, replaced (the text) or blocked.
// The request the response answers goes through agent/request first, where the event's
// listeners only observe it (no other event's hooks run).

func responsePayload(ctx context.Context, reg *dsh.Registry, f *fireIn) (*dsh.ResponsePayload, error) {
	if f.in.Request == nil || f.in.Response == nil {
		return nil, fmt.Errorf("%s fires at %s, and its input carries no model request and response to build the payload from", f.ev.Name, f.at.point)
	}
	rp := &dsh.RequestPayload{Agent: f.agent, AgentID: hooksAgentID, Turn: f.turn, Step: 1, Attempt: 1, Request: *f.in.Request, Original: *f.in.Request}
	if err := reg.RunRequest(ctx, rp, 0, func(context.Context, string, dsh.RequestDecision) (*dsh.RequestPayload, error) {
		return nil, nil
	}); err != nil {
		return nil, err
	}
	resp := *f.in.Response
	return &dsh.ResponsePayload{Agent: f.agent, AgentID: f.agent.AgentID, Turn: f.turn, Step: 1, Response: resp, Original: resp}, nil
}

func applyResponse(p *dsh.ResponsePayload, d dsh.ResponseDecision, out *decisionJSON) (*dsh.ResponsePayload, bool) {
	switch x := d.(type) {
	case dsh.ResponseReplace:
		*out = decisionJSON{Kind: "replace", Text: ptr(x.Text)}
		np := *p
		np.Response.Content = []dsh.ContentBlock{dsh.TextBlock{Text: x.Text}}
		if x.ToolCalls != dsh.ReplaceToolCallsDrop {
			for _, c := range p.Response.Content {
				if _, isText := c.(dsh.TextBlock); !isText {
					np.Response.Content = append(np.Response.Content, c)
				}
			}
		}
		return &np, false
	case dsh.ResponseBlock:
		*out = decisionJSON{Kind: "block", Reason: ptr(x.Reason)}
		return nil, true
	case dsh.ResponseAccept:
	}
	return nil, false
}

// compaction/pre-compact and compaction/post-compact: a manual compaction, or an
// automatic one inside the turn.

const hooksCompactionID = "dsh-hooks-compaction"

// compactionTriggers are the inputs' trigger words, each with the origin and trigger of
// the compaction it describes ("" is manual).
var compactionTriggers = map[string]struct {
	origin  dsh.CompactionOrigin
	trigger dsh.CompactionTrigger
}{
	"":       {dsh.CompactionOriginManual, dsh.CompactionTriggerManual},
	"manual": {dsh.CompactionOriginManual, dsh.CompactionTriggerManual},
	"auto":   {dsh.CompactionOriginAuto, dsh.CompactionTriggerPressure},
}

// compactionOf is the origin, trigger and turn of the compaction the input describes.
func compactionOf(f *fireIn) (dsh.CompactionOrigin, dsh.CompactionTrigger, *int, error) {
	c, ok := compactionTriggers[f.in.Trigger]
	if !ok {
		return "", "", nil, fmt.Errorf("invalid %s trigger %q (want manual or auto)", f.ev.Name, f.in.Trigger)
	}
	var t *int
	if c.origin == dsh.CompactionOriginAuto {
		t = &f.turn // an automatic compaction happens inside a turn
	}
	return c.origin, c.trigger, t, nil
}

func preCompactPayload(_ context.Context, _ *dsh.Registry, f *fireIn) (*dsh.PreCompactPayload, error) {
	origin, trigger, t, err := compactionOf(f)
	if err != nil {
		return nil, err
	}
	return &dsh.PreCompactPayload{Agent: f.agent, AgentID: hooksAgentID, CompactionID: hooksCompactionID, Trigger: trigger,
		Origin: origin, Turn: t, Phases: []dsh.CompactionPhase{dsh.CompactionPhaseSummarize},
		UserInstructions: f.in.CustomInstructions}, nil
}

func tallyPreCompact(d dsh.PreCompactDecision, out *decisionJSON) bool {
	switch x := d.(type) {
	case dsh.PreCompactProceed:
		out.Instructions = append(out.Instructions, x.Instructions...)
	case dsh.PreCompactDefer:
		*out = decisionJSON{Kind: "defer", Reason: ptr(x.Reason)}
		return true
	case dsh.PreCompactReplace:
		*out = decisionJSON{Kind: "replace", Text: ptr(x.Summary), Reason: x.Reason}
		return true
	}
	return false
}

func postCompactPayload(_ context.Context, _ *dsh.Registry, f *fireIn) (*dsh.PostCompactPayload, error) {
	origin, trigger, t, err := compactionOf(f)
	if err != nil {
		return nil, err
	}
	summary := f.in.CompactSummary
	return &dsh.PostCompactPayload{Agent: f.agent, AgentID: hooksAgentID, CompactionID: hooksCompactionID, Trigger: trigger,
		Origin: origin, Turn: t, Outcome: dsh.CompactionOutcomeCommitted, Summary: &summary}, nil
}

func tallyPostCompact(d dsh.PostCompactDecision, out *decisionJSON) bool {
	if _, ok := d.(dsh.PostCompactAppend); ok {
		out.Kind = "append"
	}
	return false
}
