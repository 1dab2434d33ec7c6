package tools

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"unicode/utf8"

	"github.com/dshkit/dsh/runtime/internal/validutf8"
)

// errNotLossless is the cause of a value, argument, meta or content that is not lossless
// JSON (docs/design/SEMANTICS.md#0-shared-vocabulary).
var errNotLossless = errors.New("not lossless JSON")

// snapshotJSON validates raw as lossless JSON and returns a private copy of it, without
// surrounding white space: a single valid UTF-8 JSON value whose numbers are finite and
// not -0.
func snapshotJSON(raw []byte) (json.RawMessage, error) {
	raw, ok := losslessJSON(raw)
	if !ok {
		return nil, errNotLossless
	}
	return append(json.RawMessage(nil), raw...), nil
}

// losslessJSON reports whether raw, without surrounding white space, is lossless JSON,
// and returns it so trimmed (not copied).
func losslessJSON(raw []byte) ([]byte, bool) {
	raw = bytes.TrimSpace(raw)
	return raw, validLossless(raw)
}

// finiteNumbers reports whether every number literal of the valid JSON text data is
// finite as a float64 and not a negative zero.
func finiteNumbers(data []byte) bool {
	for i := 0; i < len(data); i++ {
		switch c := data[i]; {
		case c == '"':
			for i++; i < len(data) && data[i] != '"'; i++ {
				if data[i] == '\\' {
					i++
				}
			}
		case c == '-' || (c >= '0' && c <= '9'):
			j := i
			check := c == '-'
			for j < len(data) && isNumberByte(data[j]) {
				if data[j] == 'e' || data[j] == 'E' {
					check = true
				}
				j++
			}
			if check || j-i > 300 {
				f, err := strconv.ParseFloat(string(data[i:j]), 64)
				if err != nil || (f == 0 && c == '-') {
					return false
				}
			}
			i = j - 1
		}
	}
	return true
}

func isNumberByte(c byte) bool {
	return (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E'
}

// marshalValue encodes the canonical value a tool body (or a wrapper) returned as lossless
// JSON.
func marshalValue(v any) (json.RawMessage, error) {
	switch v := v.(type) {
	case json.RawMessage:
		return snapshotJSON(v)
	case *json.RawMessage:
		if v == nil {
			return json.RawMessage("null"), nil
		}
		return snapshotJSON(*v)
	case string:
		if utf8.ValidString(v) {
			return appendJSONString(make([]byte, 0, len(v)+2), v), nil
		}
	}
	data, err := safeMarshal(v)
	if err != nil {
		var (
			me *json.MarshalerError
			pe *panicError
		)
		if errors.As(err, &me) {
			return nil, me.Unwrap()
		}
		if errors.As(err, &pe) {
			return nil, pe
		}
		return nil, errNotLossless
	}
	if !finiteNumbers(data) {
		return nil, errNotLossless
	}
	if _, ok := validutf8.Encoded(data, v, "value"); !ok {
		return nil, errNotLossless
	}
	return data, nil
}

// appendJSONString appends s as a JSON string (escaping like encoding/json, without
// HTML escaping). Why it is not the codec's: docs/decisions/0014-json-scanners.md, "Two JSON scanners and three
// string escapers".
func appendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			continue
		}
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == '\u2028' || r == '\u2029' {
				dst = append(dst, s[start:i]...)
				dst = append(dst, `\u202`...)
				dst = append(dst, "89"[r-'\u2028'])
				start = i + size
			}
			i += size - 1
			continue
		}
		dst = append(dst, s[start:i]...)
		switch c {
		case '"', '\\':
			dst = append(dst, '\\', c)
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		default:
			const hex = "0123456789abcdef"
			dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		}
		start = i + 1
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// safeMarshal is json.Marshal that turns a panicking MarshalJSON or String into an error.
func safeMarshal(v any) (data []byte, err error) {
	defer func() {
		if p := recover(); p != nil {
			data, err = nil, &panicError{value: p}
		}
	}()
	return json.Marshal(v)
}

// decodeJSON decodes lossless JSON into the generic form the schema validator takes
// (numbers as json.Number).
func decodeJSON(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

// textOf is the default rendering of a value: its text when it is a JSON string, else its
// JSON text.
func textOf(value json.RawMessage) string {
	if len(value) >= 2 && value[0] == '"' {
		if inner := value[1 : len(value)-1]; bytes.IndexByte(inner, '\\') < 0 {
			return string(inner)
		}
		var s string
		if json.Unmarshal(value, &s) == nil {
			return s
		}
	}
	return string(value)
}
