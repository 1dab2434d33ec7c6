package codec

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"sync"
	"unicode/utf8"
)

// Encoder appends one JSON value to a buffer, as generated MarshalJSON methods write
// themselves: BeginObject, then Key and a value per field, then EndObject. It remembers the
// first error (a float that JSON cannot carry, invalid raw JSON) and Finish returns it.
//
// Commas are implied: Key and Elem write one unless the previous byte opens an object or
// an array.
type Encoder struct {
	buf []byte
	// key is the last key written, to name the field in an error.
	key string
	err error
}

// maxPooledBuffer is the largest buffer an Encoder keeps for reuse; a larger one (a huge
// value) is left to the collector.
const maxPooledBuffer = 64 << 10

// encoders holds idle Encoders with their buffers, so that encoding a value costs one
// allocation: the copy Finish returns.
var encoders = sync.Pool{New: func() any { return new(Encoder) }}

// NewEncoder returns an empty Encoder from a pool. Finish returns it there.
func NewEncoder() *Encoder {
	e := encoders.Get().(*Encoder)
	e.buf, e.key, e.err = e.buf[:0], "", nil
	return e
}

// Marshal returns the JSON encode writes of v, encode being a generated type's encodeJSON
// method (T.encodeJSON): what a generated MarshalJSON returns.
func Marshal[T any](v T, encode func(T, *Encoder)) ([]byte, error) {
	e := NewEncoder()
	encode(v, e)
	return e.Finish()
}

// Finish returns a copy of what e holds, or its first error, and puts e back in the pool:
// e must not be used afterwards.
func (e *Encoder) Finish() ([]byte, error) {
	var out []byte
	err := e.err
	if err == nil {
		out = bytes.Clone(e.buf)
	}
	e.key, e.err = "", nil
	if cap(e.buf) <= maxPooledBuffer {
		encoders.Put(e)
	}
	return out, err
}

// AppendTo appends what e holds to dst, or returns its first error, and puts e back in the
// pool: e must not be used afterwards. It is Finish for a caller that keeps its own buffer.
func (e *Encoder) AppendTo(dst []byte) ([]byte, error) {
	err := e.err
	if err == nil {
		dst = append(dst, e.buf...)
	}
	e.key, e.err = "", nil
	if cap(e.buf) <= maxPooledBuffer {
		encoders.Put(e)
	}
	return dst, err
}

// fail records err, naming the field being written, unless an error is already recorded.
func (e *Encoder) fail(err error) {
	if e.err == nil {
		e.err = fmt.Errorf("field %q: %w", e.key, err)
	}
}

// comma writes the separator before a key or an array element, unless it is the first.
func (e *Encoder) comma() {
	if n := len(e.buf); n > 0 && e.buf[n-1] != '{' && e.buf[n-1] != '[' {
		e.buf = append(e.buf, ',')
	}
}

// BeginObject writes '{'.
func (e *Encoder) BeginObject() { e.buf = append(e.buf, '{') }

// EndObject writes '}'.
func (e *Encoder) EndObject() { e.buf = append(e.buf, '}') }

// BeginArray writes '['.
func (e *Encoder) BeginArray() { e.buf = append(e.buf, '[') }

// EndArray writes ']'.
func (e *Encoder) EndArray() { e.buf = append(e.buf, ']') }

// Key writes the key of the next object member: a comma unless it is the first, the name
// as a JSON string, and ':'. It returns e, to write the value: enc.Key("id").String(id).
func (e *Encoder) Key(name string) *Encoder {
	e.comma()
	e.key = name
	e.buf = appendString(e.buf, name)
	e.buf = append(e.buf, ':')
	return e
}

// Elem writes the separator before the next array element (none before the first).
func (e *Encoder) Elem() { e.comma() }

// Null writes null.
func (e *Encoder) Null() { e.buf = append(e.buf, "null"...) }

// String writes s as a JSON string, as encoding/json does: <, > and & escaped, invalid
// UTF-8 replaced by U+FFFD, U+2028 and U+2029 escaped.
func (e *Encoder) String(s string) { e.buf = appendString(e.buf, s) }

// Int writes n.
func (e *Encoder) Int(n int) { e.buf = strconv.AppendInt(e.buf, int64(n), 10) }

// Int64 writes n.
func (e *Encoder) Int64(n int64) { e.buf = strconv.AppendInt(e.buf, n, 10) }

// Bool writes true or false.
func (e *Encoder) Bool(b bool) { e.buf = strconv.AppendBool(e.buf, b) }

