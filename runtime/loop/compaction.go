package loop

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/llm"
	"github.com/dshkit/dsh/runtime/session"
)

// Compaction (docs/design/REWRITE-COMPACTION.md#22-design-a-compaction-phase-with-two-typed-points) is a loop phase of its own: the pressure check
// runs at every step boundary, after the previous step is durable and before the step's
// batch is claimed (for a turn's first step, whose claim is made when the turn starts, the
// contexts compaction adds are claimed right after, before pre-step); overflow recovery
// runs when a request fails with CONTEXT_WINDOW_EXCEEDED; Agent.Compact runs it while the
// agent is idle. One attempt:
//
//	measure → select the range → compaction/pre-compact (fold) → [Defer: compaction/skipped]
//	→ compaction/start → summary (one model call, or a plugin's Replace) → shrink check →
//	compaction/summary, compaction/checkpoint, compaction/end{committed}
//	  (or compaction/end{failed}, the history unchanged)
//	→ compaction/post-compact (fold) → agent/session-start{compact} after a commit.

// CheckpointPlugin is the plugin name of the checkpoint message's source.
const CheckpointPlugin = "compaction"

// maxCompactionContexts caps the contexts post-compact listeners add at one attempt.
const maxCompactionContexts = 16

// minPressureShadow is the smallest range, in estimated tokens, a pressure attempt
// summarizes: a checkpoint costs about 30 tokens by itself.
const minPressureShadow = 64

// maxInstructionLen caps one pre-compact instruction, in bytes.
const maxInstructionLen = 4000

// summaryDirective is the trailing instruction of the summarizer request.
const summaryDirective = "Your context window is being compacted: the conversation above will be replaced by your summary of it. " +
	"Write that summary now. Keep everything needed to continue the work without the conversation: the user's goals and " +
	"explicit instructions, decisions made and why, facts learned, the files, commands and names involved, what was done, " +
	"what failed, and what remains to do. Reply with the summary only, in plain text, without calling tools."

// checkpointPreamble opens the checkpoint message.
const checkpointPreamble = "This session continues an earlier conversation that was compacted. Summary of the earlier part:\n\n"

// Errors of Agent.Compact.
var (
	// ErrBusy is returned by Compact while the agent runs a turn or another compaction.
	ErrBusy = errors.New("loop: the agent is busy; compact while it is idle")
	// ErrNothingToCompact is returned by Compact when the history holds no range worth
	// summarizing (fewer than two whole messages before the newest one).
	ErrNothingToCompact = errors.New("loop: nothing to compact")
)

// DeferredError is the error of a manual compaction a compaction/pre-compact listener
// deferred.
type DeferredError struct {
	// Listener is the registered name of the listener that deferred.
	Listener string
	// Reason is its reason.
	Reason string
}

// Error names the listener and its reason.
func (e *DeferredError) Error() string {
	return fmt.Sprintf("loop: compaction deferred by %s: %s", e.Listener, e.Reason)
}

// FailedError is the error of a manual compaction whose attempt ended failed.
type FailedError struct {
	// CompactionID identifies the attempt.
	CompactionID string
	// Reason is the failure recorded in compaction/end.
	Reason string
}

// Error describes the failure.
func (e *FailedError) Error() string {
	return fmt.Sprintf("loop: compaction %s failed: %s", e.CompactionID, e.Reason)
}

// CompactResult is what Agent.Compact did.
type CompactResult struct {
	// CompactionID identifies the attempt.
	CompactionID string
	// Outcome is how it ended.
	Outcome dsh.CompactionOutcome
	// TokensBefore is the measured size of the next request before it.
	TokensBefore int
	// TokensAfter is the projected size after it.
	TokensAfter int
	// Summary is the checkpoint text.
	Summary string
}

