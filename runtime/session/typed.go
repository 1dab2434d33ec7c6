package session

import (
	"fmt"
	"iter"

	"github.com/dshkit/dsh/generated/dsh"
)

// Decoded reads events and yields each with its decoded data record (a value such as
// dsh.TurnStart). A read error, or data that does not decode, is yielded with the event
// (its data nil) and the error, naming the event's seq and type; the reader may go on.
//
//	for ev, data := range session.Decoded(log.Events()) { ... }
//
// To see errors use DecodedErr; Decoded skips nothing silently: an event whose data does
// not decode is yielded with nil data.
func Decoded(events iter.Seq2[Event, error]) iter.Seq2[Event, dsh.SessionEventData] {
	return func(yield func(Event, dsh.SessionEventData) bool) {
		for ev, data := range DecodedErr(events) {
			if !yield(ev.Event, data) {
				return
			}
		}
	}
}

// DecodedEvent is an event with the error that reading or decoding it gave (nil if none).
type DecodedEvent struct {
	Event
	// Err is the read or decode error, naming the event's seq and type.
	Err error
}

// DecodedErr is Decoded with the errors: each event comes with its Err; data is nil when
// Err is set.
func DecodedErr(events iter.Seq2[Event, error]) iter.Seq2[DecodedEvent, dsh.SessionEventData] {
	return func(yield func(DecodedEvent, dsh.SessionEventData) bool) {
		for ev, err := range events {
			if err != nil {
				if !yield(DecodedEvent{Event: ev, Err: err}, nil) {
					return
				}
				continue
			}
			data, err := ev.Decode()
			if err != nil {
				err = fmt.Errorf("session: event %d (%s): %w", ev.Seq, ev.Type, err)
				data = nil
			}
			if !yield(DecodedEvent{Event: ev, Err: err}, data) {
				return
			}
		}
	}
}

// Of reads events and yields the data of those of type T (e.g. dsh.ToolResultLogged),
// decoded, with its event; others are skipped without being decoded. A read error, or an
// event of T's type whose data does not decode, ends the sequence after yielding the error
// (with the zero T).
//
//	for res, err := range session.Of[dsh.ToolResultLogged](log.Events()) {
//		if err != nil { return err }
//		fmt.Println(res.CallID)
//	}
func Of[T dsh.SessionEventData](events iter.Seq2[Event, error]) iter.Seq2[T, error] {
	var zero T
	want := zero.SessionEventType()
	return func(yield func(T, error) bool) {
		for ev, err := range events {
			if err != nil {
				yield(zero, err)
				return
			}
			if ev.Type != want {
				continue
			}
			data, err := ev.Decode()
			if err != nil {
				yield(zero, fmt.Errorf("session: event %d (%s): %w", ev.Seq, ev.Type, err))
				return
			}
			t, ok := data.(T)
			if !ok {
				yield(zero, fmt.Errorf("session: event %d (%s) decodes to %T, not %T", ev.Seq, ev.Type, data, zero))
				return
			}
			if !yield(t, nil) {
				return
			}
		}
	}
}
