// Behavioural tests of the dispatch engine, run against the listener surface of
// surface_test.go (the shape dshgen generates), under -race in CI.

package dispatch_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dshkit/dsh/codec/dispatch"
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

func TestNextReused(t *testing.T) {
	reg := NewRegistry()
	var second error
	reg.Plugin("p").OnPolicy(func(ctx context.Context, p *DemoPayload, next PolicyNext) (Decision, error) {
		if _, err := next.Call(ctx); err != nil {
			return nil, err
		}
		_, second = next.Call(ctx)
		return DemoAllow{}, nil // the run fails anyway
	})
	d, err := reg.RunPolicy(context.Background(), payload("x"), nil)
	if !errors.Is(second, ErrNextReused) {
		t.Errorf("second next returned %v", second)
	}
	if d != nil {
		t.Errorf("decision %#v on failure", d)
	}
	wantListenerError(t, err, "p#1", ErrNextReused)

	reg.WrapRun(func(ctx context.Context, p *DemoPayload, next RunNext) Decision {
		next.Call(ctx)
		next.Call(ctx)
		return DemoAllow{}
	})
	var terminals atomic.Int32
	_, err = reg.RunRun(context.Background(), payload("x"), func(context.Context) Decision {
		terminals.Add(1)
		return DemoAllow{}
	})
	wantListenerError(t, err, "anonymous#1", ErrNextReused)
	if n := terminals.Load(); n != 1 {
		t.Errorf("terminal ran %d times", n)
	}
}

func TestPanic(t *testing.T) {
	ctx := context.Background()
	reg := NewRegistry()
	reg.Plugin("p").OnPolicy(func(context.Context, *DemoPayload, PolicyNext) (Decision, error) { panic("boom") })
	_, err := reg.RunPolicy(ctx, payload("x"), nil)
	le := wantListenerError(t, err, "p#1", nil)
	if le.Panic != "boom" || !strings.Contains(err.Error(), "boom") || le.Event != PolicyEventName {
		t.Errorf("panic error %#v: %v", le, err)
	}

	sentinel := errors.New("sentinel")
	reg.Plugin("g").DemoGuard(func(context.Context, *DemoPayload) Verdict { panic(sentinel) })
	_, err = reg.RunDemoGuard(ctx, payload("x"))
	if le := wantListenerError(t, err, "g#1", sentinel); le.Panic != sentinel {
		t.Errorf("panic value %v", le.Panic)
	}

	reg.Plugin("w").WrapRun(func(ctx context.Context, p *DemoPayload, next RunNext) Decision {
		next.Call(ctx)
		panic(fmt.Sprintf("wrap %d", 1))
	})
	_, err = reg.RunRun(ctx, payload("x"), func(context.Context) Decision { return DemoAllow{} })
	if le := wantListenerError(t, err, "w#1", nil); le.Panic != "wrap 1" {
		t.Errorf("panic value %v", le.Panic)
	}

	// An inner panic is final even when the outer listener swallows the error from next.
	reg2 := NewRegistry()
	reg2.Plugin("outer").OnPolicy(func(ctx context.Context, p *DemoPayload, next PolicyNext) (Decision, error) {
		if _, err := next.Call(ctx); err == nil {
			t.Error("next did not report the inner failure")
		}
		return DemoAllow{}, nil
	})
	reg2.Plugin("inner").OnPolicy(func(context.Context, *DemoPayload, PolicyNext) (Decision, error) { panic("inner") })
	_, err = reg2.RunPolicy(ctx, payload("x"), nil)
	wantListenerError(t, err, "inner#1", nil)

	// A returned error is the listener's failure too.
	reg3 := NewRegistry()
	reg3.Plugin("e").OnPolicy(func(context.Context, *DemoPayload, PolicyNext) (Decision, error) { return nil, sentinel })
	_, err = reg3.RunPolicy(ctx, payload("x"), nil)
	wantListenerError(t, err, "e#1", sentinel)
}

