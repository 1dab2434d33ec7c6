// Behavioural tests of the vote runner, run against the listener surface of
// surface_test.go (the shape dshgen generates), under -race in CI.

package dispatch_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

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
