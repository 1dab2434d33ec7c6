// Behavioural tests of the notification and observer runners, run against the listener surface of
// surface_test.go (the shape dshgen generates), under -race in CI.

package dispatch_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dshkit/dsh/internal/syncbuf"
)

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
	var buf syncbuf.Buffer
	reg := NewRegistry(WithLogger(slog.New(slog.NewTextHandler(&buf, nil))))
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
	logged := buf.String()
	for _, want := range []string{"observer failed", "event=demo/seen", "listener=a#1", "observer boom"} {
		if !strings.Contains(logged, want) {
			t.Errorf("log %q lacks %q", logged, want)
		}
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