func TestNilTerminal(t *testing.T) {
	ctx := context.Background()
	reg := NewRegistry()
	d, err := reg.RunPolicy(ctx, payload("x"), nil)
	if err != nil || d != (DemoAllow{}) {
		t.Errorf("no listeners: %#v, %v", d, err)
	}
	var inner Decision
	reg.OnPolicy(func(ctx context.Context, p *DemoPayload, next PolicyNext) (Decision, error) {
		d, err := next.Call(ctx)
		inner = d
		return d, err
	})
	d, err = reg.RunPolicy(ctx, payload("x"), nil)
	if err != nil || d != (DemoAllow{}) || inner != (DemoAllow{}) {
		t.Errorf("through a listener: %#v (inner %#v), %v", d, inner, err)
	}
	// A terminal error is the run's failure, returned as is.
	sentinel := errors.New("terminal")
	_, err = reg.RunPolicy(ctx, payload("x"), func(context.Context) (Decision, error) { return nil, sentinel })
	if err != sentinel {
		t.Errorf("terminal error: %v", err)
	}
	// A wrapper run needs a terminal.
	if _, err := reg.RunRun(ctx, payload("x"), nil); err == nil {
		t.Error("nil wrapper terminal accepted")
	}
}

func TestShortCircuitAndTransform(t *testing.T) {
	ctx := context.Background()
	reg := NewRegistry()
	var innerRan bool
	reg.OnPolicy(func(ctx context.Context, p *DemoPayload, next PolicyNext) (Decision, error) {
		d, err := next.Call(ctx)
		if err != nil {
			return nil, err
		}
		if d.Kind() == "deny" {
			return DemoReplace{Items: []Item{{ID: "outer"}}}, nil
		}
		return d, nil
	})
	reg.OnPolicy(func(ctx context.Context, p *DemoPayload, next PolicyNext) (Decision, error) {
		return DemoDeny{Reason: "inner"}, nil
	})
	reg.OnPolicy(func(ctx context.Context, p *DemoPayload, next PolicyNext) (Decision, error) {
		innerRan = true
		return next.Call(ctx)
	})
	d, err := reg.RunPolicy(ctx, payload("x"), nil)
	if err != nil || !reflect.DeepEqual(d, DemoReplace{Items: []Item{{ID: "outer"}}}) || innerRan {
		t.Errorf("%#v, %v, inner ran %v", d, err, innerRan)
	}
}

func TestGuard(t *testing.T) {
	ctx := context.Background()
	reg := NewRegistry()
	var log []string
	guard := func(name string, v Verdict) DemoGuardListener {
		return func(context.Context, *DemoPayload) Verdict {
			log = append(log, name)
			return v
		}
	}
	p := reg.Plugin("p")
	p.ForAgent("x").DemoGuard(guard("scoped-x", VerdictAbstain{}))
	p.ForAgent("y").DemoGuard(guard("scoped-y", VerdictDeny{Reason: "y"}))
	p.DemoGuard(guard("global1", VerdictAbstain{}))
	reg.DemoGuard(guard("global2", VerdictAbstain{}))
	d, err := reg.RunDemoGuard(ctx, payload("x"))
	if err != nil || d != (VerdictAbstain{}) {
		t.Errorf("all abstain: %#v, %v", d, err)
	}
	if got := strings.Join(log, " "); got != "global1 global2 scoped-x" {
		t.Errorf("order %q", got)
	}

	// First deny wins and stops.
	log = nil
	p.ForAgent("x").DemoGuard(guard("deny-x1", VerdictDeny{Reason: "first"}))
	p.ForAgent("x").DemoGuard(guard("deny-x2", VerdictDeny{Reason: "second"}))
	d, err = reg.RunDemoGuard(ctx, payload("x"))
	if err != nil || d != (VerdictDeny{Reason: "first"}) {
		t.Errorf("first deny: %#v, %v", d, err)
	}
	if got := strings.Join(log, " "); got != "global1 global2 scoped-x deny-x1" {
		t.Errorf("order %q", got)
	}

	// A guard registered during the run is seen by it.
	reg = NewRegistry()
	log = nil
	var once sync.Once
	reg.DemoGuard(func(context.Context, *DemoPayload) Verdict {
		log = append(log, "g1")
		once.Do(func() {
			reg.DemoGuard(guard("added-global", VerdictAbstain{}))
			reg.ForAgent("x").DemoGuard(guard("added-x", VerdictDeny{Reason: "late"}))
		})
		return VerdictAbstain{}
	})
	d, err = reg.RunDemoGuard(ctx, payload("x"))
	if err != nil || d != (VerdictDeny{Reason: "late"}) {
		t.Errorf("late guard: %#v, %v", d, err)
	}
	if got := strings.Join(log, " "); got != "g1 added-global added-x" {
		t.Errorf("order %q", got)
	}

	// A guard that unregisters itself during the run does not disturb it.
	reg = NewRegistry()
	log = nil
	var self func()
	self = reg.DemoGuard(func(context.Context, *DemoPayload) Verdict {
		log = append(log, "self")
		self()
		return VerdictAbstain{}
	})
	reg.DemoGuard(guard("after", VerdictAbstain{}))
	if _, err := reg.RunDemoGuard(ctx, payload("x")); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(log, " "); got != "self after" {
		t.Errorf("order %q", got)
	}
}

