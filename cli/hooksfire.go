package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/dshkit/dsh/bridges/dialect"
	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/generated/hookmap"
	"github.com/dshkit/dsh/internal/agentrec"
	"github.com/dshkit/dsh/runtime/tools"
)

// dsh hooks run fires an event by its table row: at the extension point the row names (or
// the one of its also column whose subject the input carries), with the payload that point
// takes built from the input. Nothing here knows an event's name: what differs between
// dialects is the table's, and the dialect's stdin reader's (dialect.Descriptor.ReadStdin).

// fired is where one input fires its event: the point, and the table's also entry that
// names it (nil: the row's own point).
type fired struct {
	point string
	also  *hookmap.Also
}

// firing is where ev fires for the input raw: at the also entry whose subject is the
// input's matcher field (Claude Code's Notification idle_prompt, at agent/status; not an
// entry at compaction/post-compact), else at the row's point, when the row's subject is
// that field or the row has none.
func firing(ev hookmap.Event, raw []byte) (fired, error) {
	if ev.Subject == "" && len(ev.Also) == 0 {
		return fired{point: ev.Point}, nil
	}
	var fields map[string]json.RawMessage
	_ = json.Unmarshal(raw, &fields) // the input decoded as an object before
	var subject string
	_ = json.Unmarshal(fields[ev.Matcher], &subject)
	for i, a := range ev.Also {
		// An entry at compaction/post-compact moves the session start of a compaction,
		// which an input cannot describe (it names none): the input fires at the row's
		// own point, which carries every source.
		if a.Subject == subject && a.Point != dsh.PostCompactEventName {
			return fired{point: a.Point, also: &ev.Also[i]}, nil
		}
	}
	if ev.Subject == "" || ev.Subject == subject {
		return fired{point: ev.Point}, nil
	}
	subjects := []string{ev.Subject}
	for _, a := range ev.Also {
		subjects = append(subjects, a.Subject)
	}
	return fired{}, fmt.Errorf("the %s input's %s %q: dsh fires %s with %s", ev.Name, ev.Matcher, subject, ev.Name, strings.Join(subjects, " or "))
}

// errFoldStop ends a fold whose decision is final (a deny, an answer, a block).
var errFoldStop = errors.New("the fold stopped")

