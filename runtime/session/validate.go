package session

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/internal/validutf8"
)

// validator is what every generated record implements.
type validator interface {
	Validate() error
}

// encodeData checks data and returns its type and JSON. Every failure wraps
// ErrInvalidData. data must be a generated session record (or a non-nil pointer to one)
// whose type is in dsh.SessionEventTypes, pass its Validate method, and encode with
// encoding/json to valid UTF-8 without replacing any invalid UTF-8 in its strings (which
// encoding/json does silently, and which would make the log lossy).
func encodeData(data dsh.SessionEventData) (string, json.RawMessage, error) {
	if data == nil {
		return "", nil, fmt.Errorf("%w: nil data", ErrInvalidData)
	}
	rv := reflect.ValueOf(data)
	rt := rv.Type()
	if rt.Kind() == reflect.Pointer {
		if rv.IsNil() {
			return "", nil, fmt.Errorf("%w: nil %T", ErrInvalidData, data)
		}
		rt = rt.Elem()
	}
	if rt.PkgPath() != reflect.TypeFor[dsh.TurnStart]().PkgPath() {
		return "", nil, fmt.Errorf("%w: %T is not a generated session record", ErrInvalidData, data)
	}
	typ := data.SessionEventType()
	if !slices.Contains(dsh.SessionEventTypes, typ) {
		return "", nil, fmt.Errorf("%w: unknown event type %q", ErrInvalidData, typ)
	}
	v, ok := data.(validator)
	if !ok {
		return "", nil, fmt.Errorf("%w: %T has no Validate method", ErrInvalidData, data)
	}
	if err := v.Validate(); err != nil {
		return "", nil, fmt.Errorf("%w: %s: %w", ErrInvalidData, typ, err)
	}
	raw, err := marshal(data)
	if err != nil {
		return "", nil, fmt.Errorf("%w: %s: %w", ErrInvalidData, typ, err)
	}
	if path, ok := validutf8.Encoded(raw, data, typ); !ok {
		return "", nil, fmt.Errorf("%w: %s: invalid UTF-8 in %s", ErrInvalidData, typ, path)
	}
	return typ, raw, nil
}

// marshal encodes data as json.Marshal does, but cheaper for a generated record (encodeData
// accepts no other): its MarshalJSON, which the codec runtime implements, writes valid
// compact JSON (raw JSON fields validated and compacted, other values encoded by it or by
// encoding/json), so the output is neither re-encoded nor re-scanned by json.Valid; it is
// compacted only if it holds a newline (a line of the log must not), which it cannot.
func marshal(data dsh.SessionEventData) ([]byte, error) {
	m, ok := data.(json.Marshaler)
	if !ok {
		return json.Marshal(data)
	}
	raw, err := m.MarshalJSON()
	if err != nil {
		return nil, err
	}
	if bytes.IndexByte(raw, '\n') >= 0 {
		var buf bytes.Buffer
		if err := json.Compact(&buf, raw); err != nil {
			return nil, err
		}
		raw = buf.Bytes()
	}
	return raw, nil
}
