package pgstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dshkit/dsh/internal/pgtest"
	"github.com/dshkit/dsh/runtime/session"
)

// fixedClock returns a clock advancing 1 ms per call from a fixed instant, so two logs
// written with it hold the same bytes.
func fixedClock() func() time.Time {
	t := time.Date(2026, 5, 1, 10, 0, 0, 1, time.UTC)
	return func() time.Time { t = t.Add(time.Millisecond); return t }
}

// TestSameBytesAsJSONL appends the same turns to a JSONL file and to the database and
// checks that every stored line is the file's line, byte for byte; then resumes the
// session through a new connection and checks it replays to the same state and reads the
// same events, also across the log's in-memory window.
func TestSameBytesAsJSONL(t *testing.T) {
	url := server(t).Schema(t)
	ctx := context.Background()
	db := connect(t, url)

	path := filepath.Join(t.TempDir(), "log.jsonl")
	f, _, err := session.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	fl, err := session.Open(ctx, f, session.WithClock(fixedClock()))
	if err != nil {
		t.Fatal(err)
	}
	st, err := db.Open(ctx, "same-bytes")
	if err != nil {
		t.Fatal(err)
	}
	pl, err := session.Open(ctx, st, session.WithClock(fixedClock()))
	if err != nil {
		t.Fatal(err)
	}
	const turns = 260 // 2,340 events: more than the Log keeps in memory
	for n := 1; n <= turns; n++ {
		for _, d := range turnEvents(n, n%7*100) {
			if _, err := fl.Append(ctx, d); err != nil {
				t.Fatal(err)
			}
			if _, err := pl.Append(ctx, d); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := fl.Close(); err != nil {
		t.Fatal(err)
	}
	// Read back across the window while the log is open.
	if got := events(t, pl.EventsFrom(5)); len(got) != turns*9-5 || got[0].Seq != 5 {
		t.Fatalf("EventsFrom(5): %d events from seq %d", len(got), got[0].Seq)
	}
	if err := pl.Close(); err != nil {
		t.Fatal(err)
	}

	file, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := bytes.Split(bytes.TrimSuffix(file, []byte("\n")), []byte("\n"))
	rows, err := db.pool.Query(ctx, "SELECT seq, type, line FROM dsh_events WHERE session_id = 'same-bytes' ORDER BY seq")
	if err != nil {
		t.Fatal(err)
	}
	i := 0
	for rows.Next() {
		var (
			seq  int64
			typ  string
			line []byte
		)
		if err := rows.Scan(&seq, &typ, &line); err != nil {
			t.Fatal(err)
		}
		if seq != int64(i) || !bytes.Equal(line, want[i]) {
			t.Fatalf("row %d (seq %d):\n%s\nwant the file's line\n%s", i, seq, line, want[i])
		}
		if ev, _ := session.DecodeLine(line); ev.Type != typ {
			t.Fatalf("row %d: type column %q, envelope %q", i, typ, ev.Type)
		}
		i++
	}
	if rows.Err() != nil || i != len(want) {
		t.Fatalf("%d rows, %d lines in the file (%v)", i, len(want), rows.Err())
	}

	// Resume through another connection, as another machine would.
	db2 := connect(t, url)
	l2, _ := openLog(t, db2, "same-bytes", WithMode(LoadOnly))
	defer l2.Close()
	f2, _, err := session.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	fl2, err := session.Open(ctx, f2)
	if err != nil {
		t.Fatal(err)
	}
	defer fl2.Close()
	stPG, err := session.Replay(l2.Events())
	if err != nil {
		t.Fatal(err)
	}
	stFile, err := session.Replay(fl2.Events())
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(stPG) != fmt.Sprint(stFile) || stPG.LastTurn != turns {
		t.Fatalf("replayed state\n%+v\nwant (JSONL)\n%+v", stPG, stFile)
	}
	all := events(t, db2.Events(ctx, "same-bytes"))
	if len(all) != len(want) {
		t.Fatalf("DB.Events: %d events, want %d", len(all), len(want))
	}
	for i, ev := range all {
		line, _ := ev.MarshalJSON()
		if !bytes.Equal(line, want[i]) {
			t.Fatalf("DB.Events event %d re-encodes as\n%s\nwant\n%s", i, line, want[i])
		}
	}
}

// TestLeaseHeldTakeoverFence: a second writer is refused while the first holds the lease;
// a takeover fences the first, whose append, sync and lease renewal are then refused and
// leave nothing in the log; Close of the fenced writer does not release the new lease.
func TestLeaseHeldTakeoverFence(t *testing.T) {
	url := server(t).Schema(t)
	ctx := context.Background()
	db := connect(t, url)
	la, sa := openLog(t, db, "s1", WithOwner("writer-a"))
	for _, d := range turnEvents(1, 10)[:4] {
		if _, err := la.Append(ctx, d); err != nil {
			t.Fatal(err)
		}
	}

	_, err := db.Open(ctx, "s1", WithOwner("writer-b"))
	if !errors.Is(err, ErrLeaseHeld) || !strings.Contains(err.Error(), "writer-a") || !strings.Contains(err.Error(), "epoch 1") {
		t.Fatalf("second writer: %v, want ErrLeaseHeld naming writer-a and epoch 1", err)
	}

	// A takeover naming another holder is refused: it would fence out a writer its caller
	// did not name.
	_, err = db.Open(ctx, "s1", WithOwner("writer-b"), WithTakeoverFrom("writer-x"))
	if !errors.Is(err, ErrLeaseHeld) || !strings.Contains(err.Error(), "writer-a") || !strings.Contains(err.Error(), "not by writer-x") {
		t.Fatalf("takeover from the wrong holder: %v, want ErrLeaseHeld naming both", err)
	}

	lb, sb := openLog(t, db, "s1", WithOwner("writer-b"), WithTakeoverFrom("writer-a"))
	if sb.Epoch() != 2 || lb.Len() != 4 {
		t.Fatalf("takeover: epoch %d, %d events; want 2, 4", sb.Epoch(), lb.Len())
	}
	_, err = la.Append(ctx, turnEvents(1, 10)[4])
	if !errors.Is(err, ErrFenced) || !strings.Contains(err.Error(), "epoch 2") {
		t.Fatalf("late append of the fenced writer: %v, want ErrFenced naming epoch 2", err)
	}
	if err := sa.Sync(ctx); !errors.Is(err, ErrFenced) {
		t.Fatalf("sync of the fenced writer: %v", err)
	}
	for _, d := range turnEvents(1, 10)[4:] {
		if _, err := lb.Append(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	la.Close() // releases nothing: the lease is b's
	if _, err := db.Open(ctx, "s1", WithOwner("writer-c")); !errors.Is(err, ErrLeaseHeld) || !strings.Contains(err.Error(), "writer-b") {
		t.Fatalf("after the fenced writer closed: %v, want b's lease still held", err)
	}
	if err := lb.Close(); err != nil {
		t.Fatal(err)
	}
	// b released its lease: c opens without a takeover.
	lc, sc := openLog(t, db, "s1", WithOwner("writer-c"))
	defer lc.Close()
	if sc.Epoch() != 3 || lc.Len() != 9 {
		t.Fatalf("after release: epoch %d, %d events; want 3, 9", sc.Epoch(), lc.Len())
	}
	if _, err := session.Replay(lc.Events()); err != nil {
		t.Fatal(err)
	}
}

// TestLeaseExpiry: a writer that stops renewing (as a crashed one does) keeps its lease
// until the TTL runs out; then another writer opens the session without a takeover.
func TestLeaseExpiry(t *testing.T) {
	url := server(t).Schema(t)
	ctx := context.Background()
	db := connect(t, url)
	sa, err := db.Open(ctx, "s", WithLeaseTTL(600*time.Millisecond), WithOwner("dead"))
	if err != nil {
		t.Fatal(err)
	}
	// A live writer renews: after two TTLs the lease is still held.
	time.Sleep(1200 * time.Millisecond)
	if _, err := db.Open(ctx, "s"); !errors.Is(err, ErrLeaseHeld) {
		t.Fatalf("while the writer renews: %v, want ErrLeaseHeld", err)
	}
	// "Crash": stop renewing without releasing.
	sa.stop()
	<-sa.done
	deadline := time.Now().Add(10 * time.Second)
	for {
		sb, err := db.Open(ctx, "s", WithOwner("next"))
		if err == nil {
			if sb.Epoch() != 2 {
				t.Errorf("epoch %d, want 2", sb.Epoch())
			}
			sb.Close()
			break
		}
		if !errors.Is(err, ErrLeaseHeld) || time.Now().After(deadline) {
			t.Fatalf("after the lease expired: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestModes: LoadOnly of a missing session is ErrNotFound (fs.ErrNotExist); CreateOnly of
// an existing one is ErrExists (fs.ErrExist); Events of a missing one is ErrNotFound.
// None of them speaks of a file: a session, not a file, is missing.
func TestModes(t *testing.T) {
	url := server(t).Schema(t)
	ctx := context.Background()
	db := connect(t, url)
	if _, err := db.Open(ctx, "nope", WithMode(LoadOnly)); !errors.Is(err, ErrNotFound) || !errors.Is(err, fs.ErrNotExist) ||
		strings.Contains(err.Error(), "file") || !strings.Contains(err.Error(), `no such session: "nope"`) {
		t.Fatalf("LoadOnly of a missing session: %v", err)
	}
	if ok, err := db.Exists(ctx, "nope"); ok || err != nil {
		t.Fatalf("Exists: %v %v", ok, err)
	}
	l, _ := openLog(t, db, "yes", WithMode(CreateOnly))
	l.Close()
	if _, err := db.Open(ctx, "yes", WithMode(CreateOnly)); !errors.Is(err, ErrExists) || !errors.Is(err, fs.ErrExist) || strings.Contains(err.Error(), "file") {
		t.Fatalf("CreateOnly of an existing session: %v", err)
	}
	for _, err := range db.Events(ctx, "nope") {
		if !errors.Is(err, ErrNotFound) || strings.Contains(err.Error(), "file") {
			t.Fatalf("Events of a missing session: %v", err)
		}
	}
}

// TestSchemaVersion: a database holding a newer schema version is refused, naming both.
func TestSchemaVersion(t *testing.T) {
	url := server(t).Schema(t)
	ctx := context.Background()
	db := connect(t, url)
	if _, err := db.sync.Exec(ctx, "UPDATE dsh_schema SET version = 7"); err != nil {
		t.Fatal(err)
	}
	_, err := Connect(ctx, url)
	if !errors.Is(err, ErrSchemaVersion) || !strings.Contains(err.Error(), "version 7") || !strings.Contains(err.Error(), fmt.Sprintf("version %d", SchemaVersion)) {
		t.Fatalf("newer schema: %v, want ErrSchemaVersion naming versions 7 and %d", err, SchemaVersion)
	}
}

// TestConnectErrors: a bad URL, wrong credentials and a server that is not there each
// give one line that names the problem and never the password.
func TestConnectErrors(t *testing.T) {
	s := server(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, url, want string
	}{
		{"bad URL", "postgres://dsh:sekrit@127.0.0.1:notaport/db", "bad database URL"},
		{"wrong password", s.TCPURL(pgtest.User, "sekrit"), "password authentication failed"},
		{"server down", fmt.Sprintf("postgres://dsh:sekrit@127.0.0.1:%d/postgres?sslmode=disable&connect_timeout=5", port), "connect"},
	} {
		_, err := Connect(ctx, c.url)
		if err == nil {
			t.Fatalf("%s: connected", c.name)
		}
		msg := err.Error()
		if strings.Contains(msg, "\n") || !strings.Contains(msg, c.want) || strings.Contains(msg, "sekrit") {
			t.Errorf("%s: %q, want one line with %q and no password", c.name, msg, c.want)
		}
	}
	// The right password over TCP works, from the URL or from PGPASSWORD.
	db := connect(t, s.TCPURL(pgtest.User, pgtest.Password))
	db.Close()
	t.Setenv("PGPASSWORD", pgtest.Password)
	db = connect(t, s.TCPURL(pgtest.User, ""))
	db.Close()
}

// freePort returns a TCP port on 127.0.0.1 that nothing listens on (a moment ago).
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// TestConcurrentSessions appends to 64 sessions at once over one DB, each from its own
// goroutine (run it under -race), and checks every session's log. Before that, eight
// processes' worth of Connects race to create the schema of an empty database.
func TestConcurrentSessions(t *testing.T) {
	url := server(t).Schema(t)
	ctx := context.Background()
	var connects sync.WaitGroup
	for range 8 {
		connects.Go(func() {
			db, err := Connect(ctx, url)
			if err != nil {
				t.Error(err)
				return
			}
			db.Close()
		})
	}
	connects.Wait()
	if t.Failed() {
		t.FailNow()
	}
	db := connect(t, url)
	const sessions, turns = 64, 6
	var wg sync.WaitGroup
	errs := make(chan error, sessions)
	for i := range sessions {
		wg.Go(func() {
			st, err := db.Open(ctx, fmt.Sprintf("c%d", i))
			if err != nil {
				errs <- err
				return
			}
			l, err := session.Open(ctx, st)
			if err != nil {
				errs <- err
				return
			}
			defer l.Close()
			for n := 1; n <= turns; n++ {
				for _, d := range turnEvents(n, 64) {
					if _, err := l.Append(ctx, d); err != nil {
						errs <- err
						return
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for i := range sessions {
		evs := events(t, db.Events(ctx, fmt.Sprintf("c%d", i)))
		if len(evs) != turns*9 {
			t.Fatalf("session c%d: %d events, want %d", i, len(evs), turns*9)
		}
		st, err := session.Replay(func(yield func(session.Event, error) bool) {
			for _, ev := range evs {
				if !yield(ev, nil) {
					return
				}
			}
		})
		if err != nil || st.LastTurn != turns || st.TurnOpen {
			t.Fatalf("session c%d: replay %+v, %v", i, st, err)
		}
	}
}
