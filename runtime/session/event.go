package session

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/dshkit/dsh/generated/dsh"
)

// Event is the envelope of one durable session-log event (docs/design/SEMANTICS.md#56-durable-session-events). Its JSON
// form is one object with the fields, in this order:
//
//	type             string, the event type (dsh.TurnStartType, ...)
//	seq              integer, contiguous from 0 within a log
//	time             string, RFC 3339 with nanoseconds, in UTC
//	data             object, the JSON of the typed data record
//	sourceEventSeqs  array of integers, optional: earlier events this one cites
//
// Events handed out by a [Log] share Data and SourceEventSeqs with the log: treat them as
// read-only.
type Event struct {
	// Type is the event type; the data record's SessionEventType.
	Type string
	// Seq is the position of the event in its log, from 0.
	Seq int64
	// Time is when the event was appended, in UTC.
	Time time.Time
	// Data is the JSON encoding of the typed data record; decode it with [Event.Decode].
	Data json.RawMessage
	// SourceEventSeqs are the seqs of earlier events this one derives from (for example the
	// tool/call a tool/result answers); nil when there are none.
	SourceEventSeqs []int64
}

// Decode strictly decodes the event's data into its typed record (a value, not a pointer),
// with dsh.DecodeSessionEventData. An unknown type is an error wrapping dsh.ErrUnknownKind.
func (e Event) Decode() (dsh.SessionEventData, error) {
	return dsh.DecodeSessionEventData(e.Type, e.Data)
}

// MarshalJSON encodes the envelope as one JSON object, fields in the documented order.
func (e Event) MarshalJSON() ([]byte, error) {
	if !json.Valid(e.Data) {
		return nil, fmt.Errorf("session: event %d: data is not valid JSON", e.Seq)
	}
	return e.appendJSON(nil)
}

// UnmarshalJSON decodes and checks an envelope: type must be a non-empty string, seq a
// non-negative integer, time an RFC 3339 timestamp, data a JSON object, and every
// sourceEventSeqs entry an earlier seq. Unknown envelope fields are ignored, so that a
// newer writer's additions do not make a log unreadable. Every violation wraps ErrCorrupt.
// The data itself is not decoded; see [Event.Decode].
func (e *Event) UnmarshalJSON(b []byte) error {
	var w struct {
		Type            *string         `json:"type"`
		Seq             *int64          `json:"seq"`
		Time            *string         `json:"time"`
		Data            json.RawMessage `json:"data"`
		SourceEventSeqs []int64         `json:"sourceEventSeqs"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	switch {
	case w.Type == nil || *w.Type == "":
		return fmt.Errorf("%w: missing type", ErrCorrupt)
	case w.Seq == nil:
		return fmt.Errorf("%w: missing seq", ErrCorrupt)
	case *w.Seq < 0:
		return fmt.Errorf("%w: negative seq %d", ErrCorrupt, *w.Seq)
	case w.Time == nil:
		return fmt.Errorf("%w: missing time", ErrCorrupt)
	}
	t, err := time.Parse(time.RFC3339Nano, *w.Time)
	if err != nil {
		return fmt.Errorf("%w: time: %w", ErrCorrupt, err)
	}
	data := bytes.TrimSpace(w.Data)
	if len(data) == 0 || data[0] != '{' {
		return fmt.Errorf("%w: data is missing or not an object", ErrCorrupt)
	}
	if err := checkSources(*w.Seq, w.SourceEventSeqs); err != nil {
		return fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	srcs := w.SourceEventSeqs
	if len(srcs) == 0 {
		srcs = nil
	}
	*e = Event{Type: *w.Type, Seq: *w.Seq, Time: t.UTC(), Data: json.RawMessage(data), SourceEventSeqs: srcs}
	return nil
}

// checkSources reports an error unless every source is an earlier seq than seq.
func checkSources(seq int64, srcs []int64) error {
	for _, s := range srcs {
		if s < 0 || s >= seq {
			return fmt.Errorf("source event seq %d is not an earlier event than %d", s, seq)
		}
	}
	return nil
}

// appendJSON appends the envelope's JSON object to buf. It trusts Data to be valid JSON.
func (e Event) appendJSON(buf []byte) ([]byte, error) {
	if y := e.Time.Year(); y < 0 || y > 9999 {
		return nil, fmt.Errorf("session: event time %v is outside years 0-9999", e.Time)
	}
	buf = append(buf, `{"type":`...)
	buf, err := appendJSONString(buf, e.Type)
	if err != nil {
		return nil, err
	}
	buf = append(buf, `,"seq":`...)
	buf = strconv.AppendInt(buf, e.Seq, 10)
	buf = append(buf, `,"time":"`...)
	buf = e.Time.UTC().AppendFormat(buf, time.RFC3339Nano)
	buf = append(buf, `","data":`...)
	buf = append(buf, e.Data...)
	if len(e.SourceEventSeqs) > 0 {
		buf = append(buf, `,"sourceEventSeqs":[`...)
		for i, s := range e.SourceEventSeqs {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = strconv.AppendInt(buf, s, 10)
		}
		buf = append(buf, ']')
	}
	return append(buf, '}'), nil
}

// appendJSONString appends s as a JSON string. Event types are plain ASCII, which is
// copied as is; anything else goes through encoding/json.
func appendJSONString(buf []byte, s string) ([]byte, error) {
	plain := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			plain = false
			break
		}
	}
	if plain {
		buf = append(buf, '"')
		buf = append(buf, s...)
		return append(buf, '"'), nil
	}
	q, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	return append(buf, q...), nil
}

