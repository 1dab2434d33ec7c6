// Behavioural tests of the generated dispatch wiring (scope functions of nested subjects,
// the checks of decision unions, the Events table, Listens, the session-event decoder), run
// by dispatch_test.go against the package that gen/emit/gotypes and gen/emit/dispatch
// generate from its fixture. The engine itself is tested in codec/dispatch.

package demo

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"
)

func payload(agent string) *DemoPayload { return &DemoPayload{AgentID: agent} }

func ptr(s string) *string { return &s }

// logPolicy is a policy listener that records name and passes through.
func logPolicy(log *[]string, name string) PolicyListener {
	return func(ctx context.Context, p *DemoPayload, next PolicyNext) (Decision, error) {
		*log = append(*log, name)
		return next.Call(ctx)
	}
}

// failedWith checks that err is the *ListenerError of listener wrapping target.
func failedWith(t *testing.T, err error, listener string, target error) {
	t.Helper()
	if le := (*ListenerError)(nil); !errors.As(err, &le) || le.Listener != listener || !errors.Is(err, target) {
		t.Errorf("error %v, want listener %s failing with %v", err, listener, target)
	}
}

func TestScope(t *testing.T) {
	reg := NewRegistry()
	var mu sync.Mutex
	var seen []string
	rec := func(name string) StoppingListener {
		return func(ctx context.Context, p *DemoPayload) error {
			mu.Lock()
			seen = append(seen, name)
			mu.Unlock()
			return nil
		}
	}
	p := reg.Plugin("p")
	p.OnStopping(rec("global"))
	p.ForAgent("x").OnStopping(rec("x"))
	reg.ForAgent("y").OnStopping(rec("y"))
	p.ForAgent("y").ForAgent("x").OnStopping(rec("x2"))
	for _, c := range []struct{ agent, want string }{
		{"x", "global x x2"}, {"y", "global y"}, {"z", "global"}, {"", "global"},
	} {
		seen = nil
		if err := reg.NotifyStopping(context.Background(), payload(c.agent)); err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(seen, " "); got != c.want {
			t.Errorf("agent %q: seen by %q, want %q", c.agent, got, c.want)
		}
	}

	// A subject behind an optional string, or an optional record.
	rn := func(name string) NoteListener {
		return func(context.Context, *NestedPayload) error { seen = append(seen, name); return nil }
	}
	rd := func(name string) DeepListener {
		return func(context.Context, *NestedPayload) { seen = append(seen, name) }
	}
	rp := func(name string) PlainListener {
		return func(context.Context, *NestedPayload) error { seen = append(seen, name); return nil }
	}
	reg.OnNote(rn("note-global"))
	reg.ForAgent("x").OnNote(rn("note-x"))
	reg.OnDeep(rd("deep-global"))
	reg.ForAgent("x").OnDeep(rd("deep-x"))
	reg.OnPlain(rp("plain-global"))
	reg.ForAgent("x").OnPlain(rp("plain-x"))
	for _, c := range []struct {
		p    *NestedPayload
		want string
	}{
		{&NestedPayload{}, "note-global deep-global plain-global plain-x"},
		{&NestedPayload{Exec: Exec{AgentID: ptr("x")}}, "note-global note-x deep-global plain-global plain-x"},
		{&NestedPayload{Opt: &Exec{}}, "note-global deep-global plain-global plain-x"},
		{&NestedPayload{Opt: &Exec{AgentID: ptr("x")}}, "note-global deep-global deep-x plain-global plain-x"},
		{&NestedPayload{Opt: &Exec{AgentID: ptr("y")}}, "note-global deep-global plain-global plain-x"},
		{nil, "note-global deep-global plain-global plain-x"},
	} {
		seen = nil
		ctx := context.Background()
		if err := errors.Join(reg.NotifyNote(ctx, c.p), reg.EmitDeep(ctx, c.p), reg.NotifyPlain(ctx, c.p)); err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(seen, " "); got != c.want {
			t.Errorf("%+v: seen by %q, want %q", c.p, got, c.want)
		}
	}
}