// fireEvent builds the payload of the point the event fires at from the input, runs that
// point through the registry with a terminal that yields the point's default, and
// describes the resulting decision.
func fireEvent(ctx context.Context, reg *dsh.Registry, ev hookmap.Event, at fired, in dialect.Input, turn int, agent *agentrec.Agent) (decisionJSON, error) {
	const agentID = "dsh-hooks"
	aid := agentID
	str := func(s string) *string { return &s }
	switch at.point {
	case dsh.SessionStartEventName:
		src := dsh.SessionStartSource(in.Source)
		if in.Source == "" {
			src = dsh.SessionStartSourceStartup
		}
		if !src.Valid() {
			return decisionJSON{}, fmt.Errorf("invalid %s source %q", ev.Name, in.Source)
		}
		err := reg.NotifySessionStart(ctx, &dsh.SessionStartPayload{Agent: agent, AgentID: agentID, Source: src})
		return decisionJSON{Kind: "none"}, err

	case dsh.PreStepEventName:
		if in.Prompt == nil {
			return decisionJSON{}, fmt.Errorf("the %s input has no prompt", ev.Name)
		}
		p := &dsh.PreStepPayload{Agent: agent, AgentID: agentID, Turn: turn, Step: 1, Messages: []dsh.UserMessage{{
			ID: "dsh-hooks-prompt", Role: dsh.UserMessageRoleUser, Source: dsh.SourceUser{},
			Content: []dsh.ContentBlock{dsh.TextBlock{Text: *in.Prompt}},
		}}}
		d, err := reg.RunPreStep(ctx, p, func(context.Context) (dsh.PreStepDecision, error) {
			return dsh.PreStepEnter{Messages: slices.Clone(p.Messages)}, nil
		})
		if err != nil {
			return decisionJSON{}, err
		}
		return dsh.SwitchPreStepDecision(d,
			func(dsh.PreStepEnter) decisionJSON { return decisionJSON{Kind: "enter"} },
			func(r dsh.PreStepReject) decisionJSON { return decisionJSON{Kind: "reject", Reason: r.Reason} },
			func(h dsh.PreStepHalt) decisionJSON { return decisionJSON{Kind: "halt", Reason: str(h.Reason)} },
		), nil

	case dsh.ApprovalAnswerEventName:
		_, _, ex, err := toolExecution(ev.Name, in, &aid)
		if err != nil {
			return decisionJSON{}, err
		}
		d, err := reg.RunApprovalAnswer(ctx, &dsh.ApprovalAnswerPayload{Exec: ex}, nil)
		if err != nil {
			return decisionJSON{}, err
		}
		return dsh.SwitchApprovalAnswerDecision(d,
			func(dsh.ApprovalAnswerPass) decisionJSON { return decisionJSON{Kind: "pass"} },
			func(dsh.ApprovalAnswerAllow) decisionJSON { return decisionJSON{Kind: "allow"} },
			func(x dsh.ApprovalAnswerDeny) decisionJSON {
				if x.Interrupt != nil && *x.Interrupt {
					return decisionJSON{Kind: "halt", Reason: x.Message}
				}
				return decisionJSON{Kind: "deny", Reason: x.Message}
			},
		), nil

	case dsh.ApprovalPromptEventName:
		ex := dsh.ToolExecution{CallID: "dsh-hooks-call", Name: in.ToolName, Arguments: json.RawMessage("{}"), AgentID: &aid,
			RootCallID: "dsh-hooks-call", Token: dsh.NewToken()}
		err := reg.EmitApprovalPrompt(ctx, &dsh.ApprovalPromptPayload{Exec: ex})
		return decisionJSON{Kind: "none"}, err

	case dsh.StatusEventName:
		status := dsh.AgentStatusIdle
		if at.also != nil && at.also.Status != "" {
			status = dsh.AgentStatus(at.also.Status)
		}
		err := reg.EmitStatus(ctx, &dsh.StatusPayload{Agent: agent, AgentID: agentID, Status: status})
		return decisionJSON{Kind: "none"}, err

	case dsh.PreToolEventName:
		callID, args, ex, err := toolExecution(ev.Name, in, &aid)
		if err != nil {
			return decisionJSON{}, err
		}
		// The rewrite phase first, where the hooks run and their rewrites count;
		// pre-execute then replays their decision.
		var updated json.RawMessage
		rp := &dsh.RewriteInputPayload{CallID: callID, Name: in.ToolName, Input: args, ModelInput: args, AgentID: &aid}
		err = reg.RunRewriteInput(ctx, rp, 0, func(_ context.Context, _ string, d dsh.RewriteDecision) (*dsh.RewriteInputPayload, error) {
			if x, ok := d.(dsh.RewriteReplace); ok {
				updated = x.Args
			}
			return nil, nil
		})
		if err != nil {
			return decisionJSON{}, err
		}
		if updated != nil {
			ex.Arguments = updated
		}
		d, err := reg.RunPreTool(ctx, &dsh.PreToolPayload{Exec: ex}, nil)
		if err != nil {
			return decisionJSON{}, err
		}
		out := dsh.SwitchPreToolDecision(d,
			func(dsh.PreToolAllow) decisionJSON { return decisionJSON{Kind: "allow"} },
			func(x dsh.PreToolDeny) decisionJSON { return decisionJSON{Kind: "deny", Reason: str(x.Reason)} },
			func(x dsh.PreToolAsk) decisionJSON { return decisionJSON{Kind: "ask", Reason: x.Reason} },
			func(x dsh.PreToolHalt) decisionJSON { return decisionJSON{Kind: "halt", Reason: str(x.Reason)} },
		)
		out.UpdatedInput = updated
		return out, nil

	case dsh.PostToolEventName:
		_, _, ex, err := toolExecution(ev.Name, in, &aid)
		if err != nil {
			return decisionJSON{}, err
		}
		// The table's results column says which result the event follows; an event that
		// follows every result takes the input's word.
		var result dsh.ToolExecutionResult
		if ev.Results == "failure" || (ev.Results == "" && in.Error != nil) {
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
			// The call ran (through the execute wrappers) and failed.
			if _, err := reg.RunExecute(ctx, &dsh.ExecutePayload{Exec: ex}, func(context.Context) dsh.ToolExecutionResult { return failure }); err != nil {
				return decisionJSON{}, err
			}
			result = failure
		} else {
			resp := in.ToolResponse
			if len(resp) == 0 {
				resp = json.RawMessage("null")
			}
			text := in.ToolText
			if text == "" && json.Unmarshal(resp, &text) != nil {
				text = string(resp)
			}
			result = dsh.ToolSuccess{Value: resp, Content: []dsh.ContentBlock{dsh.TextBlock{Text: text}}}
		}
		d, err := reg.RunPostTool(ctx, &dsh.PostToolPayload{Exec: ex, Result: result}, nil)
		if err != nil {
			return decisionJSON{}, err
		}
		return dsh.SwitchPostToolDecision(d,
			func(dsh.PostToolAccept) decisionJSON { return decisionJSON{Kind: "accept"} },
			func(x dsh.PostToolBlock) decisionJSON {
				return decisionJSON{Kind: "block", Reason: str(joinText(x.Feedback, "\n"))}
			},
			func(x dsh.PostToolHalt) decisionJSON { return decisionJSON{Kind: "halt", Reason: str(x.Reason)} },
		), nil

	case dsh.TurnStoppingEventName:
		p := &dsh.TurnStoppingPayload{Agent: agent, AgentID: agentID, Turn: turn, StopHookActive: in.StopHookActive}
		if in.StopHookActive {
			p.Continuations = 1
		}
		if err := reg.NotifyTurnStopping(ctx, p); err != nil {
			return decisionJSON{}, err
		}
		halted, steered := agent.Halted(), agent.Steered()
		switch {
		case len(halted) > 0:
			return decisionJSON{Kind: "halt", Reason: &halted[0]}, nil
		case len(steered) > 0:
			var parts []string
			for _, m := range steered {
				parts = append(parts, joinText(m.Content, "\n"))
			}
			return decisionJSON{Kind: "continue", Reason: str(strings.Join(parts, "\n\n"))}, nil
		}
		return decisionJSON{Kind: "stop"}, nil

	case dsh.SessionEndEventName:
		// dsh ends a session with one of two reasons: clear (the same word in every
		// dialect), or close, which the hooks see in the dialect's words ("other", "exit").
		reason := dsh.SessionEndReasonClose
		if in.Reason == string(dsh.SessionEndReasonClear) {
			reason = dsh.SessionEndReasonClear
		}
		err := reg.NotifySessionEnd(ctx, &dsh.SessionEndPayload{Agent: agent, AgentID: agentID, Reason: reason})
		return decisionJSON{Kind: "none"}, err

	case dsh.PreCompactEventName, dsh.PostCompactEventName:
		origin, trigger := dsh.CompactionOriginManual, dsh.CompactionTriggerManual
		switch in.Trigger {
		case "auto":
			origin, trigger = dsh.CompactionOriginAuto, dsh.CompactionTriggerPressure
		case "manual", "":
		default:
			return decisionJSON{}, fmt.Errorf("invalid %s trigger %q (want manual or auto)", ev.Name, in.Trigger)
		}
		var t *int
		if origin == dsh.CompactionOriginAuto {
			t = &turn // an automatic compaction happens inside a turn
		}
		const id = "dsh-hooks-compaction"
		if at.point == dsh.PreCompactEventName {
			p := &dsh.PreCompactPayload{Agent: agent, AgentID: agentID, CompactionID: id, Trigger: trigger, Origin: origin, Turn: t,
				Phases: []dsh.CompactionPhase{dsh.CompactionPhaseSummarize}, UserInstructions: in.CustomInstructions}
			out := decisionJSON{Kind: "proceed"}
			for _, v := range reg.RunPreCompact(ctx, p, 0) {
				if v.Err != nil {
					return decisionJSON{}, v.Err
				}
				switch x := v.Decision.(type) {
				case dsh.PreCompactProceed:
					out.Instructions = append(out.Instructions, x.Instructions...)
				case dsh.PreCompactDefer:
					return decisionJSON{Kind: "defer", Reason: ptr(x.Reason)}, nil
				case dsh.PreCompactReplace:
					return decisionJSON{Kind: "replace", Text: ptr(x.Summary), Reason: x.Reason}, nil
				}
			}
			if halted := agent.Halted(); len(halted) > 0 {
				return decisionJSON{Kind: "halt", Reason: &halted[0]}, nil
			}
			return out, nil
		}
		summary := in.CompactSummary
		p := &dsh.PostCompactPayload{Agent: agent, AgentID: agentID, CompactionID: id, Trigger: trigger, Origin: origin, Turn: t,
			Outcome: dsh.CompactionOutcomeCommitted, Summary: &summary}
		out := decisionJSON{Kind: "accept"}
		for _, v := range reg.RunPostCompact(ctx, p, 0) {
			if v.Err != nil {
				return decisionJSON{}, v.Err
			}
			if _, ok := v.Decision.(dsh.PostCompactAppend); ok {
				out.Kind = "append"
			}
		}
		if halted := agent.Halted(); len(halted) > 0 {
			return decisionJSON{Kind: "halt", Reason: &halted[0]}, nil
		}
		return out, nil

	case dsh.RequestEventName:
		if in.Request == nil {
			return decisionJSON{}, fmt.Errorf("%s fires at %s, and its input carries no model request to build the payload from", ev.Name, at.point)
		}
		return fireRequest(ctx, reg, *in.Request, turn, agent)

	case dsh.ResponseEventName:
		if in.Request == nil || in.Response == nil {
			return decisionJSON{}, fmt.Errorf("%s fires at %s, and its input carries no model request and response to build the payload from", ev.Name, at.point)
		}
		// The request the response answers goes through agent/request first, where the
		// event's listeners only observe it (no other event's hooks run).
		rp := &dsh.RequestPayload{Agent: agent, AgentID: agentID, Turn: turn, Step: 1, Attempt: 1, Request: *in.Request, Original: *in.Request}
		if err := reg.RunRequest(ctx, rp, 0, func(context.Context, string, dsh.RequestDecision) (*dsh.RequestPayload, error) {
			return nil, nil
		}); err != nil {
			return decisionJSON{}, err
		}
		return fireResponse(ctx, reg, *in.Response, turn, agent)
	}
	return decisionJSON{}, fmt.Errorf("%s fires at %s, which dsh hooks run does not drive", ev.Name, at.point)
}

