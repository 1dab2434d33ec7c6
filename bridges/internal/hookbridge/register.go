package hookbridge

import (
	"strings"
	"sync"

	"github.com/dshkit/dsh/generated/dsh"
)

// Register registers, for each mapped event that has hooks, the listener of the extension
// point its table row names (plus, when the tools/pre-execute event has hooks, the
// post-execute and result listeners that deliver and clean up its contexts) and of the
// points its also column adds, and returns a func that unregisters them all. One event
// runs per point, but at tools/post-execute (per the results column, one for failures
// only and one for the other results); a second one is logged and does not run.
func (b *Bridge) Register(r *dsh.Registrar) (unregister func()) {
	var unregs []func()
	add := func(u ...func()) { unregs = append(unregs, u...) }
	// Each event with hooks goes to the extension point its table row names (the point
	// column of spec/bridges); the listener there fires that event.
	for _, point := range b.points {
		if b.d.Register != nil && (point == dsh.RequestEventName || point == dsh.ResponseEventName) {
			continue // the dialect's own listeners, below, run every event of the model call
		}
		if evs := b.at[point]; len(evs) > 1 && point != dsh.PostToolEventName {
			b.log.Warn("hook events not run: another event of the table runs at their extension point",
				"dialect", string(b.d.Name), "point", point, "runs", evs[0], "not run", strings.Join(evs[1:], ", "))
		}
		switch point {
		case dsh.SessionStartEventName:
			add(r.OnSessionStart(b.sessionStart))
		case dsh.PreStepEventName:
			add(r.OnPreStep(b.preStep))
		case dsh.PreToolEventName:
			// The hooks run once, in the rewrite phase, where their rewrites count; the
			// pre-execute listener replays their decision.
			add(r.OnRewriteInput(b.rewriteInput), r.OnPreTool(b.preTool))
		case dsh.ApprovalAnswerEventName:
			add(r.OnApprovalAnswer(b.approvalAnswer))
		case dsh.ApprovalPromptEventName:
			add(r.OnApprovalPrompt(b.approvalPrompt))
		case dsh.PostToolEventName:
			// Below, with the listeners the other tool events need there.
		case dsh.TurnStoppingEventName:
			add(r.OnTurnStopping(b.turnStopping))
		case dsh.SessionEndEventName:
			add(r.OnSessionEnd(b.sessionEnd))
		case dsh.PreCompactEventName:
			add(r.OnPreCompact(b.preCompact))
		case dsh.PostCompactEventName:
			add(r.OnPostCompact(b.postCompact))
		default:
			b.log.Warn("hook events not run: the bridge has no listener at their extension point",
				"dialect", string(b.d.Name), "point", point, "events", strings.Join(b.at[point], ", "))
		}
	}
	// The table's further points (its also column).
	for _, e := range b.d.Table.Events {
		if !b.has(e.Name) {
			continue
		}
		for _, a := range e.Also {
			switch {
			case !b.applies(a):
			case a.Point == dsh.StatusEventName:
				add(r.OnStatus(b.status(e.Name, a)))
			case a.Point == dsh.PostCompactEventName && e.Point == dsh.SessionStartEventName:
				// postCompact fires it (b.compact), registered above when an event of the
				// table runs there too.
				if len(b.at[dsh.PostCompactEventName]) == 0 && e.Name == b.compact[0].event {
					add(r.OnPostCompact(b.postCompact))
				}
			default:
				b.log.Warn("hook event not run at a further point: the bridge has no listener there",
					"dialect", string(b.d.Name), "event", e.Name, "point", a.Point)
			}
		}
	}
	pre, answer := b.event(dsh.PreToolEventName) != "", b.event(dsh.ApprovalAnswerEventName) != ""
	success, failure := b.resultEvent(true) != "", b.failureEvent() != ""
	// The execute wrapper times the calls (the success event's duration) and tells a
	// failed call that ran (the failure event) from a denied one.
	if failure || (success && b.d.Durations) {
		add(r.WrapExecute(b.timeExecute))
	}
	// Post-execute delivers the pre-execute contexts and renderings too.
	if success || failure || pre || answer {
		add(r.OnPostTool(b.postTool))
	}
	if pre || answer || failure {
		add(r.OnToolResult(b.toolResult))
	}
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
