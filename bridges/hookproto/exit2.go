package hookproto

import (
	"encoding/json"
	"strings"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/generated/hookmap"
)

// exit2JSON applies JSON stdout on exit 2 (Bridge.Exit2ReadsJSON): its contexts join the
// verdict, and a block or deny with a reason supplies the reason; the outcome stays the
// exit-2 block, unless the JSON halts (continue:false): then the turn ends before the
// call (measured in Claude Code 2.1.328). Stdout that is not a decodable output object
// is ignored.
func exit2JSON(v *Verdict, b *hookmap.Bridge, ev *hookmap.Event, stdout []byte) {
	out := strings.TrimSpace(strings.ToValidUTF8(string(stdout), "\uFFFD"))
	if out == "" || !looksJSON(out, b.JSONPrefixes) || ev.DecodeOutput == nil {
		return
	}
	if _, err := ev.DecodeOutput([]byte(out)); err != nil {
		return
	}
	var obj map[string]any
	dec := json.NewDecoder(strings.NewReader(out))
	dec.UseNumber()
	if err := dec.Decode(&obj); err != nil || obj == nil {
		return
	}
	var j Verdict
	evaluate(&j, ev, obj)
	v.Contexts = append(v.Contexts, j.Contexts...)
	switch {
	case j.Outcome == dsh.HookOutcomeHalt:
		// continue:false with the exit-2 block: the turn ends, the call never runs.
		v.Outcome, v.Reason, v.HaltBefore = dsh.HookOutcomeHalt, j.Reason, true
	case (j.Outcome == dsh.HookOutcomeBlock || j.Outcome == dsh.HookOutcomeDeny) && j.Reason != "" && j.Reason != ev.FallbackReason:
		v.Reason = j.Reason
	}
}
