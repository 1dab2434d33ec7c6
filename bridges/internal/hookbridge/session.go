package hookbridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/dshkit/dsh/bridges/hookproto"
	"github.com/dshkit/dsh/bridges/prompts"
	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/internal/blocktext"
)

// sessionStart: contexts become one injected message; SessionStart cannot block.
func (b *Bridge) sessionStart(ctx context.Context, p *dsh.SessionStartPayload) error {
	if p.CompactionID != nil {
		b.mu.Lock()
		done := b.early[*p.CompactionID]
		delete(b.early, *p.CompactionID)
		b.mu.Unlock()
		if done {
			return nil // ran at compaction/post-compact (the table's also column)
		}
		return b.sessionStartCompact(ctx, b.event(dsh.SessionStartEventName), string(dsh.SessionStartSourceCompact), p.AgentID, *p.CompactionID, p.Turn, p.Agent)
	}
	in := Input{Event: b.event(dsh.SessionStartEventName), Session: b.session(ctx, p.AgentID), Source: string(p.Source)}
	if p.Source == dsh.SessionStartSourceResume && p.Agent != nil {
		in.Resumed = resumed(p.Agent, time.Now())
	}
	return b.sessionStartFire(ctx, in, p.Turn, p.Agent)
}

// sessionStartCompact runs the session-start hooks (event) of a committed compaction,
// with the source source: the hooks are the attempt's, inside its turn if any.
func (b *Bridge) sessionStartCompact(ctx context.Context, event, source, agentID, compactionID string, turn *int, agent dsh.Agent) error {
	in := b.compactContext(ctx, event, source, agentID, compactionID, turn)
	return b.sessionStartFire(ctx, in, turn, agent)
}

// compactContext is the input of the session-start event of a committed compaction.
func (b *Bridge) compactContext(ctx context.Context, event, source, agentID, compactionID string, turn *int) Input {
	in := b.compactInput(ctx, event, agentID, compactionID, "", turn)
	in.Source = source
	return in
}

// sessionStartFire fires SessionStart and injects its contexts.
func (b *Bridge) sessionStartFire(ctx context.Context, in Input, turn *int, agent dsh.Agent) error {
	msg, err := b.sessionStartRun(ctx, in, turn, agent)
	if err != nil || msg == nil {
		return err
	}
	if agent == nil {
		return fmt.Errorf("%s hook contexts: the payload has no agent handle", in.Event)
	}
	return agent.Inject(ctx, *msg)
}

// sessionStartRun fires SessionStart and returns the message of its contexts (nil for
// none).
func (b *Bridge) sessionStartRun(ctx context.Context, in Input, turn *int, agent dsh.Agent) (*dsh.UserMessage, error) {
	rep, err := b.fire(ctx, in, in.Source, in.Session.TurnOpen && turn != nil, agent)
	if err != nil {
		return nil, err
	}
	switch rep.Merged.Outcome {
	case dsh.HookOutcomeBlock, dsh.HookOutcomeDeny, dsh.HookOutcomeHalt:
		b.log.Info("session-start hooks cannot block startup; ignored", "event", in.Event, "outcome", string(rep.Merged.Outcome), "reason", rep.Merged.Reason)
	}
	if len(rep.Merged.Contexts) == 0 {
		return nil, nil
	}
	msg := b.message(b.contexts(in.Event, in.Source, rep))
	return &msg, nil
}

// userPrompt joins the text of the user-sourced messages of a batch; ok is false when
// the batch holds none (a tool continuation or a steered plugin message), where
// UserPromptSubmit does not fire.
func userPrompt(msgs []dsh.UserMessage) (string, bool) {
	return promptText(msgs, func(m dsh.UserMessage) bool { return m.Source != nil && m.Source.Kind() == dsh.SourceUserKind })
}