func TestWrapperContext(t *testing.T) {
	type key struct{}
	reg := NewRegistry()
	var log []string
	reg.WrapRun(func(ctx context.Context, p *DemoPayload, next RunNext) Decision {
		log = append(log, "outer")
		d := next.Call(context.WithValue(ctx, key{}, "outer"))
		if d.Kind() == "deny" {
			return DemoReplace{}
		}
		return d
	})
	reg.WrapRun(func(ctx context.Context, p *DemoPayload, next RunNext) Decision {
		log = append(log, fmt.Sprint("inner sees ", ctx.Value(key{})))
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		return next.Call(ctx)
	})
	d, err := reg.RunRun(context.Background(), payload("x"), func(ctx context.Context) Decision {
		log = append(log, fmt.Sprint("terminal sees ", ctx.Value(key{}), " ", ctx.Err()))
		return DemoDeny{Reason: "core"}
	})
	if err != nil || !reflect.DeepEqual(d, DemoReplace{}) {
		t.Errorf("%#v, %v", d, err)
	}
	if got := strings.Join(log, "; "); got != "outer; inner sees outer; terminal sees outer <nil>" {
		t.Errorf("log %q", got)
	}
}

func TestNotification(t *testing.T) {
	reg := NewRegistry()
	var ran []string
	e1 := errors.New("e1")
	reg.Plugin("a").OnStopping(func(context.Context, *DemoPayload) error { ran = append(ran, "a"); return e1 })
	reg.Plugin("b").OnStopping(func(context.Context, *DemoPayload) error { ran = append(ran, "b"); panic("b") })
	reg.Plugin("c").OnStopping(func(context.Context, *DemoPayload) error { ran = append(ran, "c"); return nil })
	err := reg.NotifyStopping(context.Background(), payload("x"))
	if got := strings.Join(ran, " "); got != "a b c" {
		t.Errorf("ran %q", got)
	}
	if !errors.Is(err, e1) {
		t.Errorf("error %v does not wrap e1", err)
	}
	errs := err.(interface{ Unwrap() []error }).Unwrap()
	if len(errs) != 2 {
		t.Fatalf("errors %v", errs)
	}
	wantListenerError(t, errs[0], "a#1", e1)
	if le := wantListenerError(t, errs[1], "b#1", nil); le.Panic != "b" {
		t.Errorf("panic %v", le.Panic)
	}
	if err := NewRegistry().NotifyStopping(context.Background(), payload("x")); err != nil {
		t.Errorf("no listeners: %v", err)
	}
}

