package nextonce

import (
	"context"
	"errors"

	"github.com/dshkit/dsh/generated/dsh"
)

type Plugin struct {
	retry bool
	saved dsh.PreToolNext
	queue chan dsh.PreToolNext
}

var lastNext dsh.PostToolNext

// Saved keeps next for later.
func (p *Plugin) Saved(ctx context.Context, pl *dsh.PreToolPayload, next dsh.PreToolNext) (dsh.PreToolDecision, error) {
	p.saved = next  // want `next is stored in p.saved, where it outlives the listener`
	p.queue <- next // want `next is sent on a channel`
	n := next       // a local copy is fine
	return n.Call(ctx)
}

// Global keeps next in a package variable.
func Global(ctx context.Context, pl *dsh.PostToolPayload, next dsh.PostToolNext) (dsh.PostToolDecision, error) {
	lastNext = next // want `next is stored in lastNext`
	return dsh.PostToolAccept{}, nil
}

// Twice calls next twice in sequence.
func (p *Plugin) Twice(ctx context.Context, pl *dsh.PreToolPayload, next dsh.PreToolNext) (dsh.PreToolDecision, error) {
	d, err := next.Call(ctx)
	if err != nil {
		return nil, err
	}
	_ = d
	return next.Call(ctx) // want `next can be called a second time on this path`
}

// Retry calls next again on the error path: a second call on that path.
func (p *Plugin) Retry(ctx context.Context, pl *dsh.PreToolPayload, next dsh.PreToolNext) (dsh.PreToolDecision, error) {
	d, err := next.Call(ctx)
	if err != nil && p.retry {
		d, err = next.Call(ctx) // want `next can be called a second time on this path`
	}
	return d, err
}

// Loop calls next in a loop.
func Loop(ctx context.Context, pl *dsh.PostToolPayload, next dsh.PostToolNext) (dsh.PostToolDecision, error) {
	for i := 0; i < 3; i++ {
		if _, err := next.Call(ctx); err == nil { // want `next can be called a second time on this path`
			break
		}
	}
	return dsh.PostToolAccept{}, nil
}

// Branches calls next once on each of two paths: fine.
func (p *Plugin) Branches(ctx context.Context, pl *dsh.PreToolPayload, next dsh.PreToolNext) (dsh.PreToolDecision, error) {
	if pl.Exec.Name == "Bash" {
		return next.Call(ctx)
	}
	if p.retry {
		d, err := next.Call(ctx)
		return d, err
	}
	return dsh.PreToolDeny{Reason: "no"}, nil
}

// Once calls next once, or not at all: fine.
func Once(ctx context.Context, pl *dsh.PostToolPayload, next dsh.PostToolNext) (dsh.PostToolDecision, error) {
	if pl.Exec.Name == "" {
		return dsh.PostToolHalt{Reason: "no name"}, nil
	}
	d, err := next.Call(ctx)
	if err != nil {
		return nil, err
	}
	return d, nil
}

// AfterPanic: the call after a panic is unreachable, not a second call.
func AfterPanic(ctx context.Context, pl *dsh.PreToolPayload, next dsh.PreToolNext) (dsh.PreToolDecision, error) {
	if _, err := next.Call(ctx); err != nil {
		panic(err)
	}
	return dsh.PreToolAllow{}, nil
}

// Wrap is a wrapper calling next twice.
func Wrap(ctx context.Context, pl *dsh.ExecutePayload, next dsh.ExecuteNext) dsh.ToolExecutionResult {
	r := next.Call(ctx)
	if _, failed := r.(dsh.ToolFailure); failed {
		return next.Call(ctx) // want `next can be called a second time on this path`
	}
	return r
}

// Late calls next in a goroutine and returns its own decision.
func Late(ctx context.Context, pl *dsh.PreToolPayload, next dsh.PreToolNext) (dsh.PreToolDecision, error) {
	go func() {
		d, _ := next.Call(ctx) // want `next is called in a go statement, so it can run after the listener returned`
		_ = d
	}()
	return dsh.PreToolDeny{Reason: "no"}, nil
}

// Deferred calls next after the listener returned.
func Deferred(ctx context.Context, pl *dsh.PreToolPayload, next dsh.PreToolNext) (dsh.PreToolDecision, error) {
	defer next.Call(ctx) // want `next is called in a defer statement`
	return dsh.PreToolAllow{}, nil
}

// A func literal listener is checked like a method.
var _ dsh.PostToolListener = func(ctx context.Context, pl *dsh.PostToolPayload, next dsh.PostToolNext) (dsh.PostToolDecision, error) {
	d, err := next.Call(ctx)
	if errors.Is(err, context.Canceled) {
		d, err = next.Call(ctx) // want `next can be called a second time on this path`
	}
	return d, err
}

// helper takes a next value but is not called by the runtime: it is checked all the same.
func helper(ctx context.Context, next dsh.PreToolNext) {
	next.Call(ctx)
	next.Call(ctx) // want `next can be called a second time`
}

// Select calls next in one of two select cases: fine.
func Select(ctx context.Context, pl *dsh.PreToolPayload, next dsh.PreToolNext) (dsh.PreToolDecision, error) {
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	default:
		return next.Call(ctx)
	}
}

// A finding the code means (a test of what the runtime does with a misbehaving listener)
// carries //dshvet:allow with the analyzer's name and a reason, on its line or above.
func (p *Plugin) TwiceOnPurpose(ctx context.Context, pl *dsh.PreToolPayload, next dsh.PreToolNext) (dsh.PreToolDecision, error) {
	if _, err := next.Call(ctx); err != nil {
		return nil, err
	}
	//dshvet:allow nextonce the test checks that a second call fails
	return next.Call(ctx)
}

func (p *Plugin) SavedOnPurpose(ctx context.Context, pl *dsh.PreToolPayload, next dsh.PreToolNext) (dsh.PreToolDecision, error) {
	p.saved = next //dshvet:allow nextonce the test calls it late, to see it fail
	return dsh.PreToolAllow{}, nil
}

// A marker needs a reason, must allow something, and only allows the analyzer it names.
func (p *Plugin) TwiceWithoutReason(ctx context.Context, pl *dsh.PreToolPayload, next dsh.PreToolNext) (dsh.PreToolDecision, error) {
	if _, err := next.Call(ctx); err != nil {
		return nil, err
	}
	//dshvet:allow nextonce // want `//dshvet:allow nextonce needs a reason`
	return next.Call(ctx) // want `next can be called a second time on this path`
}

func (p *Plugin) OnceMarked(ctx context.Context, pl *dsh.PreToolPayload, next dsh.PreToolNext) (dsh.PreToolDecision, error) {
	//dshvet:allow nextonce nothing to allow // want `//dshvet:allow nextonce allows nothing here: remove it`
	return next.Call(ctx)
}

func (p *Plugin) TwiceOtherAnalyzer(ctx context.Context, pl *dsh.PreToolPayload, next dsh.PreToolNext) (dsh.PreToolDecision, error) {
	if _, err := next.Call(ctx); err != nil {
		return nil, err
	}
	//dshvet:allow ctxblock names another analyzer
	return next.Call(ctx) // want `next can be called a second time on this path`
}
