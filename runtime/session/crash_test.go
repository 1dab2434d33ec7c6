package session

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dshkit/dsh/generated/dsh"
)

// crashChildEnv switches the test binary into the crash-test child (see TestMain); its
// value is the log path.
const crashChildEnv = "DSH_SESSION_CRASH_CHILD"

func TestMain(m *testing.M) {
	if path := os.Getenv(crashChildEnv); path != "" {
		os.Exit(crashChild(path))
	}
	os.Exit(m.Run())
}

// crashChild resumes the log at path like an agent would (recover, replay, close an
// interrupted turn) and then appends whole turns with SyncEveryEvent until it is killed.
// It prints "ready N" once the log is open with N events, then "ack SEQ TYPE" after each
// Append returns; each line is a single write to an unbuffered pipe.
func crashChild(path string) int {
	ctx := context.Background()
	fail := func(format string, args ...any) int {
		fmt.Fprintf(os.Stderr, "crash child: "+format+"\n", args...)
		return 3
	}
	f, _, err := OpenFile(path)
	if err != nil {
		return fail("OpenFile: %v", err)
	}
	l, err := Open(ctx, f, WithSyncPolicy(SyncEveryEvent))
	if err != nil {
		return fail("Open: %v", err)
	}
	st, err := Replay(l.Events())
	if err != nil {
		return fail("Replay: %v", err)
	}
	if err := CloseInterrupted(ctx, l, st); err != nil {
		return fail("CloseInterrupted: %v", err)
	}
	fmt.Fprintf(os.Stdout, "ready %d\n", l.Len())
	rng := rand.New(rand.NewPCG(uint64(os.Getpid()), uint64(time.Now().UnixNano())))
	appendAck := func(d dsh.SessionEventData, opts ...AppendOption) (Event, bool) {
		ev, err := l.Append(ctx, d, opts...)
		if err != nil {
			fail("Append: %v", err)
			return ev, false
		}
		os.Stdout.WriteString("ack " + strconv.FormatInt(ev.Seq, 10) + " " + ev.Type + "\n")
		return ev, true
	}
	for turn := st.LastTurn + 1; ; turn++ {
		// Tool outputs of up to 40 KiB make multi-page writes that a kill can tear.
		// (The big payload is in tool/result, which Replay does not decode, to keep the
		// test fast under the race detector.)
		size := 16 + rng.IntN(512)
		if rng.IntN(4) == 0 {
			size = 8<<10 + rng.IntN(32<<10)
		}
		m := msg(fmt.Sprintf("m%d", turn), fmt.Sprintf("prompt %d", turn))
		steps := []dsh.SessionEventData{
			splice(dsh.InboxTargetNextTurn, 0, 0, m),
			dsh.TurnStart{Turn: turn},
			splice(dsh.InboxTargetNextTurn, 0, 1),
			dsh.StepStart{Turn: turn, Step: 1},
			dsh.UserMessageLogged{Message: m},
			dsh.ToolCall{Turn: turn, Step: 1, CallID: "c", Name: "echo", Arguments: "{}"},
		}
		var call Event
		for _, d := range steps {
			ev, ok := appendAck(d)
			if !ok {
				return 3
			}
			call = ev
		}
		result := dsh.ToolResultLogged{Turn: turn, Step: 1, Message: dsh.UserMessage{
			ID: fmt.Sprintf("r%d", turn), Role: dsh.UserMessageRoleUser, Source: dsh.SourceTool{CallID: "c"},
			Content: []dsh.ContentBlock{dsh.ToolResultBlock{ToolCallID: "c", Content: []dsh.ContentBlock{dsh.TextBlock{Text: strings.Repeat("x", size)}}}},
		}}
		if _, ok := appendAck(result, WithSources(call.Seq)); !ok {
			return 3
		}
		for _, d := range []dsh.SessionEventData{
			dsh.StepEnd{Turn: turn, Step: 1},
			dsh.TurnEnd{Turn: turn, Reason: dsh.TurnEndCompleted{}},
		} {
			if _, ok := appendAck(d); !ok {
				return 3
			}
		}
	}
}

