package session_test

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"strings"
	"testing"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/session"
)

// TestTypedReader reads a session log as a plugin author would: every event decoded
// (Decoded), or only those of one type (Of), with no Decode call or type assertion.
func TestTypedReader(t *testing.T) {
	ctx := context.Background()
	log, err := session.Open(ctx, session.NewMemory())
	if err != nil {
		t.Fatal(err)
	}
	for _, data := range []dsh.SessionEventData{
		dsh.TurnStart{Turn: 1},
		dsh.UserMessageLogged{Message: text("m1", "hello")},
		dsh.TurnEnd{Turn: 1, Reason: dsh.TurnEndCompleted{}},
		dsh.TurnStart{Turn: 2},
	} {
		if _, err := log.Append(ctx, data); err != nil {
			t.Fatal(err)
		}
	}

	var turns []int
	for start, err := range session.Of[dsh.TurnStart](log.Events()) {
		if err != nil {
			t.Fatal(err)
		}
		turns = append(turns, start.Turn)
	}
	if len(turns) != 2 || turns[0] != 1 || turns[1] != 2 {
		t.Errorf("turn starts %v", turns)
	}

	var kinds []string
	for ev, data := range session.Decoded(log.Events()) {
		switch d := data.(type) {
		case dsh.UserMessageLogged:
			kinds = append(kinds, "user:"+d.Message.ID)
		case dsh.TurnEnd:
			kinds = append(kinds, "end:"+string(d.Reason.Kind()))
		default:
			kinds = append(kinds, ev.Type)
		}
	}
	if want := "turn/start user:m1 end:completed turn/start"; strings.Join(kinds, " ") != want {
		t.Errorf("decoded %q, want %q", strings.Join(kinds, " "), want)
	}

	// A damaged event: Decoded yields it with nil data and DecodedErr says why; Of stops
	// with an error naming its seq and type.
	bad := func(yield func(session.Event, error) bool) {
		yield(session.Event{Type: "turn/start", Seq: 7, Data: json.RawMessage(`{"turn":"x"}`)}, nil)
	}
	for ev, data := range session.DecodedErr(iter.Seq2[session.Event, error](bad)) {
		if data != nil || ev.Err == nil || ev.Seq != 7 {
			t.Errorf("damaged event: data %v, err %v", data, ev.Err)
		}
	}
	n := 0
	for _, err := range session.Of[dsh.TurnStart](bad) {
		n++
		if err == nil || !strings.Contains(err.Error(), "event 7 (turn/start)") {
			t.Errorf("Of on a damaged event: %v", err)
		}
	}
	if n != 1 {
		t.Errorf("Of yielded %d times on one damaged event", n)
	}
	// A read error ends Of with it.
	failing := func(yield func(session.Event, error) bool) { yield(session.Event{}, errors.New("disk gone")) }
	for _, err := range session.Of[dsh.TurnStart](failing) {
		if err == nil || err.Error() != "disk gone" {
			t.Errorf("read error: %v", err)
		}
	}
}
