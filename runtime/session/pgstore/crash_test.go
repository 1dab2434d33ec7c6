package pgstore

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/session"
)

// The child's environment: the database URL, the session, and for the writer mode
// whether to take over and the lease TTL.
const (
	childURL      = "DSH_PGSTORE_URL"
	childSession  = "DSH_PGSTORE_SESSION"
	childTakeover = "DSH_PGSTORE_TAKEOVER"
	childTTL      = "DSH_PGSTORE_TTL"
)

// child runs the test binary as a writer process. It opens the session like an agent
// resuming it (take the lease, replay, close an interrupted turn) and prints "ready N
// EPOCH", or "refused MESSAGE" (exit 2) when another writer holds the lease. Then, in
// mode "crash", it appends whole turns with SyncEveryEvent until it is killed, printing
// "ack SEQ TYPE" after each Append returns; in mode "writer", it appends one whole turn for
// each line on stdin, printing "ack SEQ TYPE" for each event, then "done", or "err
// MESSAGE" when an append fails. Each line is one write to an unbuffered pipe.
func child(mode string) int {
	ctx := context.Background()
	fail := func(format string, args ...any) int {
		fmt.Fprintf(os.Stderr, "child: "+format+"\n", args...)
		return 3
	}
	db, err := Connect(ctx, os.Getenv(childURL))
	if err != nil {
		return fail("%v", err)
	}
	defer db.Close()
	var opts []OpenOption
	if mode == "crash" || os.Getenv(childTakeover) != "" {
		opts = append(opts, WithTakeover())
	}
	if ttl, err := time.ParseDuration(os.Getenv(childTTL)); err == nil {
		opts = append(opts, WithLeaseTTL(ttl))
	}
	st, err := db.Open(ctx, os.Getenv(childSession), opts...)
	if errors.Is(err, ErrLeaseHeld) {
		fmt.Printf("refused %s\n", err)
		return 2
	}
	if err != nil {
		return fail("%v", err)
	}
	l, err := session.Open(ctx, st, session.WithSyncPolicy(session.SyncEveryEvent))
	if err != nil {
		return fail("%v", err)
	}
	state, err := session.Replay(l.Events())
	if err != nil {
		return fail("Replay: %v", err)
	}
	if err := session.CloseInterrupted(ctx, l, state); err != nil {
		return fail("CloseInterrupted: %v", err)
	}
	os.Stdout.WriteString(fmt.Sprintf("ready %d %d\n", l.Len(), st.Epoch()))
	rng := rand.New(rand.NewPCG(uint64(os.Getpid()), uint64(time.Now().UnixNano())))
	turn := func(n int) error {
		size := 16 + rng.IntN(512)
		if rng.IntN(4) == 0 {
			size = 8<<10 + rng.IntN(32<<10)
		}
		for _, d := range turnEvents(n, size) {
			ev, err := l.Append(ctx, d)
			if err != nil {
				return err
			}
			os.Stdout.WriteString("ack " + strconv.FormatInt(ev.Seq, 10) + " " + ev.Type + "\n")
		}
		return nil
	}
	n := state.LastTurn + 1
	if mode == "crash" {
		for ; ; n++ {
			if err := turn(n); err != nil {
				return fail("append: %v", err)
			}
		}
	}
	sc := bufio.NewScanner(os.Stdin)
	for ; sc.Scan(); n++ {
		if err := turn(n); err != nil {
			os.Stdout.WriteString("err " + strings.Join(strings.Fields(err.Error()), " ") + "\n")
			continue
		}
		os.Stdout.WriteString("done\n")
	}
	l.Close()
	return 0
}

// proc is a running child writer.
type proc struct {
	cmd   *exec.Cmd
	in    io.WriteCloser
	out   *bufio.Reader
	ready string // the ready (or refused) line
}

// startChild starts a child writer in mode for session id at url, with extra environment,
// and reads its first line.
func startChild(t *testing.T, mode, url, id string, env ...string) *proc {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+mode, childURL+"="+url, childSession+"="+id)
	cmd.Env = append(cmd.Env, env...)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &proc{cmd: cmd, in: in, out: bufio.NewReader(out)}
	t.Cleanup(func() { p.cmd.Process.Kill(); p.cmd.Wait() })
	p.ready = p.line(t)
	return p
}

// line reads the child's next line ("" at the end of its output).
func (p *proc) line(t *testing.T) string {
	t.Helper()
	s, err := p.out.ReadString('\n')
	if err != nil && s == "" {
		return ""
	}
	return strings.TrimSuffix(s, "\n")
}

// kill kills the child with SIGKILL and reaps it.
func (p *proc) kill() {
	p.cmd.Process.Signal(syscall.SIGKILL)
	p.cmd.Wait()
}