// Compact compacts the idle agent's history now (the trigger "manual"): instructions,
// if any, are added to the summarizer's directive (as /compact's arguments are). It runs
// the whole attempt before returning; agent/status stays idle (maintenance). Prompts sent
// meanwhile are queued and start once the attempt is flushed. It returns ErrBusy while a
// turn runs, ErrNothingToCompact for a history too short, a *DeferredError when a
// pre-compact listener deferred, a *FailedError when the attempt failed (the history is
// then unchanged), or the error of a failed append.
func (a *Agent) Compact(ctx context.Context, instructions string) (CompactResult, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	a.mu.Lock()
	switch {
	case a.closed:
		a.mu.Unlock()
		return CompactResult{}, ErrClosed
	case a.running || a.maint:
		a.mu.Unlock()
		return CompactResult{}, ErrBusy
	}
	a.maint, a.maintWake = true, false
	a.mu.Unlock()
	defer func() {
		a.mu.Lock()
		a.maint = false
		wake := a.maintWake
		a.maintWake = false
		a.mu.Unlock()
		if wake {
			a.wake()
		}
	}()
	res := a.compact(withScope(ctx, scope{agent: a}), attempt{trigger: dsh.CompactionTriggerManual, instructions: instructions})
	out := CompactResult{CompactionID: res.id, Outcome: res.outcome, TokensBefore: res.before, TokensAfter: res.after, Summary: res.summary}
	switch {
	case res.err != nil:
		return out, res.err
	case !res.selected:
		return out, ErrNothingToCompact
	case res.deferredBy != "":
		return out, &DeferredError{Listener: res.deferredBy, Reason: res.deferReason}
	case res.outcome == dsh.CompactionOutcomeFailed:
		return out, &FailedError{CompactionID: res.id, Reason: res.failure}
	}
	return out, nil
}

// attempt is what starts a compaction attempt.
type attempt struct {
	trigger      dsh.CompactionTrigger
	turn         *int
	instructions string            // the user's (/compact arguments)
	pending      []dsh.UserMessage // claimed for the next step, not yet in the history
}

// attemptResult is what one attempt came to.
type attemptResult struct {
	selected    bool // measured over the threshold (pressure) and a range was selected
	id          string
	deferredBy  string // the listener whose Defer stood
	deferReason string
	bracketed   bool // compaction/start was written
	outcome     dsh.CompactionOutcome
	failure     string
	summary     string
	before      int
	after       int
	contexts    int   // contexts the attempt added to the next-step inbox
	err         error // a failed append: fatal to the turn
}

// window returns the context window of the model the agent calls (0: unknown).
func (a *Agent) window(cfg dsh.LLMCallConfig) int {
	cc := a.cfg.Compaction
	if w, ok := cc.Windows[cfg.Provider+"/"+cfg.Model]; ok {
		return w
	}
	if w, ok := cc.Windows[cfg.Model]; ok {
		return w
	}
	return cc.ContextWindow
}

// measure returns the measured tokens of the next request: the provider's reported usage
// of the last response plus the estimate of what was appended since, or the estimate of
// the whole request when no usage applies; pending messages are added.
func (a *Agent) measure(prefix int, history []llm.Message, pending []dsh.UserMessage) int {
	n := 0
	if at := a.req.usageAt; at >= 0 && at <= len(history) {
		n = a.req.usage + llm.EstimateMessages(history[at:])
	} else {
		n = prefix + llm.EstimateMessages(history)
	}
	return n + pendingTokens(pending)
}

// pendingTokens is the estimate of messages not yet in the history.
func pendingTokens(pending []dsh.UserMessage) int {
	n := 0
	for _, m := range pending {
		n += llm.EstimateMessage(llm.Message{Role: llm.RoleUser, Content: m.Content})
	}
	return n
}

// isToolResult reports whether m is a tool-result message, which cannot start a retained
// tail (its call would be shadowed).
func isToolResult(m llm.Message) bool {
	if m.Role != llm.RoleUser {
		return false
	}
	for _, b := range m.Content {
		//dshvet:partial only a tool result makes a message part of a call unit
		switch b.(type) {
		case dsh.ToolResultBlock:
			return true
		}
	}
	return false
}