func TestNilDecision(t *testing.T) {
	ctx := context.Background()
	reg := NewRegistry()
	reg.OnPolicy(func(context.Context, *DemoPayload, PolicyNext) (Decision, error) { return nil, nil })
	_, err := reg.RunPolicy(ctx, payload("x"), nil)
	failedWith(t, err, "anonymous#1", ErrNilDecision)

	reg = NewRegistry()
	reg.OnPolicy(func(context.Context, *DemoPayload, PolicyNext) (Decision, error) { return (*DemoDeny)(nil), nil })
	_, err = reg.RunPolicy(ctx, payload("x"), nil)
	failedWith(t, err, "anonymous#1", ErrNilDecision)

	reg.DemoGuard(func(context.Context, *DemoPayload) Verdict { return nil })
	_, err = reg.RunDemoGuard(ctx, payload("x"))
	failedWith(t, err, "anonymous#2", ErrNilDecision)

	reg.WrapRun(func(ctx context.Context, p *DemoPayload, next RunNext) Decision { next.Call(ctx); return nil })
	_, err = reg.RunRun(ctx, payload("x"), func(context.Context) Decision { return DemoAllow{} })
	failedWith(t, err, "anonymous#3", ErrNilDecision)

	// A pointer variant is a decision, which the runtime sees in its value form, as it sees
	// a variant held through a pointer inside it.
	reg = NewRegistry()
	reg.OnPolicy(func(context.Context, *DemoPayload, PolicyNext) (Decision, error) {
		return &DemoReplace{Nested: &DemoDeny{Reason: "n"}}, nil
	})
	if d, err := reg.RunPolicy(ctx, payload("x"), nil); err != nil || !reflect.DeepEqual(d, DemoReplace{Nested: DemoDeny{Reason: "n"}}) {
		t.Errorf("nested pointer variant: %#v, %v", d, err)
	}
	reg = NewRegistry()
	reg.OnPolicy(func(context.Context, *DemoPayload, PolicyNext) (Decision, error) { return &DemoDeny{Reason: "r"}, nil })
	if d, err := reg.RunPolicy(ctx, payload("x"), nil); err != nil || d != (DemoDeny{Reason: "r"}) {
		t.Errorf("pointer variant: %v, %v", d, err)
	}
}

// embedsDeny and embedsAbstain embed a variant, which makes them satisfy the union
// interface without being variants.
type (
	embedsDeny    struct{ DemoDeny }
	embedsAbstain struct{ VerdictAbstain }
)

// TestUnknownVariant: a listener, guard or wrapper that returns a value of a type that is
// not a variant of its union fails the run (a guard in particular does not abstain), and
// so does a terminal.
func TestUnknownVariant(t *testing.T) {
	ctx := context.Background()
	reg := NewRegistry()
	reg.OnPolicy(func(ctx context.Context, _ *DemoPayload, next PolicyNext) (Decision, error) {
		next.Call(ctx)
		return embedsDeny{}, nil
	})
	reg.OnPolicy(func(context.Context, *DemoPayload, PolicyNext) (Decision, error) { return embedsDeny{}, nil })
	_, err := reg.RunPolicy(ctx, payload("x"), nil)
	failedWith(t, err, "anonymous#2", ErrUnknownVariant)

	reg = NewRegistry()
	reg.DemoGuard(func(context.Context, *DemoPayload) Verdict { return embedsAbstain{} })
	_, err = reg.RunDemoGuard(ctx, payload("x"))
	failedWith(t, err, "anonymous#1", ErrUnknownVariant)

	reg.WrapRun(func(ctx context.Context, p *DemoPayload, next RunNext) Decision { next.Call(ctx); return embedsDeny{} })
	_, err = reg.RunRun(ctx, payload("x"), func(context.Context) Decision { return DemoAllow{} })
	failedWith(t, err, "anonymous#2", ErrUnknownVariant)

	// Terminals, with and without listeners.
	for _, reg := range []*Registry{NewRegistry(), reg} {
		_, err = reg.RunRun(ctx, payload("x"), func(context.Context) Decision { return embedsDeny{} })
		if !errors.Is(err, ErrUnknownVariant) {
			t.Errorf("wrapper terminal: %v", err)
		}
		_, err = reg.RunPolicy(ctx, payload("x"), func(context.Context) (Decision, error) { return embedsDeny{}, nil })
		if !errors.Is(err, ErrUnknownVariant) {
			t.Errorf("waterfall terminal: %v", err)
		}
	}
}

