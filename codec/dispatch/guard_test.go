// Behavioural tests of the guard runner, run against the listener surface of
// surface_test.go (the shape dshgen generates), under -race in CI.

package dispatch_test

import (
	"context"
	"strings"
	"sync"
	"testing"
)

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
