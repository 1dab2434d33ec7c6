package hookbridge

import (
	"strings"
	"sync"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/generated/hookmap"
)

// pointListener says how the bridge listens at one extension point: the table's events
// whose point column names it run there.
type pointListener struct {
	// register registers the point's listeners and returns their unregister funcs; nil
	// when the bridge has none of its own there (see dialect).
	register func(b *Bridge, r *dsh.Registrar) []func()
	// many says several events run at the point (tools/post-execute: per the results
	// column, one for failures only and one for the other results); elsewhere a second
	// event is logged and does not run.
	many bool
	// dialect says the dialect's own listeners (Behavior.Register) run the point's events
	// when the dialect has them (the model call).
	dialect bool
}

// pointListeners are the extension points the bridge listens at, by name. Adding an
// event at one of these points to a dialect's table needs no code here.
var pointListeners = map[string]pointListener{
	dsh.SessionStartEventName: {register: func(b *Bridge, r *dsh.Registrar) []func() {
		return []func(){r.OnSessionStart(b.sessionStart)}
	}},
	// The prompt's event and the one a slash command fires too (the commandsOnly column).
	dsh.PreStepEventName: {register: func(b *Bridge, r *dsh.Registrar) []func() {
		return []func(){r.OnPreStep(b.preStep)}
	}, many: true},
	// The hooks run once, in the rewrite phase, where their rewrites count; the
	// pre-execute listener replays their decision.
	dsh.PreToolEventName: {register: func(b *Bridge, r *dsh.Registrar) []func() {
		return []func(){r.OnRewriteInput(b.rewriteInput), r.OnPreTool(b.preTool)}
	}},
	dsh.ApprovalAnswerEventName: {register: func(b *Bridge, r *dsh.Registrar) []func() {
		return []func(){r.OnApprovalAnswer(b.approvalAnswer)}
	}},
	dsh.ApprovalPromptEventName: {register: func(b *Bridge, r *dsh.Registrar) []func() {
		return []func(){r.OnApprovalPrompt(b.approvalPrompt)}
	}},
	// Registered by toolListeners, with the listeners the other tool events need there.
	dsh.PostToolEventName: {register: func(*Bridge, *dsh.Registrar) []func() { return nil }, many: true},
	dsh.TurnStoppingEventName: {register: func(b *Bridge, r *dsh.Registrar) []func() {
		return []func(){r.OnTurnStopping(b.turnStopping)}
	}},
	dsh.SubagentStartEventName: {register: func(b *Bridge, r *dsh.Registrar) []func() {
		return []func(){r.OnSubagentStart(b.subagentStart)}
	}},
	dsh.SubagentStopEventName: {register: func(b *Bridge, r *dsh.Registrar) []func() {
		return []func(){r.OnSubagentStop(b.subagentStop)}
	}},
	dsh.SessionEndEventName: {register: func(b *Bridge, r *dsh.Registrar) []func() {
		return []func(){r.OnSessionEnd(b.sessionEnd)}
	}},
	dsh.AgentErrorEventName: {register: func(b *Bridge, r *dsh.Registrar) []func() {
		return []func(){r.OnAgentError(b.agentError)}
	}},
	dsh.PreCompactEventName: {register: func(b *Bridge, r *dsh.Registrar) []func() {
		return []func(){r.OnPreCompact(b.preCompact)}
	}},
	dsh.PostCompactEventName: {register: func(b *Bridge, r *dsh.Registrar) []func() {
		return []func(){r.OnPostCompact(b.postCompact)}
	}},
	dsh.SetupEventName: {register: func(b *Bridge, r *dsh.Registrar) []func() {
		return []func(){r.OnSetup(b.setup)}
	}},
	dsh.InstructionsLoadedEventName: {register: func(b *Bridge, r *dsh.Registrar) []func() {
		return []func(){r.OnInstructionsLoaded(b.instructionsLoaded)}
	}},
	dsh.PostBatchEventName: {register: func(b *Bridge, r *dsh.Registrar) []func() {
		return []func(){r.OnPostBatch(b.postBatch)}
	}},
	dsh.TurnInterruptedEventName: {register: func(b *Bridge, r *dsh.Registrar) []func() {
		return []func(){r.OnTurnInterrupted(b.turnInterrupted)}
	}},
	// A dialect with model-call listeners of its own (Gemini CLI) runs the model call's
	// events there; elsewhere the event at agent/request only observes (Codex's
	// PreModelRequest).
	dsh.RequestEventName: {dialect: true, register: func(b *Bridge, r *dsh.Registrar) []func() {
		return []func(){r.OnRequest(b.observeRequest)}
	}},
	dsh.ResponseEventName: {dialect: true},
}

// alsoKey names a row of alsoListeners: the point of the event's own row (any, when
// empty) and the further point of its also entry.
type alsoKey struct{ from, at string }

