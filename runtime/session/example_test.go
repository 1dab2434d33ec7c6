package session_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/session"
)

// check stops the example on an unexpected error.
func check(err error) {
	if err != nil {
		panic(err)
	}
}

// text returns a user message with one text block.
func text(id, s string) dsh.UserMessage {
	return dsh.UserMessage{ID: id, Role: dsh.UserMessageRoleUser, Source: dsh.SourceUser{},
		Content: []dsh.ContentBlock{dsh.TextBlock{Text: s}}}
}

// A log file survives its process; reopening it recovers a torn tail, and Replay says
// where the agent left off.
func Example_resume() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "session-example")
	check(err)
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "agent.jsonl")

	// First process: two prompts are queued, a turn starts and claims the first, a step
	// starts, and the process dies while writing the next event.
	f, _, err := session.OpenFile(path)
	check(err)
	log, err := session.Open(ctx, f)
	check(err)
	one := 1
	for _, data := range []dsh.SessionEventData{
		dsh.InboxSpliced{Target: dsh.InboxTargetNextTurn, Inserted: []dsh.UserMessage{text("m1", "hello"), text("m2", "and then")}},
		dsh.TurnStart{Turn: 1},
		dsh.InboxSpliced{Target: dsh.InboxTargetNextTurn, RemovedCount: &one, Inserted: []dsh.UserMessage{}},
		dsh.StepStart{Turn: 1, Step: 1},
	} {
		_, err := log.Append(ctx, data)
		check(err)
	}
	check(log.Close())
	w, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	check(err)
	_, err = w.WriteString(`{"type":"user/mess`) // the torn line
	check(err)
	check(w.Close())

	// Second process: recover, replay, close the orphaned turn.
	f, rec, err := session.OpenFile(path)
	check(err)
	fmt.Println("recovered:", rec.Kind, rec.TruncatedBytes, "bytes cut")
	log, err = session.Open(ctx, f)
	check(err)
	defer log.Close()
	st, err := session.Replay(log.Events())
	check(err)
	fmt.Printf("last turn %d, step %d, open %t, next-turn inbox: %s\n",
		st.LastTurn, st.LastStep, st.TurnOpen, st.NextTurn[0].ID)
	check(session.CloseInterrupted(ctx, log, st))
	for ev := range log.Events() {
		fmt.Println(ev.Seq, ev.Type)
	}
	// Output:
	// recovered: torn-tail 18 bytes cut
	// last turn 1, step 1, open true, next-turn inbox: m2
	// 0 agent/inbox/spliced
	// 1 turn/start
	// 2 agent/inbox/spliced
	// 3 step/start
	// 4 turn/end
}

// Observers see every event after it is in the store, in order; invalid data is
// rejected at the call site.
func ExampleLog_Subscribe() {
	ctx := context.Background()
	clock := func() time.Time { return time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC) }
	log, err := session.Open(ctx, session.NewMemory(), session.WithClock(clock))
	check(err)
	defer log.Close()
	cancel := log.Subscribe(func(ev session.Event) {
		fmt.Printf("%d %s %s %s\n", ev.Seq, ev.Type, ev.Time.Format(time.RFC3339), ev.Data)
	})
	defer cancel()
	_, err = log.Append(ctx, dsh.ToolCall{Turn: 1, Step: 1, CallID: "c1", Name: "ls", Arguments: "{}"})
	check(err)
	_, err = log.Append(ctx, dsh.TurnEnd{Turn: 1}) // no reason
	fmt.Println(errors.Is(err, session.ErrInvalidData), log.Len())
	// Output:
	// 0 tool/call 2026-05-01T12:00:00Z {"turn":1,"step":1,"callId":"c1","name":"ls","arguments":"{}"}
	// true 1
}

// Reading a log: Of yields the decoded data of the events of one type; Decoded yields
// every event with its data.
func ExampleOf() {
	ctx := context.Background()
	log, err := session.Open(ctx, session.NewMemory())
	check(err)
	for _, data := range []dsh.SessionEventData{
		dsh.TurnStart{Turn: 1},
		dsh.UserMessageLogged{Message: text("m1", "hello")},
		dsh.TurnEnd{Turn: 1, Reason: dsh.TurnEndCompleted{}},
	} {
		_, err := log.Append(ctx, data)
		check(err)
	}
	for end, err := range session.Of[dsh.TurnEnd](log.Events()) {
		check(err)
		fmt.Println("turn", end.Turn, "ended:", end.Reason.Kind())
	}
	for ev, data := range session.Decoded(log.Events()) {
		if m, ok := data.(dsh.UserMessageLogged); ok {
			fmt.Println(ev.Seq, m.Message.Content[0].(dsh.TextBlock).Text)
		}
	}
	// Output:
	// turn 1 ended: completed
	// 1 hello
}