// promptText joins, with newlines, the text blocks of the messages of msgs that keep
// accepts; ok is false when it accepts none.
func promptText(msgs []dsh.UserMessage, keep func(dsh.UserMessage) bool) (string, bool) {
	var parts []string
	found := false
	for _, m := range msgs {
		if !keep(m) {
			continue
		}
		found = true
		for _, c := range m.Content {
			//dshvet:partial a hook reads a prompt's text; the other blocks hold none
			switch t := c.(type) {
			case dsh.TextBlock:
				parts = append(parts, t.Text)
			}
		}
	}
	return strings.Join(parts, "\n"), found
}

// preStep maps UserPromptSubmit: block rejects, halt halts, contexts are appended to the
// downstream enter decision (and dropped otherwise). Then, when the prompt names a slash
// command of the table (prompts.Expand) and an event of the point fires only for those
// (the commandsOnly column: Claude Code's UserPromptExpansion), that event runs, with the
// command's name as its subject, and decides the same ways; the expansion itself is the
// runner's, after this listener.
func (b *Bridge) preStep(ctx context.Context, p *dsh.PreStepPayload, next dsh.PreStepNext) (dsh.PreStepDecision, error) {
	submit, expansion := b.preStepEvents()
	prompt, ok := userPrompt(p.Messages)
	if !ok {
		// A batch without the user's prompt: the prompt event fires only for the message a
		// turn-stopping block of this bridge relayed, where its row says so (Gemini CLI's
		// BeforeAgent after an AfterAgent deny), and no command expands there.
		if e, _ := b.d.Table.Lookup(submit); submit == "" || !e.Relayed {
			return next.Call(ctx)
		}
		if prompt, ok = b.relayedPrompt(p.Messages); !ok {
			return next.Call(ctx)
		}
		expansion = ""
	}
	s := b.session(ctx, p.AgentID)
	s.Turn, s.TurnOpen = p.Turn, true
	var contexts []string
	if submit != "" {
		rep, err := b.fire(ctx, Input{Event: submit, Session: s, Turn: p.Turn, Prompt: prompt}, "", true, p.Agent)
		if err != nil {
			return nil, err
		}
		if d := preStepBlock(rep); d != nil {
			return d, nil
		}
		contexts = append(contexts, b.contexts(submit, "", rep)...)
	}
	if expansion != "" {
		x, ok, err := prompts.Expand(b.d.Table.Commands, prompt, b.places())
		if err != nil {
			return nil, err
		}
		if ok {
			in := Input{Event: expansion, Session: s, Turn: p.Turn, Prompt: prompt,
				ExpansionType: "slash_command", CommandName: x.Name, CommandArgs: x.Args, CommandSource: x.Source}
			rep, err := b.fire(ctx, in, x.Name, true, p.Agent)
			if err != nil {
				return nil, err
			}
			if d := preStepBlock(rep); d != nil {
				return d, nil
			}
			// Measured in Claude Code 2.1.328: the expansion's contexts come before the
			// prompt's, though its hooks run after.
			contexts = append(b.contexts(expansion, x.Name, rep), contexts...)
		}
	}
	d, err := next.Call(ctx)
	if err != nil || len(contexts) == 0 {
		return d, err
	}
	var msgs []dsh.UserMessage
	switch e := d.(type) {
	case dsh.PreStepEnter:
		msgs = e.Messages
	default:
		b.log.Info("prompt hook contexts dropped: the step was not entered", "event", submit+expansion, "decision", string(d.Kind()))
		return d, nil
	}
	out := make([]dsh.UserMessage, 0, len(msgs)+1)
	if b.d.Render.PromptContextsFirst {
		out = append(append(out, b.message(contexts)), msgs...)
		return dsh.PreStepEnter{Messages: out}, nil
	}
	out = append(append(out, msgs...), b.message(contexts))
	return dsh.PreStepEnter{Messages: out}, nil
}

