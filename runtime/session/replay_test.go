package session

import (
	"context"
	"errors"
	"iter"
	"testing"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/google/go-cmp/cmp"
)

func TestReplayRebuildsInboxAndCounters(t *testing.T) {
	mem := NewMemory()
	l := mustOpen(t, mem)
	a, b, c := msg("a", "first prompt"), msg("b", "second prompt"), msg("c", "third prompt")
	ctx1, ctx2, ctx3 := msg("x1", "context 1"), msg("x2", "context 2"), msg("x3", "steer")
	const (
		turnQ = dsh.InboxTargetNextTurn
		stepQ = dsh.InboxTargetNextStep
	)
	for _, d := range []dsh.SessionEventData{
		dsh.SessionCreated{SessionID: "s", AgentID: "agent"},
		splice(turnQ, 0, 0, a),    // followup a
		splice(turnQ, 1, 0, b),    // followup b
		splice(stepQ, 0, 0, ctx1), // inject at session start
		dsh.TurnStart{Turn: 1},
		splice(stepQ, 0, 1), // claim next-step
		splice(turnQ, 0, 1), // claim a
		dsh.StepStart{Turn: 1, Step: 1},
		dsh.UserMessageLogged{Message: ctx1},
		dsh.UserMessageLogged{Message: a},
		dsh.StepEnd{Turn: 1, Step: 1},
		splice(stepQ, 0, 0, ctx2), // additionalContext of a tool result
		splice(turnQ, 0, 0, c),    // followup c goes to the front
		splice(stepQ, 1, 0, ctx3), // steer
		splice(stepQ, 0, 1),       // claim ctx2 alone (a pre-step rewrite)
		dsh.StepStart{Turn: 1, Step: 2},
		dsh.UserMessageLogged{Message: ctx2},
		dsh.StepEnd{Turn: 1, Step: 2},
		dsh.TurnEnd{Turn: 1, Reason: dsh.TurnEndCompleted{}},
		dsh.TurnStart{Turn: 2},
		dsh.InboxSpliced{Target: stepQ, Start: 0, RemovedCount: intp(1), Inserted: []dsh.UserMessage{}, Outcome: dsh.InboxSplicedOutcomeCanceled},
		dsh.TurnEnd{Turn: 2, Reason: dsh.TurnEndAborted{Reason: dsh.CancelUser{}}},
		dsh.TurnStart{Turn: 3},
		splice(turnQ, 0, 1), // claim c
		dsh.StepStart{Turn: 3, Step: 1},
		dsh.UserMessageLogged{Message: c},
		splice(turnQ, 1, 0, a), // a late followup
	} {
		mustAppend(t, l, d)
	}
	st, err := Replay(l.Events())
	if err != nil {
		t.Fatal(err)
	}
	want := State{
		Events:   l.Len(),
		LastTurn: 3,
		LastStep: 1,
		TurnOpen: true,
		StepOpen: true,
		NextTurn: []dsh.UserMessage{b, a},
		NextStep: nil, // emptied lists are nil
	}
	if diff := cmp.Diff(want, st); diff != "" {
		t.Fatalf("State (-want +got):\n%s", diff)
	}

	// Resume: close the open turn as interrupted, then replay again from the store.
	if err := CloseInterrupted(context.Background(), l, st); err != nil {
		t.Fatal(err)
	}
	if err := CloseInterrupted(context.Background(), l, st); !errors.Is(err, ErrStaleState) {
		t.Fatalf("CloseInterrupted with a stale state: %v", err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l2 := mustOpen(t, mem)
	defer l2.Close()
	st2, err := Replay(l2.Events())
	if err != nil {
		t.Fatal(err)
	}
	want.Events++
	want.TurnOpen, want.StepOpen, want.LastEnd = false, false, dsh.TurnEndInterrupted{}
	if diff := cmp.Diff(want, st2); diff != "" {
		t.Fatalf("State after CloseInterrupted (-want +got):\n%s", diff)
	}
	if err := CloseInterrupted(context.Background(), l2, st2); err != nil || l2.Len() != st2.Events {
		t.Fatalf("CloseInterrupted on a closed turn: %v, Len %d", err, l2.Len())
	}
}

func TestReplayEmpty(t *testing.T) {
	l := mustOpen(t, NewMemory())
	defer l.Close()
	st, err := Replay(l.Events())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(State{}, st); diff != "" {
		t.Fatalf("State of an empty log (-want +got):\n%s", diff)
	}
}

func TestReplayInconsistent(t *testing.T) {
	end := func(turn int) dsh.TurnEnd { return dsh.TurnEnd{Turn: turn, Reason: dsh.TurnEndCompleted{}} }
	cases := []struct {
		name   string
		events []dsh.SessionEventData
		badSeq int64
	}{
		{"turn starts while open", []dsh.SessionEventData{dsh.TurnStart{Turn: 1}, dsh.TurnStart{Turn: 2}}, 1},
		{"turn number does not grow", []dsh.SessionEventData{dsh.TurnStart{Turn: 2}, end(2), dsh.TurnStart{Turn: 2}}, 2},
		{"turn ends unopened", []dsh.SessionEventData{end(1)}, 0},
		{"wrong turn ends", []dsh.SessionEventData{dsh.TurnStart{Turn: 1}, end(2)}, 1},
		{"step outside a turn", []dsh.SessionEventData{dsh.StepStart{Turn: 1, Step: 1}}, 0},
		{"step of another turn", []dsh.SessionEventData{dsh.TurnStart{Turn: 1}, dsh.StepStart{Turn: 2, Step: 1}}, 1},
		{"step starts while open", []dsh.SessionEventData{dsh.TurnStart{Turn: 1}, dsh.StepStart{Turn: 1, Step: 1}, dsh.StepStart{Turn: 1, Step: 2}}, 2},
		{"step ends unopened", []dsh.SessionEventData{dsh.TurnStart{Turn: 1}, dsh.StepEnd{Turn: 1, Step: 1}}, 1},
		{"splice removes too much", []dsh.SessionEventData{splice(dsh.InboxTargetNextTurn, 0, 0, msg("a", "a")), splice(dsh.InboxTargetNextTurn, 0, 2)}, 1},
		{"splice starts past the end", []dsh.SessionEventData{splice(dsh.InboxTargetNextStep, 1, 0, msg("a", "a"))}, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l := mustOpen(t, NewMemory())
			defer l.Close()
			for _, d := range c.events {
				mustAppend(t, l, d)
			}
			_, err := Replay(l.Events())
			var re *ReplayError
			if !errors.As(err, &re) || !errors.Is(err, ErrInconsistent) {
				t.Fatalf("Replay error = %v, want a *ReplayError wrapping ErrInconsistent", err)
			}
			if re.Seq != c.badSeq {
				t.Fatalf("error at seq %d, want %d", re.Seq, c.badSeq)
			}
		})
	}
}

func TestReplayReaderErrorsAndGaps(t *testing.T) {
	boom := errors.New("boom")
	l := mustOpen(t, NewMemory())
	defer l.Close()
	mustAppend(t, l, dsh.TurnStart{Turn: 1})
	ev := mustAppend(t, l, dsh.StepStart{Turn: 1, Step: 1})

	failing := iter.Seq2[Event, error](func(yield func(Event, error) bool) {
		for e := range l.Events() {
			if !yield(e, nil) {
				return
			}
		}
		yield(Event{}, boom)
	})
	st, err := Replay(failing)
	if !errors.Is(err, boom) || st.Events != 2 || !st.StepOpen {
		t.Fatalf("Replay = %+v, %v", st, err)
	}

	gap := iter.Seq2[Event, error](func(yield func(Event, error) bool) { yield(ev, nil) })
	if _, err := Replay(gap); !errors.Is(err, ErrInconsistent) {
		t.Fatalf("Replay of a gap: %v", err)
	}

	bad := ev
	bad.Data = []byte(`{"turn":1}`) // step/start without step
	bad.Seq = 0
	one := iter.Seq2[Event, error](func(yield func(Event, error) bool) { yield(bad, nil) })
	var re *ReplayError
	if _, err := Replay(one); !errors.As(err, &re) || !errors.Is(err, dsh.ErrMissingField) {
		t.Fatalf("Replay of bad data: %v", err)
	}
}

// Replay also refuses a step number that does not grow and a splice from an offset that
// removes past the end of its list.
func TestReplayInconsistentMore(t *testing.T) {
	for name, c := range map[string]struct {
		events []dsh.SessionEventData
		badSeq int64
	}{
		"step number repeats": {[]dsh.SessionEventData{dsh.TurnStart{Turn: 1}, dsh.StepStart{Turn: 1, Step: 1},
			dsh.StepEnd{Turn: 1, Step: 1}, dsh.StepStart{Turn: 1, Step: 1}}, 3},
		"splice from an offset removes too much": {[]dsh.SessionEventData{
			splice(dsh.InboxTargetNextTurn, 0, 0, msg("a", "a"), msg("b", "b")), splice(dsh.InboxTargetNextTurn, 1, 2)}, 1},
	} {
		l := mustOpen(t, NewMemory())
		for _, d := range c.events {
			mustAppend(t, l, d)
		}
		_, err := Replay(l.Events())
		var re *ReplayError
		if !errors.As(err, &re) || !errors.Is(err, ErrInconsistent) || re.Seq != c.badSeq {
			t.Errorf("%s: Replay error = %v, want ErrInconsistent at seq %d", name, err, c.badSeq)
		}
		_ = l.Close()
	}
}