// selectCut returns the end of the head range to shadow: the smallest unit boundary k
// (history[k] not a tool result) such that history[k:] costs at most budget tokens,
// keeping at least the newest unit. budget < 0 keeps the newest unit only. It returns 0
// when no range of two messages or more (or one message that is not a checkpoint) can be
// shadowed.
func selectCut(history []llm.Message, budget int) int {
	last := len(history)
	for last > 0 && isToolResult(history[last-1]) {
		last--
	}
	if last > 0 {
		last-- // the newest unit starts at last (an assistant message and its results, or a message)
	}
	if last <= 0 {
		return 0
	}
	k := last
	if budget >= 0 {
		tail := llm.EstimateMessages(history[last:])
		for i := last - 1; i > 0; i-- {
			tail += llm.EstimateMessage(history[i])
			if tail > budget {
				break
			}
			if !isToolResult(history[i]) {
				k = i
			}
		}
	}
	if k == 1 && isCheckpoint(history[0]) {
		return 0 // only the previous checkpoint: nothing new to summarize
	}
	return k
}

// isCheckpoint reports whether m is a checkpoint message.
func isCheckpoint(m llm.Message) bool {
	s, ok := m.Source.(dsh.SourcePlugin)
	return ok && s.Plugin == CheckpointPlugin && s.Form == dsh.PluginFormCheckpoint
}

// origin is the hook-matcher origin of a trigger.
func origin(t dsh.CompactionTrigger) dsh.CompactionOrigin {
	if t == dsh.CompactionTriggerManual || t == dsh.CompactionTriggerRegion {
		return dsh.CompactionOriginManual
	}
	return dsh.CompactionOriginAuto
}

// pluginOf is the plugin part of a registered listener name ("<plugin>#<n>").
func pluginOf(listener string) string {
	if i := strings.LastIndexByte(listener, '#'); i > 0 {
		return listener[:i]
	}
	return listener
}