// alsoListener says how the bridge runs an event at a further point of its also column.
type alsoListener struct {
	// load, if set, runs in New for each entry that applies (before any registration).
	load func(b *Bridge, event string, a hookmap.Also)
	// register registers the entry's listeners and returns their unregister funcs.
	register func(b *Bridge, r *dsh.Registrar, event string, a hookmap.Also) []func()
}

// alsoListeners are the further points the bridge runs an event at, looked up by the
// event's point and the entry's point, then by the entry's point alone.
var alsoListeners = map[alsoKey]alsoListener{
	// An event fires at agent/status when the status is the entry's (Claude Code's
	// Notification idle_prompt).
	{at: dsh.StatusEventName}: {register: func(b *Bridge, r *dsh.Registrar, event string, a hookmap.Also) []func() {
		return []func(){r.OnStatus(b.status(event, a))}
	}},
	// The session start of a committed compaction moves to compaction/post-compact
	// (Claude Code's SessionStart[compact]): postCompact fires it (b.compact), registered
	// by the point's own row when an event of the table runs there too.
	{from: dsh.SessionStartEventName, at: dsh.PostCompactEventName}: {
		load: func(b *Bridge, event string, a hookmap.Also) { b.compact = append(b.compact, also{event, a}) },
		register: func(b *Bridge, r *dsh.Registrar, event string, _ hookmap.Also) []func() {
			if len(b.at[dsh.PostCompactEventName]) == 0 && event == b.compact[0].event {
				return []func(){r.OnPostCompact(b.postCompact)}
			}
			return nil
		},
	},
}

// alsoListenerOf returns the row of alsoListeners for an also entry a of an event at
// point, and false when the bridge has none.
func alsoListenerOf(point string, a hookmap.Also) (alsoListener, bool) {
	if l, ok := alsoListeners[alsoKey{point, a.Point}]; ok {
		return l, true
	}
	l, ok := alsoListeners[alsoKey{at: a.Point}]
	return l, ok
}

// Register registers, for each mapped event that has hooks, the listener of the extension
// point its table row names (pointListeners; plus, when the tools/pre-execute event has
// hooks, the post-execute and result listeners that deliver and clean up its contexts)
// and of the points its also column adds (alsoListeners), and returns a func that
// unregisters them all. One event runs per point, but at tools/post-execute (per the
// results column, one for failures only and one for the other results); a second one is
// logged and does not run.
func (b *Bridge) Register(r *dsh.Registrar) (unregister func()) {
	var unregs []func()
	add := func(u ...func()) { unregs = append(unregs, u...) }
	// Each event with hooks goes to the extension point its table row names (the point
	// column of spec/bridges); the listener there fires that event.
	for _, point := range b.points {
		l, ok := pointListeners[point]
		if l.dialect && b.d.Register != nil {
			continue // the dialect's own listeners, below, run every event of the model call
		}
		if evs := b.at[point]; len(evs) > 1 && !l.many {
			b.log.Warn("hook events not run: another event of the table runs at their extension point",
				"dialect", string(b.d.Name), "point", point, "runs", evs[0], "not run", strings.Join(evs[1:], ", "))
		}
		if !ok || l.register == nil {
			b.log.Warn("hook events not run: the bridge has no listener at their extension point",
				"dialect", string(b.d.Name), "point", point, "events", strings.Join(b.at[point], ", "))
			continue
		}
		add(l.register(b, r)...)
	}
	// The table's further points (its also column).
	for _, e := range b.d.Table.Events {
		if !b.has(e.Name) {
			continue
		}
		for _, a := range e.Also {
			if !b.applies(a) {
				continue
			}
			l, ok := alsoListenerOf(e.Point, a)
			if !ok {
				b.log.Warn("hook event not run at a further point: the bridge has no listener there",
					"dialect", string(b.d.Name), "event", e.Name, "point", a.Point)
				continue
			}
			add(l.register(b, r, e.Name, a)...)
		}
	}
	add(b.toolListeners(r)...)
	if b.d.Register != nil {
		add(b.d.Register(b, r)...)
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			for _, u := range unregs {
				u()
			}
		})
	}
}

// toolListeners registers the listeners the tool events share: the execute wrapper,
// post-execute and the result listener, each when an event with hooks needs it.
func (b *Bridge) toolListeners(r *dsh.Registrar) []func() {
	var unregs []func()
	pre, answer := b.event(dsh.PreToolEventName) != "", b.event(dsh.ApprovalAnswerEventName) != ""
	success, failure := b.resultEvent(true) != "", b.failureEvent() != ""
	// The execute wrapper times the calls (the success event's duration) and tells a
	// failed call that ran (the failure event) from a denied one.
	_, needsRan := b.resultEventRan(false, false)
	if failure || needsRan || (success && b.d.Durations) {
		unregs = append(unregs, r.WrapExecute(b.timeExecute))
	}
	// Post-execute delivers the pre-execute contexts and renderings too.
	if success || failure || pre || answer {
		unregs = append(unregs, r.OnPostTool(b.postTool))
	}
	if pre || answer || failure {
		unregs = append(unregs, r.OnToolResult(b.toolResult))
	}
	return unregs
}
