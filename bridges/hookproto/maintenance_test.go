package hookproto

import (
	"context"
	"testing"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/generated/hookmap"
)

// TestFireRecordsTheMaintenanceOwner: the hooks of a compaction attempt (a maintenance
// fire, outside a turn) are recorded with the attempt as their owner, and the hooks of a
// turn with none (docs/design/REWRITE-COMPACTION.md#22-design-a-compaction-phase-with-two-typed-points "hook/* carries an owner").
func TestFireRecordsTheMaintenanceOwner(t *testing.T) {
	e, rec, _ := engineFor(t, &hookmap.ClaudeCode, "PreCompact", group("", h("exit 0")))
	e.Fire(context.Background(), Fire{Event: "PreCompact", Subject: "manual", Stdin: []byte("{}\n"), Maintenance: "cmp-1"})
	recs := rec.all()
	if len(recs) != 2 {
		t.Fatalf("%d records of a maintenance fire, want 2: %#v", len(recs), recs)
	}
	inv, ok1 := recs[0].(dsh.HookInvoked)
	res, ok2 := recs[1].(dsh.HookResult)
	if !ok1 || !ok2 {
		t.Fatalf("records = %#v", recs)
	}
	for _, owner := range []*string{inv.Maintenance, res.Maintenance} {
		if owner == nil || *owner != "cmp-1" {
			t.Errorf("owner = %v, want the attempt cmp-1", owner)
		}
	}

	e, rec, _ = engineFor(t, &hookmap.ClaudeCode, "PreToolUse", group("", h("exit 0")))
	e.Fire(context.Background(), Fire{Event: "PreToolUse", Subject: "Bash", Stdin: []byte("{}\n"), Turn: 2, InTurn: true})
	for _, r := range rec.all() {
		var owner *string
		//dshvet:partial only the hook records carry an owner
		switch r := r.(type) {
		case dsh.HookInvoked:
			owner = r.Maintenance
		case dsh.HookResult:
			owner = r.Maintenance
		}
		if owner != nil {
			t.Errorf("a turn's hook record has maintenance owner %q", *owner)
		}
	}
}