// compact runs one compaction attempt (see the comment at the top of the file).
func (a *Agent) compact(ctx context.Context, at attempt) (res attemptResult) {
	cfg := a.seed()
	if c := a.req.context; c != nil {
		if cfg.Provider == "" {
			cfg.Provider = c.Provider
		}
		if cfg.Model == "" {
			cfg.Model = c.Model
		}
	}
	window := a.window(cfg)
	if at.trigger == dsh.CompactionTriggerPressure && window <= 0 {
		return res // no window known: nothing to measure against (and nothing to pay)
	}
	history, err := a.req.messages(a.log)
	if err != nil {
		res.err = err
		return res
	}
	system := ""
	if cfg.System != nil {
		system = *cfg.System
	}
	specs, _, _ := a.toolSpecs(history)
	prefix := llm.EstimatePrefix(system, specs)
	cc := a.cfg.Compaction
	measured := a.measure(prefix, history, at.pending)
	threshold := int(float64(window) * cc.ThresholdRatio)
	res.before, res.after = measured, measured
	if at.trigger == dsh.CompactionTriggerPressure && measured < threshold {
		return res
	}
	budget := -1
	if window > 0 && at.trigger != dsh.CompactionTriggerOverflow {
		budget = int(float64(window) * cc.RetainRatio)
	}
	k := selectCut(history, budget)
	if k == 0 {
		return res
	}
	shadowed := llm.EstimateMessages(history[:k])
	if at.trigger == dsh.CompactionTriggerPressure && shadowed < minPressureShadow {
		// Not worth a model call at every boundary: what presses is the prefix or the
		// newest messages, which a checkpoint cannot shrink.
		return res
	}
	res.selected = true
	res.id = "cmp_" + rand.Text()
	rng := dsh.CompactionRange{Start: 0, End: k, ShadowedSeqs: make([]int, k)}
	for i, s := range a.req.seqs[:k] {
		rng.ShadowedSeqs[i] = int(s)
	}
	var userInstr *string
	if at.instructions != "" {
		v := at.instructions
		userInstr = &v
	}
	p := &dsh.PreCompactPayload{
		Agent: a, AgentID: a.id, CompactionID: res.id, Trigger: at.trigger, Origin: origin(at.trigger), Turn: at.turn,
		Phases:       []dsh.CompactionPhase{dsh.CompactionPhaseSummarize},
		PlannedRange: rng, ShadowedTokens: shadowed, MeasuredTokens: measured, ContextWindow: window,
		Threshold: threshold, RetainedTokens: measured - shadowed - prefix, Ordinal: a.req.attempts + 1,
		UserInstructions: userInstr, ConsecutiveDefers: a.req.defers,
	}
	if p.RetainedTokens < 0 {
		p.RetainedTokens = 0
	}
	fold := a.preCompact(ctx, p)

	// Defer (docs/design/REWRITE-COMPACTION.md#22-design-a-compaction-phase-with-two-typed-points): pressure skips until the cap, overflow ends the
	// turn with the original failure, manual fails naming the listener.
	if fold.deferBy != "" {
		skip := dsh.CompactionSkipped{CompactionID: res.id, Trigger: at.trigger, Turn: at.turn, By: fold.deferBy, Reason: fold.deferReason, Consecutive: 1}
		if at.trigger == dsh.CompactionTriggerPressure {
			skip.Consecutive = a.req.defers + 1
			if c := cc.MaxConsecutiveDefers; c > 0 && skip.Consecutive > c {
				overridden := true
				skip.Overridden = &overridden
			}
		}
		if _, err := a.log.Append(a.base, skip); err != nil {
			res.err = err
			return res
		}
		// a.req.defers follows compaction/skipped when the log is next folded (request.go).
		if skip.Overridden == nil {
			res.deferredBy, res.deferReason = fold.deferBy, fold.deferReason
			return res
		}
		a.logger.Warn("loop: compaction defer overridden by the defer cap", "compactionId", res.id, "by", fold.deferBy)
	}

	start := dsh.CompactionStart{CompactionID: res.id, Trigger: at.trigger, Origin: origin(at.trigger), Turn: at.turn, Range: rng}
	if len(fold.instructions) > 0 {
		start.Instructions = make([]dsh.CompactionInstruction, len(fold.instructions))
		for i, in := range fold.instructions {
			sum := sha256.Sum256([]byte(in.text))
			start.Instructions[i] = dsh.CompactionInstruction{By: in.by, Digest: hex.EncodeToString(sum[:])}
		}
	}
	if _, err := a.log.Append(a.base, start); err != nil {
		res.err = err
		return res
	}
	// a.req.attempts and a.req.defers follow compaction/start when the log is next folded
	// (request.go), as on resume: counting here too made a live agent's ordinals 1, 3, 5.
	res.bracketed = true

	summary := dsh.CompactionSummary{CompactionID: res.id, ShadowedRange: rng, ShadowedTokenCount: shadowed}
	var text string
	if fold.replaceBy != "" {
		text = strings.TrimSpace(fold.replace)
		summary.Provider, summary.Model = "plugin:"+pluginOf(fold.replaceBy), fold.replaceBy
		if text == "" {
			err = fmt.Errorf("the summary %s supplied is empty", fold.replaceBy)
		}
	} else {
		text, summary.Usage, err = a.summarize(ctx, cfg, system, specs, history[:k], at.instructions, fold.instructions)
		summary.Provider, summary.Model = cfg.Provider, cfg.Model
		if cc.SummaryMaxTokens > 0 {
			v := cc.SummaryMaxTokens
			summary.MaxTokens = &v
		} else if cfg.MaxTokens != nil {
			v := *cfg.MaxTokens
			summary.MaxTokens = &v
		}
	}
	var checkpoint dsh.UserMessage
	if err == nil {
		checkpoint = checkpointMessage(text)
		if ct := llm.EstimateMessage(llm.Message{Content: checkpoint.Content}); ct >= shadowed {
			err = fmt.Errorf("the summary does not shrink the history (%d tokens for a range of %d)", ct, shadowed)
		}
	}
	var summarySeq, checkpointSeq *int
	if err == nil {
		summary.Summary = text
		ev, aerr := a.log.Append(a.base, summary)
		if aerr != nil {
			res.err = aerr
			return res
		}
		s := int(ev.Seq)
		summarySeq = &s
		// The provider's usage no longer applies after the checkpoint: project by the
		// estimator.
		after := prefix + llm.EstimateMessage(llm.Message{Content: checkpoint.Content}) + llm.EstimateMessages(history[k:]) +
			pendingTokens(at.pending)
		ev, aerr = a.log.Append(a.base, dsh.CompactionCheckpoint{CompactionID: res.id, Message: checkpoint, Replace: rng, TokensAfter: after},
			session.WithSources(int64(s)))
		if aerr != nil {
			res.err = aerr
			return res
		}
		c := int(ev.Seq)
		checkpointSeq = &c
		res.outcome, res.summary, res.after = dsh.CompactionOutcomeCommitted, text, after
	} else {
		res.outcome, res.failure = dsh.CompactionOutcomeFailed, err.Error()
		a.logger.Warn("loop: compaction failed", "compactionId", res.id, "err", err)
	}
	end := dsh.CompactionEnd{CompactionID: res.id, Outcome: res.outcome, TokensBefore: res.before, TokensAfter: res.after}
	if res.failure != "" {
		f := res.failure
		end.Error = &f
	}
	if _, err := a.log.Append(a.base, end); err != nil {
		res.err = err
		return res
	}
	if res.outcome == dsh.CompactionOutcomeCommitted {
		// Fold the checkpoint now, so that the next measure sees the compacted history.
		if _, err := a.req.messages(a.log); err != nil {
			res.err = err
			return res
		}
	}

	// Post-compact, then session-start{compact}: their contexts go to the next-step inbox,
	// in that order, and are claimed with the next step.
	post := &dsh.PostCompactPayload{
		Agent: a, AgentID: a.id, CompactionID: res.id, Trigger: at.trigger, Origin: origin(at.trigger), Turn: at.turn,
		Outcome: res.outcome, CheckpointSeq: checkpointSeq, SummarySeq: summarySeq, ShadowedSeqs: rng.ShadowedSeqs,
		TokensBefore: res.before, TokensAfter: res.after, ReplaceGeneration: a.req.generation,
	}
	if res.failure != "" {
		f := res.failure
		post.Error = &f
	}
	if res.summary != "" {
		s := res.summary
		post.Summary = &s
	}
	// The contexts are counted by the inbox: a post-compact listener may also Inject (the
	// Claude Code bridge runs SessionStart[compact] hooks there, before PostCompact's, as
	// the engine does).
	_, stepsBefore := a.pending()
	contexts := a.postCompact(ctx, post)
	if len(contexts) > 0 {
		if err := a.insert(a.base, dsh.InboxTargetNextStep, contexts); err != nil {
			res.err = err
			return res
		}
	}
	if res.outcome == dsh.CompactionOutcomeCommitted {
		id := res.id
		a.sessionStart(ctx, dsh.SessionStartPayload{Source: dsh.SessionStartSourceCompact, CompactionID: &id, Turn: at.turn}, cc.ListenerTimeout)
		if origin(at.trigger) == dsh.CompactionOriginAuto {
			// An automatic compaction loads the instruction files again: the files read as
			// the session started with reason compact, their imports as before.
			for _, f := range a.cfg.Instructions {
				if f.Reason == dsh.InstructionReasonSessionStart {
					f.Reason = dsh.InstructionReasonCompact
				}
				a.instructionsLoaded(ctx, f, at.turn)
			}
		}
	}
	if _, stepsAfter := a.pending(); stepsAfter > stepsBefore {
		res.contexts += stepsAfter - stepsBefore
	}
	return res
}