// fireRequest runs the agent/request fold over req and describes where it left the
// request: denied, answered, halted, or sent as the listeners changed it (or unchanged).
func fireRequest(ctx context.Context, reg *dsh.Registry, req dsh.ModelRequest, turn int, agent *agentrec.Agent) (decisionJSON, error) {
	p := &dsh.RequestPayload{Agent: agent, AgentID: agent.AgentID, Turn: turn, Step: 1, Attempt: 1, Request: req, Original: req}
	out, changed := decisionJSON{Kind: "pass"}, false
	err := reg.RunRequest(ctx, p, 0, func(_ context.Context, _ string, d dsh.RequestDecision) (*dsh.RequestPayload, error) {
		cur := p.Request
		switch x := d.(type) {
		case dsh.RequestPass:
			return nil, nil
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
			out = decisionJSON{Kind: "answer", Text: ptr(joinText(x.Content, ""))}
			return nil, errFoldStop
		case dsh.RequestDeny:
			out = decisionJSON{Kind: "deny", Reason: ptr(x.Reason)}
			return nil, errFoldStop
		}
		changed = true
		np := *p
		np.Request = cur
		p = &np
		return p, nil
	})
	if err != nil && !errors.Is(err, errFoldStop) {
		return decisionJSON{}, err
	}
	if halted := agent.Halted(); len(halted) > 0 {
		return decisionJSON{Kind: "halt", Reason: &halted[0]}, nil
	}
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

// fireResponse runs the agent/response fold over resp and describes what it let through:
// accepted, replaced (the text), blocked or halted.
func fireResponse(ctx context.Context, reg *dsh.Registry, resp dsh.ModelResponse, turn int, agent *agentrec.Agent) (decisionJSON, error) {
	p := &dsh.ResponsePayload{Agent: agent, AgentID: agent.AgentID, Turn: turn, Step: 1, Response: resp, Original: resp}
	out := decisionJSON{Kind: "accept"}
	err := reg.RunResponse(ctx, p, 0, func(_ context.Context, _ string, d dsh.ResponseDecision) (*dsh.ResponsePayload, error) {
		switch x := d.(type) {
		case dsh.ResponseReplace:
			out = decisionJSON{Kind: "replace", Text: ptr(x.Text)}
			np := *p
			np.Response.Content = []dsh.ContentBlock{dsh.TextBlock{Text: x.Text}}
			if x.ToolCalls != dsh.ReplaceToolCallsDrop {
				for _, c := range p.Response.Content {
					if _, isText := c.(dsh.TextBlock); !isText {
						np.Response.Content = append(np.Response.Content, c)
					}
				}
			}
			p = &np
			return p, nil
		case dsh.ResponseBlock:
			out = decisionJSON{Kind: "block", Reason: ptr(x.Reason)}
			return nil, errFoldStop
		}
		return nil, nil
	})
	if err != nil && !errors.Is(err, errFoldStop) {
		return decisionJSON{}, err
	}
	if halted := agent.Halted(); len(halted) > 0 {
		return decisionJSON{Kind: "halt", Reason: &halted[0]}, nil
	}
	return out, nil
}

func ptr[T any](v T) *T { return &v }

// joinText is the text blocks of content joined by sep.
func joinText(content []dsh.ContentBlock, sep string) string {
	var parts []string
	for _, c := range content {
		if t, ok := c.(dsh.TextBlock); ok {
			parts = append(parts, t.Text)
		}
	}
	return strings.Join(parts, sep)
}

// toolExecution is the call a tool event's input names, as dsh hooks run fires it: its
// id (a fixed one when the input has none), its arguments ({} when none) and the
// execution the tool points see.
func toolExecution(event string, in dialect.Input, aid *string) (callID string, args json.RawMessage, ex dsh.ToolExecution, err error) {
	if in.ToolName == "" {
		return "", nil, ex, fmt.Errorf("the %s input has no tool_name", event)
	}
	callID = in.ToolUseID
	if callID == "" {
		callID = "dsh-hooks-call"
	}
	args = in.ToolInput
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage("{}")
	}
	ex = dsh.ToolExecution{CallID: callID, Name: in.ToolName, Arguments: args, AgentID: aid,
		RootCallID: callID, Token: dsh.NewToken()}
	return callID, args, ex, nil
}
