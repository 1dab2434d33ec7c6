package hookbridge

import (
	"context"
	"strings"

	"github.com/dshkit/dsh/bridges/hookproto"
	"github.com/dshkit/dsh/generated/dsh"
)

// compactInput is the input of a compaction event: the session, the attempt's turn
// (none for a manual compaction), the trigger and the attempt as owner.
func (b *Bridge) compactInput(ctx context.Context, event, agentID, compactionID string, origin dsh.CompactionOrigin, turn *int) Input {
	s := b.session(ctx, agentID)
	in := Input{Event: event, Session: s, Trigger: string(origin), Maintenance: compactionID}
	in.Session.Turn, in.Session.TurnOpen = 0, false
	if turn != nil {
		in.Turn, in.Session.Turn, in.Session.TurnOpen = *turn, *turn, true
	} else {
		// A manual compaction is its own prompt (Claude Code gives /compact a prompt_id):
		// every hook of the attempt gets the same id.
		in.Session.PromptID = hookproto.UUIDFor(compactionID)
	}
	return in
}

// preCompact maps PreCompact (docs/design/REWRITE-COMPACTION.md#23-mapping-claude-code-and-codex-hooks), matched on the origin (manual,
// auto): a block (exit 2, decision "block") defers the compaction, plain stdout on exit 0
// becomes summarizer instructions, a halt (Codex continue:false) defers it and halts the
// open turn. A dialect whose PreCompact only observes (Codex) says so in its table
// (spec/bridges/codex.cue): no rule blocks and exit 2 is an error, so nothing defers.
func (b *Bridge) preCompact(ctx context.Context, p *dsh.PreCompactPayload) (dsh.PreCompactDecision, error) {
	in := b.compactInput(ctx, b.event(dsh.PreCompactEventName), p.AgentID, p.CompactionID, p.Origin, p.Turn)
	in.CustomInstructions = p.UserInstructions
	rep, err := b.fire(ctx, in, string(p.Origin), p.Turn != nil, p.Agent)
	if err != nil {
		return nil, err
	}
	switch rep.Merged.Outcome {
	case dsh.HookOutcomeHalt:
		if p.Agent != nil && p.Turn != nil {
			p.Agent.Halt(rep.Merged.Reason)
		}
		return dsh.PreCompactDefer{Reason: rep.Merged.Reason}, nil
	case dsh.HookOutcomeBlock, dsh.HookOutcomeDeny:
		return dsh.PreCompactDefer{Reason: rep.Merged.Reason}, nil
	}
	var instructions []string
	for _, c := range rep.Merged.Contexts {
		if c = strings.TrimSpace(c); c != "" {
			instructions = append(instructions, c)
		}
	}
	return dsh.PreCompactProceed{Instructions: instructions}, nil
}

// postCompact maps PostCompact: the summary goes in; contexts (Claude Code
// hookSpecificOutput.additionalContext) are appended after the checkpoint; a halt (Codex
// continue:false) halts the open turn. The runtime drops contexts of a failed attempt.
//
// For a committed compaction it also fires the session start that the table's also
// column moves here (b.compact; Claude Code's SessionStart[compact], which then does not
// run at agent/session-start): before the post-compact event, as the entry's before
// column says, its contexts injected first; otherwise after it, its contexts appended
// after the event's.
func (b *Bridge) postCompact(ctx context.Context, p *dsh.PostCompactPayload) (dsh.PostCompactDecision, error) {
	var later []also
	if p.Outcome == dsh.CompactionOutcomeCommitted && len(b.compact) > 0 {
		b.mu.Lock()
		if b.early == nil {
			b.early = map[string]bool{}
		}
		b.early[p.CompactionID] = true
		b.mu.Unlock()
		for _, a := range b.compact {
			if a.Before == "" {
				later = append(later, a)
				continue
			}
			if err := b.sessionStartCompact(ctx, a.event, a.Subject, p.AgentID, p.CompactionID, p.Turn, p.Agent); err != nil {
				b.log.Warn("session-start hooks of a compaction, run before the post-compact hooks", "event", a.event, "compactionId", p.CompactionID, "err", err)
			}
		}
	}
	var msgs []dsh.UserMessage
	if ev := b.event(dsh.PostCompactEventName); ev != "" {
		in := b.compactInput(ctx, ev, p.AgentID, p.CompactionID, p.Origin, p.Turn)
		if p.Summary != nil {
			in.CompactSummary = *p.Summary
		}
		rep, err := b.fire(ctx, in, string(p.Origin), p.Turn != nil, p.Agent)
		if err != nil {
			return nil, err
		}
		if rep.Merged.Outcome == dsh.HookOutcomeHalt && p.Agent != nil && p.Turn != nil {
			p.Agent.Halt(rep.Merged.Reason)
		}
		if len(rep.Merged.Contexts) > 0 {
			msgs = append(msgs, b.message(b.contexts(in.Event, string(p.Origin), rep)))
		}
	}
	for _, a := range later {
		in := b.compactContext(ctx, a.event, a.Subject, p.AgentID, p.CompactionID, p.Turn)
		msg, err := b.sessionStartRun(ctx, in, p.Turn, p.Agent)
		if err != nil {
			b.log.Warn("session-start hooks of a compaction, run after the post-compact hooks", "event", a.event, "compactionId", p.CompactionID, "err", err)
		} else if msg != nil {
			msgs = append(msgs, *msg)
		}
	}
	if len(msgs) == 0 {
		return dsh.PostCompactAccept{}, nil
	}
	return dsh.PostCompactAppend{Contexts: msgs}, nil
}