// instruction is one pre-compact instruction and who gave it.
type instruction struct{ by, text string }

// preFold is the fold of the compaction/pre-compact votes.
type preFold struct {
	deferBy, deferReason string
	replaceBy, replace   string
	instructions         []instruction
}

// preCompact runs the compaction/pre-compact listeners and folds their votes: Defer (the
// first) > Replace (the first) > Proceed (instructions concatenated). A failing or
// overrunning listener counts as Proceed and is recorded.
func (a *Agent) preCompact(ctx context.Context, p *dsh.PreCompactPayload) preFold {
	var f preFold
	if !a.reg.Listens(dsh.PreCompactEventName) {
		return f
	}
	for _, v := range a.reg.RunPreCompact(ctx, p, a.cfg.Compaction.ListenerTimeout) {
		if a.recordVote(p.CompactionID, dsh.PreCompactEventName, v.Listener, v.Err, v.Overran) {
			continue
		}
		switch d := v.Decision.(type) {
		case dsh.PreCompactDefer:
			if f.deferBy == "" {
				f.deferBy, f.deferReason = v.Listener, d.Reason
			}
		case dsh.PreCompactReplace:
			if f.replaceBy == "" {
				f.replaceBy, f.replace = v.Listener, d.Summary
			}
		case dsh.PreCompactProceed:
			f.instructions = appendInstructions(f.instructions, v.Listener, d.Instructions)
		}
	}
	if f.deferBy != "" {
		f.replaceBy, f.replace, f.instructions = "", "", nil // Defer wins; the rest is dropped
	} else if f.replaceBy != "" {
		f.instructions = nil
	}
	return f
}