// TestCrashKill kills a writer process with SIGKILL 30 times at random points of its
// turns, and after each kill checks that every event it acknowledged is in the session,
// that the session is a contiguous sequence of whole events (no partial record), and that
// the next writer (taking the lease over, as a supervisor that saw the crash does)
// resumes it.
func TestCrashKill(t *testing.T) {
	url := server(t).Schema(t)
	ctx := context.Background()
	db := connect(t, url)
	const kills = 30
	rng := rand.New(rand.NewPCG(1, uint64(time.Now().UnixNano())))
	acked := map[int64]string{}
	midTurn := 0
	for i := range kills {
		p := startChild(t, "crash", url, "crash")
		var n, epoch int64
		if _, err := fmt.Sscanf(p.ready, "ready %d %d", &n, &epoch); err != nil {
			t.Fatalf("kill %d: child said %q", i, p.ready)
		}
		if epoch != int64(i+1) {
			t.Fatalf("kill %d: epoch %d, want %d", i, epoch, i+1)
		}
		if want := len(acked); n < int64(want) {
			t.Fatalf("kill %d: the resumed log holds %d events, %d were acknowledged", i, n, want)
		}
		// Let it acknowledge a random number of events, then kill it while it appends.
		for range 1 + rng.IntN(30) {
			line := p.line(t)
			var seq int64
			var typ string
			if _, err := fmt.Sscanf(line, "ack %d %s", &seq, &typ); err != nil {
				t.Fatalf("kill %d: child said %q", i, line)
			}
			acked[seq] = typ
		}
		p.kill()
		// Acknowledgments written before the kill landed still count.
		for {
			line := p.line(t)
			if line == "" {
				break
			}
			var seq int64
			var typ string
			if _, err := fmt.Sscanf(line, "ack %d %s", &seq, &typ); err == nil {
				acked[seq] = typ
			}
		}
		evs := events(t, db.Events(ctx, "crash"))
		for seq, typ := range acked {
			if seq >= int64(len(evs)) || evs[seq].Type != typ {
				t.Fatalf("kill %d: acknowledged event %d (%s) is missing from the %d events", i, seq, typ, len(evs))
			}
		}
		if last := evs[len(evs)-1]; last.Type != dsh.TurnEndType {
			midTurn++
		}
	}
	// One last writer resumes the session and ends cleanly; the whole log replays.
	l, _ := openLog(t, db, "crash", WithTakeover())
	st, err := session.Replay(l.Events())
	if err != nil {
		t.Fatal(err)
	}
	if err := session.CloseInterrupted(ctx, l, st); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d kills, %d of them mid-turn; %d events acknowledged", kills, midTurn, len(acked))
	if midTurn == 0 {
		t.Errorf("no kill landed inside a turn")
	}
}

// TestFencingTwoProcesses: two processes open one session and the second is refused; a
// frozen first writer is taken over by a third process, and when it wakes its late append
// is rejected; the third is killed and a fourth opens the session once the dead writer's
// lease expires. The log holds exactly the acknowledged turns.
func TestFencingTwoProcesses(t *testing.T) {
	url := server(t).Schema(t)
	ctx := context.Background()
	db := connect(t, url)
	turn := func(p *proc) (last string) {
		t.Helper()
		if _, err := io.WriteString(p.in, "turn\n"); err != nil {
			t.Fatal(err)
		}
		for {
			line := p.line(t)
			switch {
			case line == "done" || strings.HasPrefix(line, "err ") || line == "":
				return line
			case !strings.HasPrefix(line, "ack "):
				t.Fatalf("child said %q", line)
			}
		}
	}
	a := startChild(t, "writer", url, "fence")
	if a.ready != "ready 0 1" {
		t.Fatalf("first writer: %q", a.ready)
	}
	if got := turn(a); got != "done" {
		t.Fatalf("first writer's turn: %q", got)
	}
	b := startChild(t, "writer", url, "fence")
	if !strings.HasPrefix(b.ready, "refused ") || !strings.Contains(b.ready, "held by") || !strings.Contains(b.ready, "epoch 1") {
		t.Fatalf("second writer: %q, want refused while the first holds the lease", b.ready)
	}
	b.cmd.Wait()

	// Freeze the first writer (a hung or partitioned process), take over.
	freeze(t, a.cmd.Process)
	c := startChild(t, "writer", url, "fence", childTakeover+"=1", childTTL+"=1s")
	if c.ready != "ready 9 2" {
		t.Fatalf("takeover: %q, want ready with the 9 events at epoch 2", c.ready)
	}
	if got := turn(c); got != "done" {
		t.Fatalf("new writer's turn: %q", got)
	}
	thaw(a.cmd.Process)
	if got := turn(a); !strings.HasPrefix(got, "err ") || !strings.Contains(got, "fenced") {
		t.Fatalf("late append of the fenced writer: %q, want a fenced error", got)
	}

	// Kill the new writer: its lease (1 s) is live at first, then expires.
	c.kill()
	d := startChild(t, "writer", url, "fence")
	if !strings.HasPrefix(d.ready, "refused ") {
		t.Fatalf("right after the kill: %q, want refused", d.ready)
	}
	d.cmd.Wait()
	time.Sleep(1500 * time.Millisecond)
	e := startChild(t, "writer", url, "fence")
	if e.ready != "ready 18 3" {
		t.Fatalf("after the lease expired: %q, want ready with 18 events at epoch 3", e.ready)
	}
	if got := turn(e); got != "done" {
		t.Fatalf("fourth writer's turn: %q", got)
	}
	e.in.Close()
	if err := e.cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	evs := events(t, db.Events(ctx, "fence"))
	if len(evs) != 27 {
		t.Fatalf("%d events, want 3 whole turns (27)", len(evs))
	}
	st, err := session.Replay(func(yield func(session.Event, error) bool) {
		for _, ev := range evs {
			if !yield(ev, nil) {
				return
			}
		}
	})
	if err != nil || st.LastTurn != 3 || st.TurnOpen {
		t.Fatalf("replay: %+v %v", st, err)
	}
}
