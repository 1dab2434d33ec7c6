package tools

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/dshkit/dsh/generated/dsh"
)

// TestRewriteConflictLaterOptionWins: WithRewriteConflict(ConflictOrdered) after
// WithRewriteConflict(ConflictFail) restores the ordered policy (the later option wins, as
// for every Option): two listeners rewriting one field then succeed, the later value
// winning, instead of failing closed with REWRITE_CONFLICT.
func TestRewriteConflictLaterOptionWins(t *testing.T) {
	var ran []string
	e := newEnv(t, WithRewriteConflict(ConflictFail), WithRewriteConflict(ConflictOrdered))
	e.register(t, bashDef(&ran))
	e.hooks.Plugin("A").OnRewriteInput(mergeWith(`{"timeout":10}`))
	e.hooks.Plugin("B").OnRewriteInput(mergeWith(`{"timeout":20}`))
	k := e.rt.Start(context.Background(), bashCall(`{"command":"make"}`))
	r := k.Finish()
	rw := k.Rewritten()
	if rw.Error != nil || len(ran) != 1 || ran[0] != `{"command":"make","timeout":20}` {
		t.Fatalf("ran %q, rewrite error %+v, result %s", ran, rw.Error, outcomeJSON(t, r))
	}
}

// TestRewritePayloadCarriesModelInputAndSchema: every tools/rewrite-input listener sees
// the model's arguments as modelInput, the tool's input schema and the calling agent's id,
// the first one with input equal to modelInput, a later one with the input the earlier
// ones made.
func TestRewritePayloadCarriesModelInputAndSchema(t *testing.T) {
	e := newEnv(t)
	def := bashDef(nil)
	e.register(t, def)
	type seen struct{ input, model, schema, agent string }
	var got []seen
	record := func(p *dsh.RewriteInputPayload) {
		agent := "<nil>"
		if p.AgentID != nil {
			agent = *p.AgentID
		}
		got = append(got, seen{string(p.Input), string(p.ModelInput), string(p.Schema), agent})
	}
	e.hooks.Plugin("A").OnRewriteInput(func(ctx context.Context, p *dsh.RewriteInputPayload) (dsh.RewriteDecision, error) {
		record(p)
		return dsh.RewriteMerge{Patch: json.RawMessage(`{"timeout":10}`)}, nil
	})
	e.hooks.Plugin("B").OnRewriteInput(func(ctx context.Context, p *dsh.RewriteInputPayload) (dsh.RewriteDecision, error) {
		record(p)
		return dsh.RewriteKeep{}, nil
	})
	model := `{"command":"make"}`
	k := e.rt.Start(context.Background(), bashCall(model))
	k.Finish()
	want := []seen{
		{model, model, string(def.InputSchema), "a1"},
		{`{"command":"make","timeout":10}`, model, string(def.InputSchema), "a1"},
	}
	if len(got) != len(want) {
		t.Fatalf("%d listeners ran, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i].input != want[i].input || got[i].model != want[i].model || got[i].agent != want[i].agent || !jsonEqual(got[i].schema, want[i].schema) {
			t.Errorf("listener %d saw %+v, want %+v", i, got[i], want[i])
		}
	}
}
