package pgstore

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/internal/pgtest"
	"github.com/dshkit/dsh/runtime/session"
)

// The package's server, started once by TestMain (srvErr says why not).
var (
	srv    *pgtest.Server
	srvErr error
)

// childEnv switches the test binary into a child writer process (crash and fencing
// tests); its value is the mode.
const childEnv = "DSH_PGSTORE_CHILD"

func TestMain(m *testing.M) {
	if mode := os.Getenv(childEnv); mode != "" {
		os.Exit(child(mode))
	}
	srv, srvErr = pgtest.Start()
	code := m.Run()
	if srv != nil {
		srv.Close()
	}
	os.Exit(code)
}

// server returns the package's server for a test that needs it (pgtest.Need).
func server(tb testing.TB) *pgtest.Server {
	tb.Helper()
	return pgtest.Need(tb, srv, srvErr)
}

// connect connects to url, closing the DB when the test ends.
func connect(tb testing.TB, url string, opts ...Option) *DB {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	db, err := Connect(ctx, url, opts...)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(db.Close)
	return db
}

// openLog opens session id of db as a session.Log.
func openLog(tb testing.TB, db *DB, id string, opts ...OpenOption) (*session.Log, *Store) {
	tb.Helper()
	ctx := context.Background()
	st, err := db.Open(ctx, id, opts...)
	if err != nil {
		tb.Fatal(err)
	}
	l, err := session.Open(ctx, st)
	if err != nil {
		st.Close()
		tb.Fatal(err)
	}
	return l, st
}

// events reads every event of l.
func events(tb testing.TB, it func(func(session.Event, error) bool)) []session.Event {
	tb.Helper()
	var out []session.Event
	for ev, err := range it {
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, ev)
	}
	return out
}

// turnEvents are the events of one whole turn n (as an agent appends them), with a tool
// result of size bytes.
func turnEvents(n, size int) []dsh.SessionEventData {
	m := dsh.UserMessage{ID: fmt.Sprintf("m%d", n), Role: dsh.UserMessageRoleUser, Source: dsh.SourceUser{},
		Content: []dsh.ContentBlock{dsh.TextBlock{Text: fmt.Sprintf("prompt %d", n)}}}
	result := dsh.UserMessage{ID: fmt.Sprintf("r%d", n), Role: dsh.UserMessageRoleUser, Source: dsh.SourceTool{CallID: "c"},
		Content: []dsh.ContentBlock{dsh.ToolResultBlock{ToolCallID: "c", Content: []dsh.ContentBlock{dsh.TextBlock{Text: strings.Repeat("x", size)}}}}}
	one := 1
	return []dsh.SessionEventData{
		dsh.InboxSpliced{Target: dsh.InboxTargetNextTurn, Inserted: []dsh.UserMessage{m}},
		dsh.TurnStart{Turn: n},
		dsh.InboxSpliced{Target: dsh.InboxTargetNextTurn, RemovedCount: &one, Inserted: []dsh.UserMessage{}},
		dsh.StepStart{Turn: n, Step: 1},
		dsh.UserMessageLogged{Message: m},
		dsh.ToolCall{Turn: n, Step: 1, CallID: "c", Name: "echo", Arguments: "{}"},
		dsh.ToolResultLogged{Turn: n, Step: 1, Message: result},
		dsh.StepEnd{Turn: n, Step: 1},
		dsh.TurnEnd{Turn: n, Reason: dsh.TurnEndCompleted{}},
	}
}
