package hookproto

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
)

// RunAll starts every command at once and waits for all of them (dsh bridge decision 3).
// results[i] is the result of cmds[i], whatever order they finished in.
func RunAll(ctx context.Context, cmds []Command) []Result {
	results := make([]Result, len(cmds))
	var wg sync.WaitGroup
	for i, c := range cmds {
		wg.Go(func() { results[i] = Run(ctx, c) })
	}
	wg.Wait()
	return results
}

// Detached tracks hook runs that nobody awaits (async:true hooks, dsh bridge decision 7)
// so that they can all be stopped and waited for at disposal. It is safe for concurrent
// use.
type Detached struct {
	ctx    context.Context
	cancel context.CancelFunc
	log    *slog.Logger

	mu      sync.Mutex
	running int
	idle    chan struct{} // closed while running == 0
}

// NewDetached returns an empty tracker. Its runs are cancelled when ctx ends or on
// [Detached.Drain]; log receives panics from onDone callbacks (nil discards them).
func NewDetached(ctx context.Context, log *slog.Logger) *Detached {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(ctx)
	idle := make(chan struct{})
	close(idle)
	return &Detached{ctx: ctx, cancel: cancel, log: log, idle: idle}
}

// Go starts cmd in the background and returns at once. The run is cancelled when ctx
// ends (pass context.WithoutCancel to let it outlive the caller) or when the tracker is
// drained; started after a drain, it is cancelled before it spawns anything. onDone, if
// not nil, receives the result on the run's goroutine; a panic in it is recovered and
// logged.
func (d *Detached) Go(ctx context.Context, cmd Command, onDone func(Result)) {
	d.mu.Lock()
	if d.running == 0 {
		d.idle = make(chan struct{})
	}
	d.running++
	d.mu.Unlock()

	go func() {
		defer d.finish()
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		stop := context.AfterFunc(d.ctx, cancel)
		defer stop()
		if d.ctx.Err() != nil {
			cancel() // drained: do not wait for AfterFunc's goroutine
		}
		res := Run(ctx, cmd)
		if onDone != nil {
			defer func() {
				if p := recover(); p != nil {
					d.log.ErrorContext(ctx, "detached hook callback panicked",
						"command", cmd.Command, "panic", fmt.Sprint(p))
				}
			}()
			onDone(res)
		}
	}()
}

func (d *Detached) finish() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.running--; d.running == 0 {
		close(d.idle)
	}
}

// Drain cancels every run (killing their process groups) and waits until none is left,
// including runs started while it waits. It returns ctx.Err() if ctx ends first. After
// Drain, new runs are cancelled at once.
func (d *Detached) Drain(ctx context.Context) error {
	d.cancel()
	for {
		d.mu.Lock()
		idle, running := d.idle, d.running
		d.mu.Unlock()
		if running == 0 {
			return nil
		}
		select {
		case <-idle:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Wait waits until no run is left, without cancelling any (runs started while it waits
// are waited for too). It returns ctx.Err() if ctx ends first.
func (d *Detached) Wait(ctx context.Context) error {
	for {
		d.mu.Lock()
		idle, running := d.idle, d.running
		d.mu.Unlock()
		if running == 0 {
			return nil
		}
		select {
		case <-idle:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