// decodeLine decodes one stored line (without its newline) into an event. The event's
// Data shares line's memory.
func decodeLine(line []byte) (Event, error) {
	if ev, ok := parseEnvelope(line); ok {
		return ev, nil
	}
	var ev Event
	if err := ev.UnmarshalJSON(line); err != nil {
		return Event{}, err
	}
	return ev, nil
}

// DecodeLine decodes and checks one envelope line as a Log hands it to Store.Append,
// without its final newline: what [Event.UnmarshalJSON] accepts, read fast when the line
// has the Log's own layout. Errors wrap ErrCorrupt. The event's Data shares line's memory.
// It is for stores outside this package, which keep the lines they are given and read
// them back.
func DecodeLine(line []byte) (Event, error) { return decodeLine(line) }

// Errors reported by this package; test for them with errors.Is.
var (
	// ErrInvalidData is the error of an Append whose data was rejected: nil, not a
	// generated session record, invalid by its Validate method, or not encodable as
	// lossless JSON. Nothing was appended.
	ErrInvalidData = errors.New("session: invalid event data")
	// ErrInvalidSource is the error of an Append citing a source seq that is not an
	// earlier event of the log. Nothing was appended.
	ErrInvalidSource = errors.New("session: invalid source event seq")
	// ErrClosed is the error of using a closed log or store.
	ErrClosed = errors.New("session: closed")
	// ErrSyncFailed is the error of a failed sync. After one the log refuses further
	// appends: which writes reached stable storage is unknown.
	ErrSyncFailed = errors.New("session: sync failed")
	// ErrCorrupt is the error of a stored event that is not a valid envelope, or of a
	// store that hands back events whose seqs are not contiguous from 0.
	ErrCorrupt = errors.New("session: corrupt event")
	// ErrNotLog is the error of OpenFile and Repair on a file that is not a session log:
	// its first line is not a valid session event, or it is a symbolic link or not a
	// regular file. The file is left as it is.
	ErrNotLog = errors.New("session: not a session log")
	// ErrDamaged is the error of OpenFile on a log damaged before its last line (see
	// [DamageError]). The file is left as it is; [Repair] moves the damage aside.
	ErrDamaged = errors.New("session: damaged log")
	// ErrLocked is the error of OpenFile on a file that another open File holds.
	ErrLocked = errors.New("session: log file is in use")
	// ErrInconsistent is the cause of a *ReplayError for events that break the turn and
	// step structure or splice outside an inbox list.
	ErrInconsistent = errors.New("session: inconsistent log")
	// ErrStaleState is the error of CloseInterrupted with a State that does not fold the
	// whole log.
	ErrStaleState = errors.New("session: state does not match the log")
)