// relayedPrompt joins the text of the batch's messages of form "relay" that this bridge
// sent (a turn-stopping block's next prompt); ok is false when the batch holds none.
func (b *Bridge) relayedPrompt(msgs []dsh.UserMessage) (string, bool) {
	return promptText(msgs, func(m dsh.UserMessage) bool {
		src, isPlugin := m.Source.(dsh.SourcePlugin)
		return isPlugin && src.Form == dsh.PluginFormRelay && src.Plugin == b.d.Table.Plugin
	})
}

// preStepEvents are the events with hooks at agent/pre-step: the one every prompt fires
// (UserPromptSubmit) and the one only a slash command fires (the commandsOnly column).
func (b *Bridge) preStepEvents() (submit, expansion string) {
	for _, ev := range b.at[dsh.PreStepEventName] {
		if e, _ := b.d.Table.Lookup(ev); e.CommandsOnly {
			expansion = ev
		} else {
			submit = ev
		}
	}
	return submit, expansion
}

// places are where the session's slash commands are: the project's (when trusted) and
// the user's.
func (b *Bridge) places() prompts.Places {
	home, _ := os.UserHomeDir()
	return prompts.Places{Workspace: b.o.ProjectDir, Home: home, Trusted: b.o.TrustProject}
}

// preStepBlock is the decision of a prompt event's report that stops the prompt: halt,
// or reject for a block or deny; nil otherwise.
func preStepBlock(rep *hookproto.Report) dsh.PreStepDecision {
	switch rep.Merged.Outcome {
	case dsh.HookOutcomeHalt:
		return dsh.PreStepHalt{Reason: rep.Merged.Reason}
	case dsh.HookOutcomeBlock, dsh.HookOutcomeDeny:
		reason := rep.Merged.Reason
		return dsh.PreStepReject{Reason: &reason}
	}
	return nil
}

// turnStopping maps Stop: block steers the reason into another step, halt ends the turn.
func (b *Bridge) turnStopping(ctx context.Context, p *dsh.TurnStoppingPayload) error {
	s := b.session(ctx, p.AgentID)
	s.Turn, s.TurnOpen = p.Turn, true
	ev := b.event(dsh.TurnStoppingEventName)
	in := Input{Event: ev, Session: s, Turn: p.Turn, StopHookActive: p.StopHookActive, BackgroundTasks: p.BackgroundTasks}
	rep, err := b.fire(ctx, in, "", true, p.Agent)
	if err != nil {
		return err
	}
	return b.stopOutcome(ctx, ev, rep, p.Agent)
}

// stopOutcome acts on the report of a stop event (Stop, SubagentStop) for agent, whose
// turn would end: a halt ends it, a block continues it with the reason, contexts
// continue it where the dialect says so.
func (b *Bridge) stopOutcome(ctx context.Context, ev string, rep *hookproto.Report, agent dsh.Agent) error {
	switch rep.Merged.Outcome {
	case dsh.HookOutcomeHalt:
		if agent == nil {
			return errors.New("stop hook halt: the payload has no agent handle")
		}
		agent.Halt(rep.Merged.Reason)
	case dsh.HookOutcomeBlock, dsh.HookOutcomeDeny:
		if agent == nil {
			return errors.New("stop hook block: the payload has no agent handle")
		}
		texts := []string{rep.Merged.Reason}
		if b.d.Render.Stop != nil {
			texts = b.d.Render.Stop(rep)
		}
		msg := b.message(texts)
		if f := b.d.Render.StopForm; f != "" {
			msg.Source = dsh.SourcePlugin{Plugin: b.d.Table.Plugin, Form: f}
		}
		return agent.Steer(ctx, msg)
	default:
		if b.d.Render.StopContexts && len(rep.Merged.Contexts) > 0 {
			if agent == nil {
				return errors.New("stop hook context: the payload has no agent handle")
			}
			return agent.Steer(ctx, b.message(b.contexts(ev, "", rep)))
		}
	}
	return nil
}