func TestEvents(t *testing.T) {
	var names []string
	for _, e := range Events {
		names = append(names, e.Name)
	}
	if got := strings.Join(names, " "); got != "demo/fold demo/guard demo/policy demo/run demo/seen demo/stopping demo/vote nested/deep nested/note nested/plain" {
		t.Errorf("events %q", got)
	}
	want := EventInfo{Name: "demo/policy", Domain: DomainWaterfall, Doc: "demo/policy is a demo waterfall.",
		Payload: "DemoPayload", Decision: "Decision", Default: "allow", Register: "OnPolicy", Listener: "PolicyListener"}
	if Events[2] != want {
		t.Errorf("%#v", Events[2])
	}
	fold := EventInfo{Name: "demo/fold", Domain: DomainFold, Doc: "demo/fold is a demo fold.",
		Payload: "DemoPayload", Decision: "Decision", Default: "allow", Register: "OnFold", Listener: "FoldListener"}
	if Events[0] != fold {
		t.Errorf("%#v", Events[0])
	}
	if Events[1].Register != "DemoGuard" || Events[3].Register != "WrapRun" {
		t.Errorf("registrations: %#v", Events[:4])
	}
	if Events[1].Default != "abstain" || Events[3].Default != "" || Events[4].Decision != "" {
		t.Errorf("%#v", Events[:5])
	}
}

func TestDecodeSessionEventData(t *testing.T) {
	if got := strings.Join(SessionEventTypes, " "); got != "demo/started nested/ended" {
		t.Errorf("types %q", got)
	}
	d, err := DecodeSessionEventData(DemoStartedType, []byte(`{"turn":3}`))
	if err != nil || d != (Started{Turn: 3}) || d.SessionEventType() != "demo/started" {
		t.Errorf("%#v, %v", d, err)
	}
	d, err = DecodeSessionEventData("nested/ended", []byte(`{"reason":"done"}`))
	if err != nil || d != (Ended{Reason: "done"}) {
		t.Errorf("%#v, %v", d, err)
	}
	if _, err := DecodeSessionEventData(DemoStartedType, []byte(`{"turn":`)); err == nil {
		t.Error("bad JSON accepted")
	}
	// Decoding is the data record's own, strict decoding.
	for data, want := range map[string]error{`{"turn":3,"extra":1}`: ErrUnknownField, `{}`: ErrMissingField} {
		_, err := DecodeSessionEventData(DemoStartedType, []byte(data))
		var de *DecodeError
		if !errors.As(err, &de) || !errors.Is(err, want) || !strings.Contains(err.Error(), "demo/started") {
			t.Errorf("%s: %v, want a *DecodeError wrapping %v", data, err, want)
		}
	}
	d, err = DecodeSessionEventData("demo/nope", []byte(`{}`))
	if d != nil || !errors.Is(err, ErrUnknownKind) || !strings.Contains(err.Error(), "demo/nope") {
		t.Errorf("unknown type: %#v, %v", d, err)
	}
}

func TestListens(t *testing.T) {
	reg := NewRegistry()
	if reg.Listens(PolicyEventName) || reg.Listens(RunEventName) || reg.Listens("no/such") {
		t.Fatal("an empty registry listens")
	}
	unregister := reg.Plugin("p").ForAgent("x").OnPolicy(logPolicy(new([]string), "p"))
	if !reg.Listens(PolicyEventName) {
		t.Error("a scoped listener is not reported")
	}
	if reg.Listens(RunEventName) || reg.Listens(DemoGuardEventName) {
		t.Error("another event is reported")
	}
	unregister()
	if reg.Listens(PolicyEventName) {
		t.Error("an unregistered listener is still reported")
	}
	audited := NewRegistry(WithDecisionAudit(func(context.Context, ResolvedDecision) {}))
	if !audited.Listens(PolicyEventName) || !audited.Listens(DemoGuardEventName) || audited.Listens(RunEventName) {
		t.Error("an audit reaches policy points only")
	}
}
