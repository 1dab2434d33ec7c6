package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
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

// TestRewriteFailureIsLogged: a failed rewrite phase is logged as a warning naming the
// tool, the call and the code.
func TestRewriteFailureIsLogged(t *testing.T) {
	var buf bytes.Buffer
	e := newEnv(t, WithLogger(slog.New(slog.NewTextHandler(&buf, nil))))
	e.register(t, bashDef(nil))
	e.hooks.Plugin("p").OnRewriteInput(replaceWith(`{"timeout":5}`))
	k := e.rt.Start(context.Background(), bashCall(`{"command":"make"}`))
	k.Finish()
	out := buf.String()
	for _, want := range []string{"level=WARN", `msg="tools: rewrite failed"`, "tool=bash", "callId=c1", "code=" + CodeRewriteInvalid} {
		if !strings.Contains(out, want) {
			t.Errorf("the log lacks %s:\n%s", want, out)
		}
	}
}

// TestBoundedNoticeValue: a notice value of noticeValueMax bytes is kept whole; a longer
// one is cut on a rune boundary and marked.
func TestBoundedNoticeValue(t *testing.T) {
	exact := strings.Repeat("a", noticeValueMax)
	if got := bounded(exact); got != exact {
		t.Errorf("bounded(%d bytes) = %q", len(exact), got)
	}
	long := strings.Repeat("a", noticeValueMax-1) + "éz" // é straddles the limit
	if got, want := bounded(long), strings.Repeat("a", noticeValueMax-1)+"…"; got != want {
		t.Errorf("bounded(long) = %q, want %q", got, want)
	}
}
