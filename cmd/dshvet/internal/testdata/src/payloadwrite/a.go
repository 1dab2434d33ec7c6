package payloadwrite

import (
	"context"

	"github.com/dshkit/dsh/generated/dsh"
)

type Plugin struct{}

func (p *Plugin) OnPreTool(ctx context.Context, pl *dsh.PreToolPayload, next dsh.PreToolNext) (dsh.PreToolDecision, error) {
	pl.Exec.Name = "Read"          // want `the payload of a PreToolListener is written \(pl.Exec.Name assigned\): payloads are snapshots, .*return the dsh.PreToolDecision that says what you meant \(dsh.PreToolAllow, dsh.PreToolAsk, dsh.PreToolDeny\) instead`
	pl.Exec.Arguments[0] = '{'     // want `pl.Exec.Arguments\[0\] assigned`
	pl.Exec.Meta["k"] = "v"        // want `pl.Exec.Meta\["k"\] assigned`
	pl.Tags = append(pl.Tags, "x") // want `pl.Tags assigned`
	pl.Exec.Arguments[1]++         // want `pl.Exec.Arguments\[1\] assigned`
	delete(pl.Exec.Meta, "k")      // want `pl.Exec.Meta cleared by delete`
	copy(pl.Exec.Arguments, "{}")  // want `pl.Exec.Arguments written by copy`
	copy(pl.Tags[:0], pl.Tags)     // want `pl.Tags\[:0\] written by copy`
	*pl = dsh.PreToolPayload{}     // want `\*pl assigned`

	// Reading, copying, and writing a copy are fine.
	name := pl.Exec.Name
	buf := make([]byte, 2)
	copy(buf, pl.Exec.Arguments)
	exec := pl.Exec
	exec.Name = name + "!"
	local := *pl
	local.Tags = nil
	pl = &local // the variable, not the payload
	_ = pl
	return next.Call(ctx)
}

// A decision variant with a field of the name written is named.
func OnPost(ctx context.Context, pl *dsh.PostToolPayload, next dsh.PostToolNext) (dsh.PostToolDecision, error) {
	pl.AdditionalContexts = append(pl.AdditionalContexts, "note") // want `return dsh.PostToolAccept\{AdditionalContexts: ...\} \(a dsh.PostToolDecision\) instead`
	return next.Call(ctx)
}

// An observer cannot change the run.
func Observe(ctx context.Context, pl *dsh.ToolResultPayload) {
	pl.Exec.Name = "" // want `an observer cannot change the run`
}

// Closures inside a listener are part of it.
func Guard(ctx context.Context, pl *dsh.GuardPayload) dsh.GuardVerdict {
	reset := func() {
		pl.Exec.Name = "" // want `the payload of a GuardListener is written`
	}
	reset()
	return dsh.GuardAbstain{}
}

// A function that is not a listener may write to what it gets.
func prepare(pl *dsh.PreToolPayload) {
	pl.Exec.Name = "Bash"
}