// Float writes f as encoding/json does (the shortest representation, exponent form below
// 1e-6 and from 1e21 up); NaN and the infinities are an error, and write null in its place.
func (e *Encoder) Float(f float64) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		e.fail(&json.UnsupportedValueError{Value: reflect.ValueOf(f), Str: strconv.FormatFloat(f, 'g', -1, 64)})
		e.Null()
		return
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b := strconv.AppendFloat(e.buf, f, format, -1, 64)
	if format == 'e' {
		// Clean up e-09 to e-9, as encoding/json does.
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	e.buf = b
}

// Raw writes raw JSON as encoding/json writes a json.RawMessage: nil as null, anything
// else validated, compacted and HTML-escaped. Invalid JSON is an error, and writes null in
// its place.
func (e *Encoder) Raw(raw json.RawMessage) {
	if raw == nil {
		e.Null()
		return
	}
	if !json.Valid(raw) {
		var v any
		err := json.Unmarshal(raw, &v) // only for its error, which says what is wrong
		if err == nil {
			err = fmt.Errorf("invalid JSON")
		}
		e.fail(&json.MarshalerError{Type: reflect.TypeFor[json.RawMessage](), Err: err})
		e.Null()
		return
	}
	if !needsCompact(raw) {
		e.buf = append(e.buf, raw...)
		return
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, raw); err != nil {
		e.fail(err)
		e.Null()
		return
	}
	out := bytes.NewBuffer(e.buf)
	json.HTMLEscape(out, compact.Bytes())
	e.buf = out.Bytes()
}

// needsCompact reports whether valid JSON raw may hold a byte that encoding/json would
// remove (whitespace) or escape (<, >, &, and the first byte of U+2028 and U+2029).
func needsCompact(raw []byte) bool {
	for _, c := range raw {
		switch c {
		case ' ', '\t', '\n', '\r', '<', '>', '&', 0xE2:
			return true
		}
	}
	return false
}

// Value writes v with encoding/json.Marshal: the fallback for a value the generated code
// does not know (a type that embeds a union variant, say). An error writes null.
func (e *Encoder) Value(v any) {
	data, err := json.Marshal(v)
	if err != nil {
		e.fail(err)
		e.Null()
		return
	}
	e.buf = append(e.buf, data...)
}

// EncodeList writes s as a JSON array, each element with elem; a nil s writes null, as
// encoding/json does (a generated field that encodes nil as [] passes NonNilList(s)).
func EncodeList[T any](e *Encoder, s []T, elem func(*Encoder, T)) {
	if s == nil {
		e.Null()
		return
	}
	e.BeginArray()
	for _, v := range s {
		e.Elem()
		elem(e, v)
	}
	e.EndArray()
}

// EncodeMap writes m as a JSON object with its keys in increasing order, each value with
// elem; a nil m writes null, as encoding/json does (see NonNilMap).
func EncodeMap[T any](e *Encoder, m map[string]T, elem func(*Encoder, T)) {
	if m == nil {
		e.Null()
		return
	}
	var small [16]string
	keys := small[:0]
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	e.BeginObject()
	for _, k := range keys {
		e.Key(k)
		elem(e, m[k])
	}
	e.EndObject()
}

// EncodePtr writes *p with encode (a generated type's encodeJSON method), or null when p is
// nil, as encoding/json writes a nil pointer.
func EncodePtr[T any](e *Encoder, p *T, encode func(T, *Encoder)) {
	if p == nil {
		e.Null()
		return
	}
	encode(*p, e)
}

// NonNilList returns s, or an empty list when s is nil, so that it encodes as [].
func NonNilList[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// NonNilMap returns m, or an empty map when m is nil, so that it encodes as {}.
func NonNilMap[T any](m map[string]T) map[string]T {
	if m == nil {
		return map[string]T{}
	}
	return m
}

const hex = "0123456789abcdef"

// appendString appends s as a JSON string exactly as encoding/json does with HTML
// escaping on (its default).
func appendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if htmlSafe(b) {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				// The other control characters, and <, > and &.
				dst = append(dst, '\\', 'u', '0', '0', hex[b>>4], hex[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		if c == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if c == '\u2028' || c == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[c&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// htmlSafe reports whether ASCII byte b stands for itself in a JSON string that
// encoding/json HTML-escapes.
func htmlSafe(b byte) bool {
	return b >= 0x20 && b != '"' && b != '\\' && b != '<' && b != '>' && b != '&'
}
