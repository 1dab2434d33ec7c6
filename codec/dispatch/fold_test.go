// Behavioural tests of the fold runner, run against the listener surface of
// surface_test.go (the shape dshgen generates), under -race in CI.

package dispatch_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// TestFold runs a fold: every listener that sees p in registration order, each given the
// payload apply made of the decision before it; apply sees every decision, the default
// included; scoped listeners see only their agent.
func TestFold(t *testing.T) {
	var audited []ResolvedDecision
	reg := NewRegistry(WithDecisionAudit(func(_ context.Context, d ResolvedDecision) { audited = append(audited, d) }))
	var seen []string
	listener := func(name string, d Decision) FoldListener {
		return func(ctx context.Context, p *DemoPayload) (Decision, error) {
			seen = append(seen, name+":"+p.Item.ID)
			return d, nil
		}
	}
	reg.Plugin("a").OnFold(listener("a", DemoReplace{Value: []byte(`1`)}))
	reg.Plugin("b").OnFold(listener("b", DemoAllow{}))
	reg.Plugin("c").ForAgent("other").OnFold(listener("c", DemoDeny{Reason: "c"}))
	reg.Plugin("d").ForAgent("x").OnFold(listener("d", DemoDeny{Reason: "d"}))
	if !reg.Listens(FoldEventName) {
		t.Error("a fold with listeners does not listen")
	}
	var applied []string
	p := payload("x")
	p.Item.ID = "0"
	err := reg.RunFold(context.Background(), p, 0, func(_ context.Context, listener string, d Decision) (*DemoPayload, error) {
		applied = append(applied, listener+"="+string(d.Kind()))
		if d.Kind() == DemoAllowKind {
			return nil, nil // the same payload
		}
		next := *p
		next.Item.ID = listener
		return &next, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(seen, " "); got != "a:0 b:a#1 d:a#1" {
		t.Errorf("listeners saw %q", got)
	}
	if got := strings.Join(applied, " "); got != "a#1=replace b#1=allow d#1=deny" {
		t.Errorf("applied %q", got)
	}
	if p.Item.ID != "0" {
		t.Errorf("the caller's payload was changed: %q", p.Item.ID)
	}
	if len(audited) != 3 || audited[0].Listener != "a#1" || audited[2].Kind != "deny" {
		t.Errorf("audit %#v", audited)
	}
	if err := reg.RunFold(context.Background(), p, 0, nil); err == nil {
		t.Error("a nil apply is accepted")
	}
	if NewRegistry().Listens(FoldEventName) || NewRegistry(WithDecisionAudit(func(context.Context, ResolvedDecision) {})).Listens(FoldEventName) {
		t.Error("a fold without listeners listens")
	}
}

// TestFoldFailures: an error, a panic, a nil or unknown decision, an error of apply, an
// overrun of the bound (cooperative or not) and a cancellation each stop the fold, naming
// the listener; the listeners after it do not run.
func TestFoldFailures(t *testing.T) {
	boom := errors.New("boom")
	applyErr := errors.New("apply")
	release := make(chan struct{})
	defer close(release)
	cases := []struct {
		name   string
		fn     FoldListener
		apply  error
		bound  time.Duration
		cancel bool
		want   error
	}{
		{name: "error", fn: func(context.Context, *DemoPayload) (Decision, error) { return nil, boom }, want: boom},
		{name: "panic", fn: func(context.Context, *DemoPayload) (Decision, error) { panic("fold boom") }},
		{name: "nil", fn: func(context.Context, *DemoPayload) (Decision, error) { return nil, nil }, want: ErrNilDecision},
		{name: "unknown", fn: func(context.Context, *DemoPayload) (Decision, error) { return struct{ DemoAllow }{}, nil }, want: ErrUnknownVariant},
		{name: "apply", fn: func(context.Context, *DemoPayload) (Decision, error) { return DemoAllow{}, nil }, apply: applyErr, want: applyErr},
		{name: "polite-overrun", bound: 20 * time.Millisecond, want: ErrListenerOverrun,
			fn: func(ctx context.Context, _ *DemoPayload) (Decision, error) { <-ctx.Done(); return DemoAllow{}, nil }},
		{name: "stuck-overrun", bound: 20 * time.Millisecond, want: ErrListenerOverrun,
			fn: func(ctx context.Context, _ *DemoPayload) (Decision, error) { <-release; return DemoAllow{}, nil }},
		{name: "panic-bounded", bound: time.Second, fn: func(context.Context, *DemoPayload) (Decision, error) { panic("fold boom") }},
		{name: "cancelled", bound: time.Second, cancel: true, want: context.Canceled,
			fn: func(ctx context.Context, _ *DemoPayload) (Decision, error) { <-ctx.Done(); return DemoAllow{}, nil }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			reg := NewRegistry()
			reg.Plugin("f").OnFold(c.fn)
			after := false
			reg.Plugin("after").OnFold(func(context.Context, *DemoPayload) (Decision, error) { after = true; return DemoAllow{}, nil })
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if c.cancel {
				time.AfterFunc(10*time.Millisecond, cancel)
			}
			start := time.Now()
			err := reg.RunFold(ctx, payload("x"), c.bound, func(context.Context, string, Decision) (*DemoPayload, error) { return nil, c.apply })
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("the run took %s", d)
			}
			if c.apply != nil {
				if err != applyErr {
					t.Errorf("err = %v, want apply's error as is", err)
				}
			} else if le := wantListenerError(t, err, "f#1", c.want); c.name == "panic" || c.name == "panic-bounded" {
				if le.Panic != "fold boom" {
					t.Errorf("panic %v", le.Panic)
				}
			}
			if after {
				t.Error("a listener after the failure ran")
			}
		})
	}
}