// appendInstructions appends the non-empty instructions of by, each capped.
func appendInstructions(out []instruction, by string, texts []string) []instruction {
	for _, t := range texts {
		t = strings.TrimSpace(t)
		if t == "" {
			continue
		}
		if len(t) > maxInstructionLen {
			t = strings.ToValidUTF8(t[:maxInstructionLen], "")
		}
		out = append(out, instruction{by: by, text: t})
	}
	return out
}

// postCompact runs the compaction/post-compact listeners and returns the contexts their
// Appends add (none when the attempt failed), sourced and capped.
func (a *Agent) postCompact(ctx context.Context, p *dsh.PostCompactPayload) []dsh.UserMessage {
	if !a.reg.Listens(dsh.PostCompactEventName) {
		return nil
	}
	var out []dsh.UserMessage
	for _, v := range a.reg.RunPostCompact(ctx, p, a.cfg.Compaction.ListenerTimeout) {
		if a.recordVote(p.CompactionID, dsh.PostCompactEventName, v.Listener, v.Err, v.Overran) {
			continue
		}
		var msgs []dsh.UserMessage
		//dshvet:partial only an append carries contexts; the other decisions add none
		switch d := v.Decision.(type) {
		case dsh.PostCompactAppend:
			msgs = d.Contexts
		}
		if len(msgs) == 0 {
			continue
		}
		if p.Outcome == dsh.CompactionOutcomeFailed {
			a.logger.Warn("loop: post-compact contexts ignored: the compaction failed", "compactionId", p.CompactionID, "listener", v.Listener)
			continue
		}
		for _, m := range msgs {
			if len(out) == maxCompactionContexts {
				a.logger.Warn("loop: post-compact contexts over the cap dropped", "compactionId", p.CompactionID, "listener", v.Listener)
				break
			}
			m, err := prepareMessage(m, dsh.SourcePlugin{Plugin: pluginOf(v.Listener)})
			if err != nil {
				a.logger.Warn("loop: post-compact context dropped", "compactionId", p.CompactionID, "listener", v.Listener, "err", err)
				continue
			}
			out = append(out, m)
		}
	}
	return out
}

// recordVote records a failed or overrunning compaction listener as
// compaction/listener-failed and reports whether the vote failed.
func (a *Agent) recordVote(id, point, listener string, err error, overran bool) bool {
	if err == nil && !overran {
		return false
	}
	rec := dsh.CompactionListenerFailed{CompactionID: id, Point: point, Listener: listener}
	if overran {
		t := true
		rec.Overran = &t
		rec.Error = fmt.Sprintf("overran its bound of %d ms", a.cfg.Compaction.ListenerTimeout.Milliseconds())
	} else {
		rec.Error = failureText(err)
	}
	a.logger.Warn("loop: compaction listener failed; it counts as the default", "point", point, "listener", listener, "err", rec.Error)
	if _, err := a.log.Append(a.base, rec); err != nil {
		a.logger.Error("loop: cannot record a compaction listener failure", "listener", listener, "err", err)
	}
	return true
}

