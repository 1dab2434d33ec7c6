package dshrt

import (
	"github.com/dshkit/dsh/conformance"
)

// Mutation deliberately breaks the runtime in one observable way, for the harness's
// mutation check (conformance/mutation_test.go): a suite that passes against a mutant
// would not detect that bug.
type Mutation string

// The mutations.
const (
	// Intact is the runtime as it is.
	Intact Mutation = ""
	// GuardsIgnored registers guards where nothing consults them, as if guards could not deny.
	GuardsIgnored Mutation = "guards-ignored"
	// ContextsBeforeResults reports every plugin user/message before the tool/result events
	// of its batch, as if contexts were appended before results.
	ContextsBeforeResults Mutation = "contexts-before-results"
	// PostExecuteSkipped registers post-execute listeners where nothing consults them.
	PostExecuteSkipped Mutation = "post-execute-skipped"
	// ApprovalAlwaysAllows answers every ask with allowed-once.
	ApprovalAlwaysAllows Mutation = "approval-always-allows"
	// PreCompactIgnored registers compaction/pre-compact listeners where nothing consults
	// them, as if compaction could not be deferred, replaced or instructed.
	PreCompactIgnored Mutation = "pre-compact-ignored"
	// CompactionOff never compacts: the agent knows no context window and overflow
	// recovery is off.
	CompactionOff Mutation = "compaction-off"
)

// Mutations lists every deliberate breakage (Intact aside).
var Mutations = []Mutation{GuardsIgnored, ContextsBeforeResults, PostExecuteSkipped, ApprovalAlwaysAllows, PreCompactIgnored, CompactionOff}

// contextsFirst is the ContextsBeforeResults mutation: every user/message that enters the
// step after a tool batch (after its tool/result events and the step boundary) is moved
// before the batch's tool/call and tool/result events, as if contexts were appended before
// results.
func contextsFirst(in []conformance.LogEvent) []conformance.LogEvent {
	out := append([]conformance.LogEvent{}, in...)
	between := map[string]bool{"step/start": true, "step/end": true, "agent/inbox/spliced": true, "user/message": true}
	for i := range out {
		if out[i].Type != "user/message" {
			continue
		}
		k := i - 1
		for k >= 0 && between[out[k].Type] {
			k--
		}
		if k < 0 || out[k].Type != "tool/result" {
			continue
		}
		m := k
		for m > 0 && (out[m-1].Type == "tool/result" || out[m-1].Type == "tool/call") {
			m--
		}
		moved := out[i]
		copy(out[m+1:i+1], out[m:i])
		out[m] = moved
	}
	return out
}