// sessionEnd maps SessionEnd: the hooks run for cleanup; nothing they print or exit with
// changes anything (the session is over), so outcomes other than pass are only logged.
// The runtime bounds the listener (agent/session-end); its context ending kills the hooks.
// agentError fires the event at agent/error, a turn's failure (Claude Code StopFailure),
// in the turn, before its turn/end. Its subject is what the dialect's input carries in the
// table's matcher field (Claude Code's kind of error), read from the encoded input. The
// hooks only observe: their outcome is recorded, never applied.
func (b *Bridge) agentError(ctx context.Context, p *dsh.AgentErrorPayload) {
	s := b.session(ctx, p.AgentID)
	failure := p.Error
	in := Input{Event: b.event(dsh.AgentErrorEventName), Session: s, Turn: p.Turn, Failure: &failure, Error: p.Error.Message}
	rep, err := b.fire(ctx, in, b.subjectOf(in), true, p.Agent)
	if err != nil {
		b.log.Warn("hooks at a turn's failure did not run", "event", in.Event, "err", err)
		return
	}
	if o := rep.Merged.Outcome; o != dsh.HookOutcomePass && o != "" {
		b.log.Info("hooks at a turn's failure cannot change anything; ignored", "event", in.Event, "outcome", string(o))
	}
}

// setup fires the event at agent/setup (Claude Code's Setup) when an agent is created with
// a setup trigger; its hooks' contexts reach the first request (Inject), as
// SessionStart's do. It cannot block startup: other outcomes are logged.
func (b *Bridge) setup(ctx context.Context, p *dsh.SetupPayload) error {
	ev := b.event(dsh.SetupEventName)
	in := Input{Event: ev, Session: b.session(ctx, p.AgentID), Trigger: string(p.Trigger)}
	rep, err := b.fire(ctx, in, string(p.Trigger), false, p.Agent)
	if err != nil {
		return err
	}
	if o := rep.Merged.Outcome; o != dsh.HookOutcomePass && o != "" {
		b.log.Info("setup hooks cannot stop startup; ignored", "event", ev, "outcome", string(o), "reason", rep.Merged.Reason)
	}
	texts := b.contexts(ev, string(p.Trigger), rep)
	if len(texts) == 0 {
		return nil
	}
	if p.Agent == nil {
		return fmt.Errorf("%s hook contexts: the payload has no agent handle", ev)
	}
	return p.Agent.Inject(ctx, b.message(texts))
}

// instructionsLoaded fires the event at agent/instructions-loaded (Claude Code's
// InstructionsLoaded) for one file, matched on the load reason; it only observes.
func (b *Bridge) instructionsLoaded(ctx context.Context, p *dsh.InstructionsLoadedPayload) error {
	ev := b.event(dsh.InstructionsLoadedEventName)
	f := p.File
	in := Input{Event: ev, Session: b.session(ctx, p.AgentID), Instruction: &f}
	if p.Turn != nil { // loaded again after an automatic compaction, within the turn
		in.Turn, in.Session.Turn, in.Session.TurnOpen = *p.Turn, *p.Turn, true
	}
	rep, err := b.fire(ctx, in, b.subjectOf(in), p.Turn != nil, p.Agent)
	if err != nil {
		return err
	}
	if o := rep.Merged.Outcome; o != dsh.HookOutcomePass && o != "" {
		b.log.Info("hooks at a loaded instruction file cannot change anything; ignored", "event", ev, "outcome", string(o))
	}
	return nil
}