// summarize makes the summarizer call: the replayed prefix (system prompt, tools and the
// shadowed messages) and a trailing directive with the instructions, and returns the
// response's text.
func (a *Agent) summarize(ctx context.Context, cfg dsh.LLMCallConfig, system string, specs []llm.ToolSpec,
	shadowed []llm.Message, user string, plugins []instruction) (string, *dsh.Usage, error) {
	if cfg.Provider == "" || cfg.Model == "" {
		return "", nil, ErrNoModel
	}
	var b strings.Builder
	b.WriteString(summaryDirective)
	if user != "" {
		b.WriteString("\n\nInstructions from the user for this summary:\n")
		b.WriteString(user)
	}
	if len(plugins) > 0 {
		b.WriteString("\n\nAdditional instructions for this summary:")
		for _, in := range plugins {
			b.WriteString("\n- ")
			b.WriteString(in.text)
		}
	}
	msgs := make([]llm.Message, 0, len(shadowed)+1)
	msgs = append(append(msgs, shadowed...), llm.Message{Role: llm.RoleUser, Content: []dsh.ContentBlock{dsh.TextBlock{Text: b.String()}}})
	c := cloneConfig(cfg)
	if n := a.cfg.Compaction.SummaryMaxTokens; n > 0 {
		c.MaxTokens = &n
	}
	req := llm.Request{Config: c, System: system, Messages: msgs, Tools: specs}
	resp, err := llm.Collect(a.model.Stream(ctx, req))
	if err != nil {
		f := llm.AsFailure(err)
		return "", nil, fmt.Errorf("the summarizer call failed: %s: %s", f.Code, f.Message)
	}
	switch resp.Finish.Reason {
	case dsh.FinishReasonError, dsh.FinishReasonAborted:
		f := dsh.LLMFailure{Message: string(resp.Finish.Reason), Code: llm.CodeUnknown}
		if resp.Finish.Error != nil {
			f = *resp.Finish.Error
		}
		return "", resp.Usage, fmt.Errorf("the summarizer call failed: %s: %s", f.Code, f.Message)
	}
	text := strings.TrimSpace(resp.Text)
	if text == "" {
		return "", resp.Usage, errors.New("the summarizer returned no text")
	}
	return text, resp.Usage, nil
}

// checkpointMessage is the checkpoint user message holding summary.
func checkpointMessage(summary string) dsh.UserMessage {
	return dsh.UserMessage{
		ID: newMessageID(), Role: dsh.UserMessageRoleUser,
		Content: []dsh.ContentBlock{dsh.TextBlock{Text: checkpointPreamble + summary}},
		Source:  dsh.SourcePlugin{Plugin: CheckpointPlugin, Form: dsh.PluginFormCheckpoint},
	}
}

// pressure runs the pressure check at a step boundary of turn t (pending: the batch
// claimed for the step, not yet in the history). It reports the number of contexts the
// attempt added to the next-step inbox; err is a failed append.
func (a *Agent) pressure(t *turnRun, pending []dsh.UserMessage) (int, error) {
	if cc := a.cfg.Compaction; cc.Disabled || (cc.ContextWindow == 0 && len(cc.Windows) == 0) {
		return 0, nil
	}
	turn := t.n
	res := a.compact(withScope(t.ctx, scope{agent: a, turn: t.n}), attempt{trigger: dsh.CompactionTriggerPressure, turn: &turn, pending: pending})
	return res.contexts, res.err
}

// overflow runs overflow recovery for a request of turn t that failed with
// CONTEXT_WINDOW_EXCEEDED. retry reports a committed compaction (the request is sent
// again); deferred reports a pre-compact Defer (the turn ends with the original failure).
func (a *Agent) overflow(ctx context.Context, t *turnRun) (retry, deferred bool, err error) {
	turn := t.n
	res := a.compact(ctx, attempt{trigger: dsh.CompactionTriggerOverflow, turn: &turn})
	return res.outcome == dsh.CompactionOutcomeCommitted, res.deferredBy != "", res.err
}
