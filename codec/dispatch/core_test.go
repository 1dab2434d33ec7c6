// Behavioural tests of registrations, unregistration, audit and concurrent use, run against the listener surface of
// surface_test.go (the shape dshgen generates), under -race in CI.

package dispatch_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"strings"
	"sync"
	"testing"
)

func payload(agent string) *DemoPayload { return &DemoPayload{AgentID: agent} }

// logPolicy is a policy listener that records name and passes through.
func logPolicy(log *[]string, name string) PolicyListener {
	return func(ctx context.Context, p *DemoPayload, next PolicyNext) (Decision, error) {
		*log = append(*log, name)
		return next.Call(ctx)
	}
}

func wantListenerError(t *testing.T, err error, listener string, target error) *ListenerError {
	t.Helper()
	var le *ListenerError
	if !errors.As(err, &le) {
		t.Fatalf("error %v (%T) is not a *ListenerError", err, err)
	}
	if le.Listener != listener {
		t.Errorf("failing listener %q, want %q (%v)", le.Listener, listener, err)
	}
	if target != nil && !errors.Is(err, target) {
		t.Errorf("error %v does not wrap %v", err, target)
	}
	return le
}

func TestRegistrationOrder(t *testing.T) {
	reg := NewRegistry()
	var log []string
	a := reg.Plugin("a")
	b := reg.Plugin("b")
	a.OnPolicy(logPolicy(&log, "a1"))
	b.OnPolicy(logPolicy(&log, "b1"))
	reg.OnPolicy(logPolicy(&log, "root1"))
	a.ForAgent("x").OnPolicy(logPolicy(&log, "a2-x"))
	a.OnPolicy(logPolicy(&log, "a3"))
	d, err := reg.RunPolicy(context.Background(), payload("x"), func(context.Context) (Decision, error) {
		log = append(log, "terminal")
		return DemoDeny{Reason: "t"}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if d != (DemoDeny{Reason: "t"}) {
		t.Errorf("decision %#v", d)
	}
	if want := "a1 b1 root1 a2-x a3 terminal"; strings.Join(log, " ") != want {
		t.Errorf("order %q, want %q", strings.Join(log, " "), want)
	}

	// Listener names count each plugin's registrations from 1.
	names := []string{}
	reg2 := NewRegistry()
	p := reg2.Plugin("p")
	for i := 0; i < 2; i++ {
		p.OnStopping(func(context.Context, *DemoPayload) error { return errors.New("x") })
		reg2.OnStopping(func(context.Context, *DemoPayload) error { return errors.New("x") })
	}
	p.ForAgent("x").DemoGuard(func(context.Context, *DemoPayload) Verdict { return VerdictAbstain{} }) // p#3, not run
	reg2.Plugin("").OnStopping(func(context.Context, *DemoPayload) error { return errors.New("x") })
	err = reg2.NotifyStopping(context.Background(), payload("y"))
	for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
		names = append(names, e.(*ListenerError).Listener)
	}
	if want := "p#1 anonymous#1 p#2 anonymous#2 anonymous#3"; strings.Join(names, " ") != want {
		t.Errorf("names %q, want %q", strings.Join(names, " "), want)
	}
}

func TestUnregisterAndClose(t *testing.T) {
	reg := NewRegistry(WithLogger(slog.New(slog.DiscardHandler)))
	var log []string
	p := reg.Plugin("p")
	q := reg.Plugin("q")
	u1 := p.OnPolicy(logPolicy(&log, "p1"))
	p.ForAgent("x").OnPolicy(logPolicy(&log, "p-x"))
	q.OnPolicy(logPolicy(&log, "q1"))
	reg.OnPolicy(logPolicy(&log, "root"))
	p.OnPolicy(logPolicy(&log, "p2"))
	run := func() string {
		log = nil
		if _, err := reg.RunPolicy(context.Background(), payload("x"), nil); err != nil {
			t.Fatal(err)
		}
		return strings.Join(log, " ")
	}
	if got := run(); got != "p1 p-x q1 root p2" {
		t.Fatalf("before: %q", got)
	}
	u1()
	u1() // idempotent
	if got := run(); got != "p-x q1 root p2" {
		t.Errorf("after unregister: %q", got)
	}
	p.Close()
	if got := run(); got != "q1 root" {
		t.Errorf("after p.Close: %q", got)
	}
	p.Close() // idempotent
	if u := p.OnPolicy(logPolicy(&log, "late")); u == nil {
		t.Error("nil unregister from a closed registrar")
	} else {
		u()
	}
	p.ForAgent("x").OnPolicy(logPolicy(&log, "late-x"))
	if got := run(); got != "q1 root" {
		t.Errorf("after registering on a closed registrar: %q", got)
	}
	reg.Close()
	if got := run(); got != "" {
		t.Errorf("after reg.Close: %q", got)
	}
}

func TestAudit(t *testing.T) {
	var got []ResolvedDecision
	reg := NewRegistry(WithDecisionAudit(func(_ context.Context, d ResolvedDecision) { got = append(got, d) }))
	ctx := context.Background()
	reg.Plugin("a").OnPolicy(func(ctx context.Context, p *DemoPayload, next PolicyNext) (Decision, error) { return next.Call(ctx) })
	reg.Plugin("b").OnPolicy(func(ctx context.Context, p *DemoPayload, next PolicyNext) (Decision, error) {
		if p.AgentID == "deny" {
			return DemoDeny{Reason: "b"}, nil
		}
		return next.Call(ctx)
	})
	reg.RunPolicy(ctx, payload("deny"), nil)
	reg.RunPolicy(ctx, payload("x"), nil)
	reg.Plugin("g").DemoGuard(func(context.Context, *DemoPayload) Verdict { return VerdictDeny{Reason: "g"} })
	reg.RunDemoGuard(ctx, payload("x"))
	want := []ResolvedDecision{
		{Event: "demo/policy", Listener: "b#1", Kind: "deny", Decision: DemoDeny{Reason: "b"}},
		{Event: "demo/policy", Listener: "", Kind: "allow", Decision: DemoAllow{}},
		{Event: "demo/guard", Listener: "g#1", Kind: "deny", Decision: VerdictDeny{Reason: "g"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("audit\n%#v\nwant\n%#v", got, want)
	}
}

func TestNilListener(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("nil listener accepted")
		}
	}()
	NewRegistry().OnPolicy(nil)
}

func TestConcurrent(t *testing.T) {
	const writerRounds = 50
	reg := NewRegistry(WithLogger(slog.New(slog.DiscardHandler)), WithDecisionAudit(func(context.Context, ResolvedDecision) {}))
	ctx := context.Background()
	pass := func(ctx context.Context, p *DemoPayload, next PolicyNext) (Decision, error) { return next.Call(ctx) }
	abstain := func(context.Context, *DemoPayload) Verdict { return VerdictAbstain{} }
	wrap := func(ctx context.Context, p *DemoPayload, next RunNext) Decision { return next.Call(ctx) }
	reg.OnPolicy(pass)
	stop := make(chan struct{})
	var writers sync.WaitGroup
	for w := 0; w < 8; w++ {
		writers.Add(1)
		go func() {
			defer writers.Done()
			// A bounded number of rounds, overlapping the readers: writers that ran until
			// the readers ended contended with them for as long as they took, from 1 s to
			// 20 s under the race detector.
			for i := 0; i < writerRounds; i++ {
				select {
				case <-stop:
					return
				default:
				}
				p := reg.Plugin(fmt.Sprint("w", w))
				a := p.ForAgent(fmt.Sprint("agent", i%3))
				u := p.OnPolicy(pass)
				a.OnPolicy(pass)
				a.DemoGuard(abstain)
				p.WrapRun(wrap)
				a.OnStopping(func(context.Context, *DemoPayload) error { return nil })
				p.OnSeen(func(context.Context, *DemoPayload) {})
				u()
				if i%2 == 0 {
					p.Close()
				} else {
					a.Close()
				}
			}
		}()
	}
	var readers sync.WaitGroup
	for g := 0; g < 100; g++ {
		readers.Add(1)
		go func() {
			defer readers.Done()
			for i := 0; i < 50; i++ {
				p := payload(fmt.Sprint("agent", (g+i)%4))
				if _, err := reg.RunPolicy(ctx, p, nil); err != nil {
					t.Error(err)
					return
				}
				if d, err := reg.RunDemoGuard(ctx, p); err != nil || d.Kind() != "abstain" {
					t.Error(d, err)
					return
				}
				if _, err := reg.RunRun(ctx, p, func(context.Context) Decision { return DemoAllow{} }); err != nil {
					t.Error(err)
					return
				}
				if err := errors.Join(reg.NotifyStopping(ctx, p), reg.EmitSeen(ctx, p)); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	readers.Wait()
	close(stop)
	writers.Wait()
	reg.Close()
	var log []string
	reg.Plugin("after").OnPolicy(logPolicy(&log, "x")) // on a closed root: ignored
	if _, err := reg.RunPolicy(ctx, payload("x"), nil); err != nil || len(log) != 0 {
		t.Errorf("after Close: %v %v", log, err)
	}
}
