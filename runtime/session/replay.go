package session

import (
	"context"
	"fmt"
	"iter"
	"slices"

	"github.com/dshkit/dsh/generated/dsh"
)

// State is what an agent needs to resume from a log: the turn counters and the two inbox
// lists.
type State struct {
	// Events is the number of events folded: the seq the next event gets.
	Events int64
	// LastTurn is the number of the last turn started; 0 when none was. The next turn is
	// LastTurn+1.
	LastTurn int
	// LastStep is the number of the last step started in the last turn; 0 when none was.
	LastStep int
	// TurnOpen reports that the last turn has a turn/start but no turn/end: the process
	// stopped inside it. Close it with CloseInterrupted before resuming.
	TurnOpen bool
	// StepOpen reports that the last step has a step/start but no step/end.
	StepOpen bool
	// LastEnd is the reason of the last turn/end, nil when there was none or the last turn
	// is open. After error or aborted the driver stays idle until a waking send (docs/design/SEMANTICS.md
	// A item 10).
	LastEnd dsh.TurnEndReason
	// NextTurn and NextStep are the pending inbox lists, rebuilt from every
	// agent/inbox/spliced event, in order; nil when empty.
	NextTurn, NextStep []dsh.UserMessage
}

// ReplayError is the error of Replay at one event.
type ReplayError struct {
	// Seq and Type identify the event.
	Seq  int64
	Type string
	// Err is the cause: ErrInconsistent, ErrCorrupt or a data decoding error.
	Err error
}

// Error renders the error with the event it concerns.
func (e *ReplayError) Error() string {
	return fmt.Sprintf("session: replay: event %d (%s): %v", e.Seq, e.Type, e.Err)
}

// Unwrap returns the cause.
func (e *ReplayError) Unwrap() error { return e.Err }

// Replay folds a log into the State an agent resumes from. It decodes only the events
// that shape that state: turn/start and turn/end (the turn counter, an open turn, the
// last end), step/start and step/end (the step counter), and agent/inbox/spliced, each of
// which removes removedCount messages at start and inserts its messages there, canceled
// splices included (they record removals). Other events are counted, not decoded.
//
// Replay checks what it relies on and fails with a *ReplayError wrapping ErrInconsistent
// when seqs are not contiguous from 0, a turn starts while one is open or with a number
// not above the last, a turn or step ends without being open, a step starts outside its
// turn or with a number not above the last, or a splice reaches outside its list. A
// reading error from events is returned as is, wrapped. The State returned with an error
// folds the events before the failing one.
func Replay(events iter.Seq2[Event, error]) (State, error) {
	var s State
	for ev, err := range events {
		if err != nil {
			return s.normalized(), fmt.Errorf("session: replay: reading event %d: %w", s.Events, err)
		}
		if err := s.apply(ev); err != nil {
			return s.normalized(), &ReplayError{Seq: ev.Seq, Type: ev.Type, Err: err}
		}
		s.Events++
	}
	return s.normalized(), nil
}

// normalized returns s with empty inbox lists set to nil.
func (s State) normalized() State {
	if len(s.NextTurn) == 0 {
		s.NextTurn = nil
	}
	if len(s.NextStep) == 0 {
		s.NextStep = nil
	}
	return s
}

// apply folds one event into s.
func (s *State) apply(ev Event) error {
	if ev.Seq != s.Events {
		return fmt.Errorf("%w: seq %d where %d was expected", ErrInconsistent, ev.Seq, s.Events)
	}
	switch ev.Type {
	case dsh.TurnStartType, dsh.TurnEndType, dsh.StepStartType, dsh.StepEndType, dsh.InboxSplicedType:
	default:
		return nil
	}
	data, err := ev.Decode()
	if err != nil {
		return err
	}
	//dshvet:partial the switch on ev.Type above lets only these types through
	switch d := data.(type) {
	case dsh.TurnStart:
		if s.TurnOpen {
			return fmt.Errorf("%w: turn %d starts while turn %d is open", ErrInconsistent, d.Turn, s.LastTurn)
		}
		if d.Turn <= s.LastTurn {
			return fmt.Errorf("%w: turn %d starts after turn %d", ErrInconsistent, d.Turn, s.LastTurn)
		}
		s.LastTurn, s.LastStep, s.TurnOpen, s.StepOpen, s.LastEnd = d.Turn, 0, true, false, nil
	case dsh.TurnEnd:
		if !s.TurnOpen || d.Turn != s.LastTurn {
			return fmt.Errorf("%w: turn %d ends but is not open", ErrInconsistent, d.Turn)
		}
		s.TurnOpen, s.StepOpen, s.LastEnd = false, false, d.Reason
	case dsh.StepStart:
		if !s.TurnOpen || d.Turn != s.LastTurn {
			return fmt.Errorf("%w: step %d of turn %d starts outside that turn", ErrInconsistent, d.Step, d.Turn)
		}
		if s.StepOpen || d.Step <= s.LastStep {
			return fmt.Errorf("%w: step %d starts after step %d (open: %t)", ErrInconsistent, d.Step, s.LastStep, s.StepOpen)
		}
		s.LastStep, s.StepOpen = d.Step, true
	case dsh.StepEnd:
		if !s.StepOpen || d.Turn != s.LastTurn || d.Step != s.LastStep {
			return fmt.Errorf("%w: step %d of turn %d ends but is not open", ErrInconsistent, d.Step, d.Turn)
		}
		s.StepOpen = false
	case dsh.InboxSpliced:
		list := &s.NextTurn
		if d.Target == dsh.InboxTargetNextStep {
			list = &s.NextStep
		}
		removed := 0
		if d.RemovedCount != nil {
			removed = *d.RemovedCount
		}
		if d.Start < 0 || removed < 0 || d.Start > len(*list) || removed > len(*list)-d.Start {
			return fmt.Errorf("%w: splice of %s at %d removing %d, but the list holds %d",
				ErrInconsistent, d.Target, d.Start, removed, len(*list))
		}
		*list = slices.Replace(*list, d.Start, d.Start+removed, d.Inserted...)
	}
	return nil
}

// CloseInterrupted closes the turn a crash left open: when st.TurnOpen, it appends
// turn/end{LastTurn, interrupted} (docs/design/SEMANTICS.md#0-shared-vocabulary: written only by a persistence
// backend closing a crash-orphaned turn), which the default sync policy syncs. It does
// nothing when no turn is open. st must fold the whole log (Replay(l.Events()) with
// nothing appended since), else it returns ErrStaleState; call it before the agent starts
// appending. st itself is not updated: the next turn is still st.LastTurn+1 and the inbox
// is unchanged.
func CloseInterrupted(ctx context.Context, l *Log, st State) error {
	if !st.TurnOpen {
		return nil
	}
	if n := l.Len(); n != st.Events {
		return fmt.Errorf("%w: the state folds %d events, the log holds %d", ErrStaleState, st.Events, n)
	}
	_, err := l.Append(ctx, dsh.TurnEnd{Turn: st.LastTurn, Reason: dsh.TurnEndInterrupted{}})
	return err
}
