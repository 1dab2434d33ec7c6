// Behavioural tests of the waterfall runner: next, panics, terminals and long chains, run against the listener surface of
// surface_test.go (the shape dshgen generates), under -race in CI.

package dispatch_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

func TestNextReused(t *testing.T) {
	reg := NewRegistry()
	var second error
	reg.Plugin("p").OnPolicy(func(ctx context.Context, p *DemoPayload, next PolicyNext) (Decision, error) {
		if _, err := next.Call(ctx); err != nil {
			return nil, err
		}
		_, second = next.Call(ctx) //dshvet:allow nextonce the test checks that a second call fails with ErrNextReused
		return DemoAllow{}, nil    // the run fails anyway
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
		next.Call(ctx) //dshvet:allow nextonce the test checks that a second call fails with ErrNextReused
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
		return next.Call(ctx) //dshvet:allow nextonce the test checks that a second call fails with ErrNextReused
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
			late <- next //dshvet:allow nextonce the test calls next after the listener returned, to see it fail
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