// TestCrashRecovery kills a child appending with SyncEveryEvent at random points and
// checks, after each kill, that the log reopens as a contiguous valid prefix that holds
// every seq the child acknowledged, and that it replays. Each file goes through several
// kills, so children also resume logs that earlier children left with an open turn.
//
// A SIGKILL rarely lands inside the single write(2) of a line, so torn tails are counted
// when they happen, and covered deterministically by TestFileRecovery.
func TestCrashRecovery(t *testing.T) {
	const (
		minIterations = 50
		maxIterations = 60
		budget        = 10 * time.Second
		perFile       = 10 // iterations per log file, to bound its growth
	)
	dir := t.TempDir()
	start := time.Now()
	var (
		path       string
		maxAcked   int64 // the highest seq acknowledged in the current file
		verified   int64 // events of the current file decoded by an earlier iteration
		files      int
		iterations int
		torn       int
		acks       int
		cutBytes   int64
	)
	for iterations < maxIterations && (iterations < minIterations || time.Since(start) < budget) {
		if iterations%perFile == 0 {
			files++
			path = filepath.Join(dir, fmt.Sprintf("crash%d.jsonl", files))
			maxAcked, verified = -1, 0
		}
		iterations++
		ready, acked, stderr := runCrashChild(t, path, time.Duration(1+rand.IntN(40))*time.Millisecond)
		if ready < 0 {
			t.Fatalf("iteration %d: the child never became ready; stderr:\n%s", iterations, stderr)
		}
		if ready <= maxAcked {
			t.Fatalf("iteration %d: child opened %d events, but seq %d was acknowledged", iterations, ready, maxAcked)
		}
		for i, a := range acked {
			if a.seq != ready+int64(i) {
				t.Fatalf("iteration %d: ack %d is seq %d, want %d", iterations, i, a.seq, ready+int64(i))
			}
			maxAcked = a.seq
		}
		acks += len(acked)

		f, rec, err := OpenFile(path)
		if err != nil {
			t.Fatalf("iteration %d: OpenFile: %v", iterations, err)
		}
		if rec.Truncated() {
			torn++
			cutBytes += rec.TruncatedBytes
			if rec.Kind != RecoveryTornTail {
				t.Errorf("iteration %d: a kill left more than a torn tail: %+v", iterations, rec)
			}
		}
		l, err := Open(context.Background(), f)
		if err != nil {
			t.Fatalf("iteration %d: Open: %v", iterations, err)
		}
		n := int64(0)
		var types []string
		for ev := range l.Events() {
			types = append(types, ev.Type)
			if ev.Seq != n {
				t.Fatalf("iteration %d: event %d has seq %d", iterations, n, ev.Seq)
			}
			if n >= verified {
				if _, err := ev.Decode(); err != nil {
					t.Fatalf("iteration %d: event %d: %v", iterations, n, err)
				}
			}
			n++
		}
		verified = n
		if n <= maxAcked {
			t.Fatalf("iteration %d: the log holds %d events, but seq %d was acknowledged (recovery: %+v)", iterations, n, maxAcked, rec)
		}
		for _, a := range acked {
			if got := types[a.seq]; got != a.typ {
				t.Fatalf("iteration %d: seq %d was acknowledged as %s, the log holds %s", iterations, a.seq, a.typ, got)
			}
		}
		if _, err := Replay(l.Events()); err != nil {
			t.Fatalf("iteration %d: Replay: %v", iterations, err)
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
	}
	elapsed := time.Since(start)
	if acks < iterations {
		t.Errorf("only %d events acknowledged in %d iterations: the kills came too early to test much", acks, iterations)
	}
	t.Logf("%d kill iterations over %d files in %v: %d acks, %d torn tails recovered (%d bytes cut)",
		iterations, files, elapsed.Round(time.Millisecond), acks, torn, cutBytes)
}

// ack is one event a crash child acknowledged.
type ack struct {
	seq int64
	typ string
}

// runCrashChild starts a child on path, waits until it is ready, lets it append for
// killAfter, kills it with SIGKILL and returns the event count it opened with (-1 if it
// never became ready), the events it acknowledged and its stderr.
func runCrashChild(t *testing.T, path string, killAfter time.Duration) (int64, []ack, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), crashChildEnv+"="+path)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	type result struct {
		ready int64
		acked []ack
	}
	readyCh := make(chan struct{})
	done := make(chan result, 1)
	go func() {
		r := result{ready: -1}
		br := bufio.NewReader(out)
		for {
			line, err := br.ReadString('\n')
			if err != nil { // EOF; a line without its newline was cut by the kill
				break
			}
			fields := strings.Fields(line)
			if len(fields) < 2 {
				continue
			}
			v, perr := strconv.ParseInt(fields[1], 10, 64)
			switch {
			case perr != nil:
			case fields[0] == "ready" && r.ready < 0:
				r.ready = v
				close(readyCh)
			case fields[0] == "ack" && len(fields) == 3:
				r.acked = append(r.acked, ack{v, fields[2]})
			}
		}
		io.Copy(io.Discard, out)
		done <- r
	}()
	select {
	case <-readyCh:
		time.Sleep(killAfter)
	case <-time.After(20 * time.Second):
	case r := <-done: // exited before ready
		cmd.Wait()
		return r.ready, r.acked, stderr.String()
	}
	cmd.Process.Kill() // SIGKILL
	r := <-done
	werr := cmd.Wait()
	if ee, ok := werr.(*exec.ExitError); !ok || ee.ExitCode() != -1 {
		t.Fatalf("the child did not die by the kill (%v); stderr:\n%s", werr, stderr.String())
	}
	return r.ready, r.acked, stderr.String()
}

