package hookproto

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A cancelled (or timed-out) run sends SIGTERM to the hook's whole process group, not
// only to its leader, so that every process of the hook can clean up before the SIGKILL:
// here a child of the hook traps TERM and reports it, and the hook waits for that child.
// Were only the leader signalled, the child would never see TERM and would be killed
// after KillGrace without reporting.
func TestRunTermReachesTheWholeGroup(t *testing.T) {
	ready := filepath.Join(t.TempDir(), "ready")
	// The child traps TERM, reports it on stdout and exits; the hook (the group leader,
	// hence the exec form) waits for its child, also once it got TERM itself.
	child := `trap 'echo child-term; exit 0' TERM; echo $$ > ` + ready + `; while :; do sleep 0.05; done`
	hook := "sh -c '" + strings.ReplaceAll(child, "'", `'\''`) + "' &\n" +
		"trap 'wait $!; exit 0' TERM\n" +
		"wait"
	c := Command{Command: "/bin/sh", Args: []string{script(t, hook)}}
	c.KillGrace = 5 * time.Second
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { pollPID(ready); cancel() }()
	start := time.Now()
	r := Run(ctx, c)
	if !r.Cancelled {
		t.Fatalf("got %+v, want Cancelled", r)
	}
	if got := string(r.Stdout); got != "child-term\n" {
		t.Errorf("stdout %q, want %q: the hook's child never saw SIGTERM", got, "child-term\n")
	}
	if el := time.Since(start); el >= c.KillGrace {
		t.Errorf("returned after %v: the group needed the SIGKILL", el)
	}
	waitGone(t, readPID(t, ready))
}

// Output that fills the cap exactly is not over it; one byte more is.
func TestRunOutputCapBoundary(t *testing.T) {
	for out, over := range map[string]bool{"abcde": false, "abcdef": true} {
		c := Command{Command: "printf " + out, MaxStdout: 5}
		r := Run(context.Background(), c)
		if string(r.Stdout) != out[:5] || r.StdoutOverCap != over {
			t.Errorf("printf %s under a 5-byte cap: stdout %q, over %v; want %q, %v", out, r.Stdout, r.StdoutOverCap, out[:5], over)
		}
	}
}
