package ctxblock

import (
	"context"
	"net"
	"net/http"
	"os/exec"
	"strings"
	"time"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/tools"
)

type Plugin struct{ client *http.Client }

func (p *Plugin) Guard(ctx context.Context, pl *dsh.GuardPayload) dsh.GuardVerdict {
	time.Sleep(time.Second)                                        // want `time.Sleep in method Plugin.Guard, a listener \(dsh.GuardListener\), blocks without its context, so cancelling the turn does not stop it: use a select on ctx.Done\(\) and a time.Timer`
	out, _ := exec.Command("git", "status").Output()               // want `exec.Command in method Plugin.Guard, .* use exec.CommandContext\(ctx, ...\)`
	if _, err := http.Get("http://127.0.0.1/policy"); err != nil { // want `http.Get in method Plugin.Guard`
		return dsh.GuardDeny{Reason: err.Error()}
	}
	http.Post("http://127.0.0.1/", "text/plain", strings.NewReader(string(out))) // want `http.Post in`
	http.Head("http://127.0.0.1/")                                               // want `http.Head in`
	p.client.Get("http://127.0.0.1/")                                            // want `\(\*http.Client\).Get in`
	http.NewRequest("GET", "http://127.0.0.1/", nil)                             // want `http.NewRequest in .* use http.NewRequestWithContext`
	net.Dial("tcp", "127.0.0.1:80")                                              // want `net.Dial in .* use \(&net.Dialer\{\}\).DialContext`
	return dsh.GuardAbstain{}
}

// The context-aware forms are fine.
func (p *Plugin) OnPreTool(ctx context.Context, pl *dsh.PreToolPayload, next dsh.PreToolNext) (dsh.PreToolDecision, error) {
	exec.CommandContext(ctx, "git", "status").Run()
	req, _ := http.NewRequestWithContext(ctx, "GET", "http://127.0.0.1/", nil)
	(&net.Dialer{}).DialContext(ctx, "tcp", "127.0.0.1:80")
	p.client.Do(req)
	t := time.NewTimer(time.Second)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-t.C:
	}
	return next.Call(ctx)
}

// A tool body, and a closure inside it.
var Sleepy = tools.Definition{Name: "sleepy", Run: func(ctx context.Context, rc *tools.RunContext) (any, error) {
	wait := func() {
		time.Sleep(time.Millisecond) // want `time.Sleep in func literal, a tool body, blocks without its context`
	}
	wait()
	return nil, nil
}}

// An observer listener is a listener too.
func Observe(ctx context.Context, pl *dsh.ToolResultPayload) {
	exec.Command("notify-send", pl.Exec.Name).Run() // want `exec.Command in function Observe, a listener \(dsh.ToolResultListener\)`
}

// Functions that are neither listeners nor tool bodies are not checked.
func setup() {
	time.Sleep(time.Millisecond)
	exec.Command("true").Run()
}