// postBatch fires the event at agent/post-batch (Claude Code's PostToolBatch) once the
// tool calls of a step have all settled: a block or a halt ends the turn before the next
// request (Halt, with the reason); the hooks' contexts reach that request after the
// results' own (Inject).
func (b *Bridge) postBatch(ctx context.Context, p *dsh.PostBatchPayload) error {
	s := b.session(ctx, p.AgentID)
	s.Turn, s.TurnOpen = p.Turn, true
	ev := b.event(dsh.PostBatchEventName)
	batch := make([]BatchCall, len(p.Calls))
	for i, c := range p.Calls {
		batch[i] = BatchCall{ToolName: c.Name, ToolInput: c.Arguments, ToolUseID: c.CallID, ToolText: blocktext.Text(c.Content, "\n")}
	}
	rep, err := b.fire(ctx, Input{Event: ev, Session: s, Turn: p.Turn, Batch: batch}, "", true, p.Agent)
	if err != nil {
		return err
	}
	if p.Agent == nil {
		return errors.New("post-batch hooks: the payload has no agent handle")
	}
	switch rep.Merged.Outcome {
	case dsh.HookOutcomeHalt, dsh.HookOutcomeBlock, dsh.HookOutcomeDeny:
		p.Agent.Halt(rep.Merged.Reason)
		return nil
	}
	if texts := b.contexts(ev, "", rep); len(texts) > 0 {
		return p.Agent.Inject(ctx, b.message(texts))
	}
	return nil
}

// turnInterrupted fires the event at agent/turn-interrupted (Codex's Interrupt) once a
// user's cancel ended a turn. It only observes: nothing its hooks print or exit with
// changes anything (their notices are recorded).
func (b *Bridge) turnInterrupted(ctx context.Context, p *dsh.TurnInterruptedPayload) error {
	s := b.session(ctx, p.AgentID)
	in := Input{Event: b.event(dsh.TurnInterruptedEventName), Session: s, Turn: p.Turn}
	rep, err := b.fire(ctx, in, b.subjectOf(in), false, nil)
	if err != nil {
		return err
	}
	if o := rep.Merged.Outcome; o != dsh.HookOutcomePass && o != "" {
		b.log.Info("hooks at an interrupted turn cannot change anything; ignored", "event", in.Event, "outcome", string(o))
	}
	return nil
}

// observeRequest fires the event at agent/request of a dialect whose model-call events
// only observe (Codex's PreModelRequest) and passes the request on unchanged, whatever
// its hooks print (their notices are recorded).
func (b *Bridge) observeRequest(ctx context.Context, p *dsh.RequestPayload) (dsh.RequestDecision, error) {
	s := b.session(ctx, p.AgentID)
	req := p.Request
	in := Input{Event: b.event(dsh.RequestEventName), Session: s, Turn: p.Turn, Request: &req}
	rep, err := b.fire(ctx, in, b.subjectOf(in), true, p.Agent)
	if err != nil {
		return nil, err
	}
	if o := rep.Merged.Outcome; o != dsh.HookOutcomePass && o != "" {
		b.log.Info("hooks before a model request cannot change it; ignored", "event", in.Event, "outcome", string(o))
	}
	return dsh.RequestPass{}, nil
}

// subjectOf is the value of the event's matcher field in its encoded input, or "".
func (b *Bridge) subjectOf(in Input) string {
	ev, ok := b.d.Table.Lookup(in.Event)
	if !ok || ev.Matcher == "" {
		return ""
	}
	stdin, err := b.d.Encode(in)
	if err != nil {
		return ""
	}
	var fields map[string]json.RawMessage
	var subject string
	if json.Unmarshal(stdin, &fields) != nil || json.Unmarshal(fields[ev.Matcher], &subject) != nil {
		return ""
	}
	return subject
}

func (b *Bridge) sessionEnd(ctx context.Context, p *dsh.SessionEndPayload) error {
	s := b.session(ctx, p.AgentID)
	in := Input{Event: b.event(dsh.SessionEndEventName), Session: s, Reason: string(p.Reason)}
	rep, err := b.fire(ctx, in, b.d.SessionEndReason(string(p.Reason)), false, nil)
	if err != nil {
		return err
	}
	if o := rep.Merged.Outcome; o != dsh.HookOutcomePass && o != "" {
		b.log.Info("session-end hooks cannot change anything; ignored", "event", in.Event, "outcome", string(o), "reason", rep.Merged.Reason)
	}
	return nil
}