// TestCrashDamagedMiddleIsNeverDropped kills children appending to a log, then damages a
// line in the middle of what they acknowledged (as a failing disk or a stray write
// would). Reopening must refuse the log, naming that line and changing nothing, instead
// of cutting the events after it; an explicit Repair then keeps every acknowledged event
// but the damaged one, in order.
func TestCrashDamagedMiddleIsNeverDropped(t *testing.T) {
	path := filepath.Join(t.TempDir(), "damaged.jsonl")
	var acked []ack
	for i := 0; i < 3 || len(acked) < 40; i++ {
		if i == 20 {
			t.Fatalf("only %d events acknowledged in %d kills", len(acked), i)
		}
		ready, a, stderr := runCrashChild(t, path, 30*time.Millisecond)
		if ready < 0 {
			t.Fatalf("the child never became ready; stderr:\n%s", stderr)
		}
		if len(acked) > 0 && acked[len(acked)-1].seq >= ready {
			t.Fatalf("the child opened %d events, but seq %d was acknowledged", ready, acked[len(acked)-1].seq)
		}
		acked = append(acked, a...)
	}
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(before, []byte("\n"))
	victim := len(acked) / 2 // line victim+1 holds seq victim
	damaged := bytes.Clone(before)
	off := len(bytes.Join(lines[:victim], nil))
	copy(damaged[off:], "\x00garbage")
	if err := os.WriteFile(path, damaged, 0o600); err != nil {
		t.Fatal(err)
	}

	var de *DamageError
	if f, _, err := OpenFile(path); !errors.As(err, &de) || de.Line != int64(victim+1) {
		if f != nil {
			f.Close()
		}
		t.Fatalf("OpenFile of a log damaged at line %d: %v", victim+1, err)
	}
	if now, _ := os.ReadFile(path); !bytes.Equal(now, damaged) {
		t.Fatal("OpenFile changed the damaged log")
	}

	rep, err := Repair(path)
	if err != nil {
		t.Fatal(err)
	}
	f, rec, err := OpenFile(path)
	if err != nil || rec.Truncated() {
		t.Fatalf("the repaired log: %v %+v", err, rec)
	}
	l, err := Open(context.Background(), f)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var types []string
	for ev, err := range l.Events() {
		if err != nil {
			t.Fatal(err)
		}
		types = append(types, ev.Type)
	}
	// Every acknowledged event but the damaged one is there, in order: the seqs after
	// the damage move down by one.
	for _, a := range acked {
		switch i := a.seq; {
		case i == int64(victim):
		case i < int64(victim) && types[i] != a.typ, i > int64(victim) && types[i-1] != a.typ:
			t.Fatalf("acknowledged seq %d (%s) is not where it belongs after the repair (%+v)", a.seq, a.typ, rep)
		}
	}
	if int64(len(types)) < acked[len(acked)-1].seq {
		t.Fatalf("the repaired log holds %d events; seq %d was acknowledged", len(types), acked[len(acked)-1].seq)
	}
	if saved, err := os.ReadFile(rep.BackupPath); err != nil || !bytes.HasPrefix(saved, []byte("\x00garbage")) {
		t.Errorf("the damaged line is not in the backup: %q %v", saved, err)
	}
}
