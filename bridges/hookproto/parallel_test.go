package hookproto

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dshkit/dsh/internal/syncbuf"
)

// Decision 3: ten hooks of 200 ms each start together.
func TestRunAllStartsTogether(t *testing.T) {
	hook := script(t, `sleep 0.2; echo "$HOOK_INDEX"`)
	cmds := make([]Command, 10)
	for i := range cmds {
		cmds[i] = sh(hook)
		cmds[i].Env = []string{"HOOK_INDEX=" + strconv.Itoa(i)}
	}
	start := time.Now()
	results := RunAll(context.Background(), cmds)
	wall := time.Since(start)
	t.Logf("10 hooks x 200 ms: wall time %v", wall)
	if wall >= time.Second {
		t.Errorf("wall time %v, want well under 1 s", wall)
	}
	for i, r := range results {
		if got := strings.TrimSpace(string(r.Stdout)); got != strconv.Itoa(i) || exitCode(r) != "0" {
			t.Errorf("results[%d]: stdout %q exit %s", i, got, exitCode(r))
		}
	}
}

// Results come back in input (configuration) order even when the hooks finish in the
// reverse order.
func TestRunAllKeepsInputOrder(t *testing.T) {
	cmds := make([]Command, 5)
	for i := range cmds {
		cmds[i] = Command{Command: fmt.Sprintf("sleep 0.%d; echo %d", 5-i, i)}
	}
	for i, r := range RunAll(context.Background(), cmds) {
		if got := strings.TrimSpace(string(r.Stdout)); got != strconv.Itoa(i) {
			t.Errorf("results[%d] = %q", i, got)
		}
	}
	if got := RunAll(context.Background(), nil); len(got) != 0 {
		t.Errorf("RunAll(nil) = %v", got)
	}
}

func TestDetachedCompletes(t *testing.T) {
	d := NewDetached(context.Background(), nil)
	got := make(chan Result, 1)
	d.Go(context.Background(), Command{Command: "echo async"}, func(r Result) { got <- r })
	select {
	case r := <-got:
		if string(r.Stdout) != "async\n" || exitCode(r) != "0" {
			t.Errorf("got %+v", r)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("detached run never finished")
	}
	if err := d.Drain(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// Drain kills running hooks and waits for them, including one started during the drain
// (scenario 49: dispose resolves only after the pid is gone).
func TestDetachedDrain(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	d := NewDetached(context.Background(), nil)
	var mu sync.Mutex
	var results []Result
	record := func(r Result) { mu.Lock(); results = append(results, r); mu.Unlock() }
	d.Go(context.Background(), sh(script(t, "echo $$ > "+pidFile+"; sleep 30")), func(r Result) {
		record(r)
		// Started while Drain is waiting: cancelled before it spawns, still awaited.
		d.Go(context.Background(), Command{Command: "sleep 30"}, record)
	})
	pid := readPID(t, pidFile)

	start := time.Now()
	if err := d.Drain(context.Background()); err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el > 3*time.Second {
		t.Errorf("Drain took %v", el)
	}
	waitGone(t, pid)
	mu.Lock()
	defer mu.Unlock()
	if len(results) != 2 || !results[0].Cancelled || !results[1].Cancelled {
		t.Fatalf("results after Drain: %+v, want two cancelled runs", results)
	}
}

func TestDetachedDrainDeadline(t *testing.T) {
	d := NewDetached(context.Background(), nil)
	release := make(chan struct{})
	d.Go(context.Background(), Command{Command: "true"}, func(Result) { <-release })
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := d.Drain(ctx); err != context.DeadlineExceeded {
		t.Errorf("Drain = %v, want deadline exceeded", err)
	}
	close(release)
	if err := d.Drain(context.Background()); err != nil {
		t.Errorf("second Drain = %v", err)
	}
}

func TestDetachedCallbackPanicIsLogged(t *testing.T) {
	var logs syncbuf.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	d := NewDetached(context.Background(), log)
	d.Go(context.Background(), Command{Command: "true"}, func(Result) { panic("boom") })
	if err := d.Drain(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), "panicked") || !strings.Contains(logs.String(), "boom") {
		t.Errorf("log = %q", logs.String())
	}
}

// Wait returns once every detached run has finished (its callback included), run after
// run, and the tracker is idle again in between.
func TestDetachedWaitCountsRuns(t *testing.T) {
	d := NewDetached(context.Background(), nil)
	var done atomic.Int32
	for round := 1; round <= 2; round++ {
		for range 2 {
			d.Go(context.Background(), Command{Command: "sleep 0.05"}, func(Result) { done.Add(1) })
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err := d.Wait(ctx)
		cancel()
		if err != nil {
			t.Fatalf("round %d: Wait = %v", round, err)
		}
		if got := done.Load(); got != int32(2*round) {
			t.Errorf("round %d: Wait returned after %d callbacks, want %d", round, got, 2*round)
		}
	}
	if err := d.Drain(context.Background()); err != nil {
		t.Fatal(err)
	}
}