func TestObserver(t *testing.T) {
	var buf bytes.Buffer
	var mu sync.Mutex
	reg := NewRegistry(WithLogger(slog.New(slog.NewTextHandler(lockedWriter{&mu, &buf}, nil))))
	var ran []string
	reg.Plugin("a").OnSeen(func(context.Context, *DemoPayload) { ran = append(ran, "a"); panic("observer boom") })
	reg.Plugin("b").OnSeen(func(context.Context, *DemoPayload) { ran = append(ran, "b") })
	err := reg.EmitSeen(context.Background(), payload("x"))
	if got := strings.Join(ran, " "); got != "a b" {
		t.Errorf("ran %q", got)
	}
	if le := wantListenerError(t, err, "a#1", nil); le.Panic != "observer boom" {
		t.Errorf("panic %v", le.Panic)
	}
	mu.Lock()
	logged := buf.String()
	mu.Unlock()
	for _, want := range []string{"observer failed", "event=demo/seen", "listener=a#1", "observer boom"} {
		if !strings.Contains(logged, want) {
			t.Errorf("log %q lacks %q", logged, want)
		}
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
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
			for i := 0; ; i++ {
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

// TestNotificationBounded: a listener that ignores its bounded context is abandoned and
// named; one that returns the cancellation is named too; the others run and their failures
// are returned; nothing waits for an abandoned listener.
func TestNotificationBounded(t *testing.T) {
	reg := NewRegistry()
	release := make(chan struct{})
	defer close(release)
	var ran []string
	var mu sync.Mutex
	note := func(s string) { mu.Lock(); ran = append(ran, s); mu.Unlock() }
	reg.Plugin("stuck").OnStopping(func(ctx context.Context, p *DemoPayload) error {
		<-release // ignores ctx
		return nil
	})
	reg.Plugin("polite").OnStopping(func(ctx context.Context, p *DemoPayload) error {
		<-ctx.Done()
		if !errors.Is(context.Cause(ctx), ErrListenerOverrun) {
			t.Errorf("cause = %v, want ErrListenerOverrun", context.Cause(ctx))
		}
		return ctx.Err()
	})
	reg.Plugin("quick").OnStopping(func(ctx context.Context, p *DemoPayload) error { note("quick"); return nil })
	reg.Plugin("failing").OnStopping(func(ctx context.Context, p *DemoPayload) error { return errors.New("boom") })
	start := time.Now()
	overran, err := reg.NotifyStoppingBounded(context.Background(), payload("x"), 30*time.Millisecond)
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("the bounded run took %s", d)
	}
	if strings.Join(overran, ",") != "stuck#1,polite#1" {
		t.Errorf("overran = %v, want [stuck#1 polite#1]", overran)
	}
	var le *ListenerError
	if !errors.As(err, &le) || le.Listener != "failing#1" || strings.Contains(err.Error(), "polite") {
		t.Errorf("err = %v, want only failing#1's failure", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(ran, ",") != "quick" {
		t.Errorf("ran = %v", ran)
	}
}

// TestVote: every listener votes, in registration order, whatever the others did; a
// failure, a panic, a nil decision and an overrun are votes without a decision; nothing
// waits for an abandoned listener; a scoped listener only sees its agent.
func TestVote(t *testing.T) {
	reg := NewRegistry()
	release := make(chan struct{})
	defer close(release)
	reg.Plugin("deny").OnVote(func(ctx context.Context, p *DemoPayload) (Decision, error) {
		return DemoDeny{Reason: "no"}, nil
	})
	reg.Plugin("failing").OnVote(func(ctx context.Context, p *DemoPayload) (Decision, error) {
		return nil, errors.New("boom")
	})
	reg.Plugin("panicking").OnVote(func(ctx context.Context, p *DemoPayload) (Decision, error) { panic("bang") })
	reg.Plugin("nil").OnVote(func(ctx context.Context, p *DemoPayload) (Decision, error) { return nil, nil })
	reg.Plugin("stuck").OnVote(func(ctx context.Context, p *DemoPayload) (Decision, error) {
		<-release // ignores ctx
		return DemoAllow{}, nil
	})
	reg.Plugin("allow").OnVote(func(ctx context.Context, p *DemoPayload) (Decision, error) { return DemoAllow{}, nil })
	reg.Plugin("other").ForAgent("y").OnVote(func(ctx context.Context, p *DemoPayload) (Decision, error) {
		return DemoDeny{Reason: "y"}, nil
	})
	start := time.Now()
	votes := reg.RunVote(context.Background(), payload("x"), 30*time.Millisecond)
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("the vote took %s", d)
	}
	var got []string
	for _, v := range votes {
		switch {
		case v.Overran:
			got = append(got, v.Listener+":overran")
		case v.Err != nil:
			var le *ListenerError
			if !errors.As(v.Err, &le) || le.Listener != v.Listener {
				t.Errorf("%s: err = %v, want its *ListenerError", v.Listener, v.Err)
			}
			got = append(got, v.Listener+":err")
		default:
			got = append(got, v.Listener+":"+string(v.Decision.Kind()))
		}
	}
	want := "deny#1:deny,failing#1:err,panicking#1:err,nil#1:err,stuck#1:overran,allow#1:allow"
	if strings.Join(got, ",") != want {
		t.Errorf("votes = %v, want %s", got, want)
	}
	if !reg.Listens(VoteEventName) {
		t.Error("Listens(VoteEventName) = false")
	}
}

// TestLongChains runs chains longer than a run keeps inline, in order; a wrapper that
// reuses its next then fails the run, with inner wrappers past the inline state.
func TestLongChains(t *testing.T) {
	reg := NewRegistry()
	var log []string
	for i := range 9 {
		reg.OnPolicy(logPolicy(&log, fmt.Sprint("p", i)))
		reg.WrapRun(func(ctx context.Context, p *DemoPayload, next RunNext) Decision {
			log = append(log, fmt.Sprint("w", i))
			return next.Call(ctx)
		})
	}
	ctx := context.Background()
	d, err := reg.RunPolicy(ctx, payload("x"), nil)
	if err != nil || d.Kind() != "allow" {
		t.Fatalf("%#v, %v", d, err)
	}
	d, err = reg.RunRun(ctx, payload("x"), func(context.Context) Decision { return DemoDeny{Reason: "core"} })
	if err != nil || d.Kind() != "deny" {
		t.Fatalf("%#v, %v", d, err)
	}
	if got := strings.Join(log, " "); got != "p0 p1 p2 p3 p4 p5 p6 p7 p8 w0 w1 w2 w3 w4 w5 w6 w7 w8" {
		t.Errorf("log %q", got)
	}
	reg.WrapRun(func(ctx context.Context, p *DemoPayload, next RunNext) Decision {
		next.Call(ctx)
		return next.Call(ctx)
	})
	reg.WrapRun(func(ctx context.Context, p *DemoPayload, next RunNext) Decision { return next.Call(ctx) })
	_, err = reg.RunRun(ctx, payload("x"), func(context.Context) Decision { return DemoDeny{Reason: "core"} })
	wantListenerError(t, err, "anonymous#19", ErrNextReused)
}

func TestNextValues(t *testing.T) {
	ctx := context.Background()
	// A listener called outside a registry, with a next made from a func.
	var log []string
	d, err := logPolicy(&log, "alone")(ctx, payload("x"), WaterfallNextFunc(func(context.Context) (Decision, error) {
		return DemoDeny{Reason: "from func"}, nil
	}))
	if err != nil || !reflect.DeepEqual(d, DemoDeny{Reason: "from func"}) || len(log) != 1 {
		t.Errorf("%#v, %v, %q", d, err, log)
	}
	r := WrapperNextFunc(func(context.Context) Decision { return DemoReplace{} }).Call(ctx)
	if !reflect.DeepEqual(r, DemoReplace{}) {
		t.Errorf("wrapper next from func: %#v", r)
	}
	// The zero next runs nothing.
	if d, err := (PolicyNext{}).Call(ctx); d != nil || err == nil {
		t.Errorf("zero waterfall next: %#v, %v", d, err)
	}
	if r := (RunNext{}).Call(ctx); r != nil {
		t.Errorf("zero wrapper next: %#v", r)
	}
}

// TestRunAllocations pins what a run allocates: the run itself, and nothing per listener
// (a next is a value), as long as the run keeps the listeners' state inline.
func TestRunAllocations(t *testing.T) {
	reg := NewRegistry()
	pass := func(ctx context.Context, p *DemoPayload, next PolicyNext) (Decision, error) { return next.Call(ctx) }
	wrap := func(ctx context.Context, p *DemoPayload, next RunNext) Decision { return next.Call(ctx) }
	ctx, p := context.Background(), payload("x")
	terminal := func(context.Context) Decision { return DemoAllow{} }
	if n := testing.AllocsPerRun(100, func() { reg.RunPolicy(ctx, p, nil); reg.RunRun(ctx, p, terminal) }); n != 0 {
		t.Errorf("runs without listeners allocate %v times", n)
	}
	for range 2 {
		reg.OnPolicy(pass)
		reg.WrapRun(wrap)
	}
	if n := testing.AllocsPerRun(100, func() { reg.RunPolicy(ctx, p, nil); reg.RunRun(ctx, p, terminal) }); n != 2 {
		t.Errorf("two runs of two listeners allocate %v times, want 2", n)
	}
}

// TestStaleNext: a next kept past its run fails as a call after its listener returned, and
// cannot reach a later run.
func TestStaleNext(t *testing.T) {
	reg := NewRegistry()
	ctx := context.Background()
	var (
		first    PolicyNext
		firstRun RunNext
	)
	reg.OnPolicy(func(ctx context.Context, p *DemoPayload, next PolicyNext) (Decision, error) {
		switch p.AgentID {
		case "first":
			first = next
		case "second":
			if d, err := first.Call(ctx); d != nil || !errors.Is(err, ErrNextReused) {
				t.Errorf("stale next in a later run: %#v, %v", d, err)
			}
		}
		return next.Call(ctx)
	})
	reg.WrapRun(func(ctx context.Context, p *DemoPayload, next RunNext) Decision {
		switch p.AgentID {
		case "first":
			firstRun = next
		case "second":
			if d := firstRun.Call(ctx); d != nil {
				t.Errorf("stale wrapper next in a later run: %#v", d)
			}
		}
		return next.Call(ctx)
	})
	var terminals atomic.Int32
	terminal := func(context.Context) Decision { terminals.Add(1); return DemoDeny{Reason: "core"} }
	for _, agent := range []string{"first", "second", "second"} {
		d, err := reg.RunPolicy(ctx, payload(agent), nil)
		if err != nil || d.Kind() != "allow" {
			t.Errorf("%s policy run: %#v, %v", agent, d, err)
		}
		if d, err := reg.RunRun(ctx, payload(agent), terminal); err != nil || d.Kind() != "deny" {
			t.Errorf("%s wrapper run: %#v, %v", agent, d, err)
		}
	}
	if n := terminals.Load(); n != 3 {
		t.Errorf("terminal ran %d times, want 3", n)
	}
}

// TestNextFromGoroutine: a listener may hand next to a goroutine and wait for it; a next
// called by a goroutine after its listener returned runs nothing, while other runs go on.
func TestNextFromGoroutine(t *testing.T) {
	reg := NewRegistry()
	ctx := context.Background()
	late := make(chan PolicyNext, 1)
	reg.OnPolicy(func(ctx context.Context, p *DemoPayload, next PolicyNext) (Decision, error) {
		if p.AgentID == "late" {
			late <- next
			return DemoDeny{Reason: "early"}, nil
		}
		var (
			d   Decision
			err error
			wg  sync.WaitGroup
		)
		wg.Go(func() { d, err = next.Call(ctx) })
		wg.Wait()
		return d, err
	})
	if d, err := reg.RunPolicy(ctx, payload("late"), nil); err != nil || d.Kind() != "deny" {
		t.Fatalf("%#v, %v", d, err)
	}
	stale := <-late
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 50 {
				if d, err := reg.RunPolicy(ctx, payload("x"), nil); err != nil || d.Kind() != "allow" {
					t.Errorf("%#v, %v", d, err)
				}
			}
		})
		wg.Go(func() {
			if _, err := stale.Call(ctx); !errors.Is(err, ErrNextReused) {
				t.Errorf("late next: %v", err)
			}
		})
	}
	wg.Wait()
}

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
