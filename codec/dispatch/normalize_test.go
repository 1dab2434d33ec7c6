// Behavioural tests of the normalization of decisions, run against the listener surface of
// surface_test.go (the shape dshgen generates), under -race in CI.

package dispatch_test

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/dshkit/dsh/codec/dispatch"
)

// TestPointerVariantIsValue pins the one boundary where decisions enter the runtime: a
// listener (or terminal) of any domain that returns a pointer to a variant is treated
// exactly as one that returns the value, and the runtime (and the audit) only ever sees
// the value form.
func TestPointerVariantIsValue(t *testing.T) {
	ctx := context.Background()
	var audited []any
	reg := NewRegistry(WithDecisionAudit(func(_ context.Context, d ResolvedDecision) { audited = append(audited, d.Decision) }))
	reg.OnPolicy(func(context.Context, *DemoPayload, PolicyNext) (Decision, error) { return &DemoDeny{Reason: "p"}, nil })
	reg.DemoGuard(func(context.Context, *DemoPayload) Verdict { return &VerdictDeny{Reason: "g"} })
	reg.WrapRun(func(context.Context, *DemoPayload, RunNext) Decision { return &DemoAllow{} })
	reg.OnVote(func(context.Context, *DemoPayload) (Decision, error) { return &DemoDeny{Reason: "v"}, nil })
	reg.OnFold(func(context.Context, *DemoPayload) (Decision, error) { return &DemoDeny{Reason: "f"}, nil })

	if d, err := reg.RunPolicy(ctx, payload("x"), nil); err != nil || d != (DemoDeny{Reason: "p"}) {
		t.Errorf("waterfall: %#v, %v", d, err)
	}
	if d, err := reg.RunDemoGuard(ctx, payload("x")); err != nil || d != (VerdictDeny{Reason: "g"}) {
		t.Errorf("guard: %#v, %v", d, err)
	}
	if d, err := reg.RunRun(ctx, payload("x"), func(context.Context) Decision { return DemoAllow{} }); err != nil || d != (DemoAllow{}) {
		t.Errorf("wrapper: %#v, %v", d, err)
	}
	if v := reg.RunVote(ctx, payload("x"), 0); len(v) != 1 || v[0].Decision != (DemoDeny{Reason: "v"}) {
		t.Errorf("vote: %#v", v)
	}
	var folded Decision
	if err := reg.RunFold(ctx, payload("x"), 0, func(_ context.Context, _ string, d Decision) (*DemoPayload, error) {
		folded = d
		return nil, nil
	}); err != nil || folded != (DemoDeny{Reason: "f"}) {
		t.Errorf("fold: %#v, %v", folded, err)
	}
	want := []any{DemoDeny{Reason: "p"}, VerdictDeny{Reason: "g"}, DemoDeny{Reason: "v"}, DemoDeny{Reason: "f"}}
	if !reflect.DeepEqual(audited, want) {
		t.Errorf("audited %#v, want %#v", audited, want)
	}

	// Terminals too, with and without listeners.
	for _, reg := range []*Registry{NewRegistry(), reg} {
		d, err := reg.RunRun(ctx, payload("x"), func(context.Context) Decision { return &DemoDeny{Reason: "t"} })
		if _, isPtr := d.(*DemoDeny); err != nil || isPtr {
			t.Errorf("wrapper terminal: %#v, %v", d, err)
		}
	}
	empty := NewRegistry()
	if d, err := empty.RunPolicy(ctx, payload("x"), func(context.Context) (Decision, error) { return &DemoDeny{Reason: "t"}, nil }); err != nil || d != (DemoDeny{Reason: "t"}) {
		t.Errorf("waterfall terminal: %#v, %v", d, err)
	}
}

// TestNormalizeNested: a variant held through a pointer inside a decision (in a field, a
// list) becomes its value too; what the listener returned is not modified, and a decision
// with nothing to normalize is returned as is.
func TestNormalizeNested(t *testing.T) {
	ctx := context.Background()
	inner := &DemoDeny{Reason: "in"}
	list := []Decision{DemoAllow{}, &DemoDeny{Reason: "l"}}
	ret := &DemoReplace{Nested: inner, List: list, Value: json.RawMessage(`1`)}
	reg := NewRegistry()
	reg.OnPolicy(func(context.Context, *DemoPayload, PolicyNext) (Decision, error) { return ret, nil })
	d, err := reg.RunPolicy(ctx, payload("x"), nil)
	want := DemoReplace{Nested: DemoDeny{Reason: "in"}, List: []Decision{DemoAllow{}, DemoDeny{Reason: "l"}}, Value: json.RawMessage(`1`)}
	if err != nil || !reflect.DeepEqual(d, want) {
		t.Fatalf("got %#v, %v\nwant %#v", d, err, want)
	}
	if _, ok := list[1].(*DemoDeny); !ok || ret.Nested != Decision(inner) {
		t.Errorf("the listener's decision was modified: %#v", ret)
	}
	plain := DemoReplace{Items: []Item{{ID: "a"}}, List: []Decision{DemoAllow{}}}
	if got := dispatch.Normalize(plain); &got.Items[0] != &plain.Items[0] || &got.List[0] != &plain.List[0] {
		t.Error("a decision with nothing to normalize was copied")
	}
	var none *DemoDeny
	if got := dispatch.Normalize(DemoReplace{Nested: none}); got.Nested != Decision(none) {
		t.Errorf("a nil pointer variant was rewritten: %#v", got)
	}
}

// TestNormalizeCycle: a value that contains itself is walked once around, not forever.
func TestNormalizeCycle(t *testing.T) {
	list := make([]Decision, 2)
	list[0] = DemoReplace{List: list}
	list[1] = &DemoDeny{Reason: "c"}
	got := dispatch.Normalize(DemoReplace{List: list})
	if got.List[1] != (DemoDeny{Reason: "c"}) {
		t.Errorf("got %#v", got.List[1])
	}
	self := &DemoReplace{}
	self.Nested = self
	if got := dispatch.Normalize(Decision(self)); got == nil {
		t.Error("nil")
	}
}

// TestHasPointerVariant: the walk that decides whether a decision needs normalizing finds a
// pointer variant at any depth, and nothing in a decision of value variants only.
func TestHasPointerVariant(t *testing.T) {
	for _, c := range []struct {
		d    Decision
		want bool
	}{
		{DemoReplace{}, false},
		{DemoReplace{Nested: DemoDeny{}, List: []Decision{DemoAllow{}, DemoReplace{List: []Decision{DemoDeny{}}}}}, false},
		{DemoReplace{Nested: &DemoDeny{}}, true},
		{DemoReplace{List: []Decision{DemoAllow{}, DemoReplace{List: []Decision{&DemoAllow{}}}}}, true},
		{DemoReplace{Nested: (*DemoDeny)(nil)}, false},
	} {
		if got := dispatch.HasPointerVariant(c.d); got != c.want {
			t.Errorf("HasPointerVariant(%#v) = %v, want %v", c.d, got, c.want)
		}
		if got := planReplace.Has(c.d); got != c.want {
			t.Errorf("Plan.Has(%#v) = %v, want %v", c.d, got, c.want)
		}
	}
}
