package codec

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"time"
)

// isNull reports whether data is the JSON literal null.
func isNull(data []byte) bool {
	return string(bytes.TrimSpace(data)) == "null"
}

// ObjectDecoder decodes one JSON object field by field, remembering the first error and
// which fields are still unread. Finish returns it to a pool: it must not be used after.
type ObjectDecoder struct {
	typ     string
	members []member
	err     error
}

// NewObjectDecoder starts decoding data, which must be a JSON object, as the type typ.
func NewObjectDecoder(typ string, data []byte) (*ObjectDecoder, error) {
	if isNull(data) {
		return nil, &DecodeError{Type: typ, Err: errNull}
	}
	d := decoderPool.Get().(*ObjectDecoder)
	d.typ = typ
	members, ok := scanObject(data, d.members[:0])
	d.members = members
	if ok {
		return d, nil
	}
	// Not an object the scanner takes: encoding/json decides, and gives its error.
	clear(d.members)
	d.members = d.members[:0]
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		d.release()
		return nil, &DecodeError{Type: typ, Err: err}
	}
	for _, name := range sortedKeys(fields) {
		d.members = append(d.members, member{name: []byte(name), raw: fields[name]})
	}
	return d, nil
}

// take marks field name read and returns its raw value: the last one if the object repeats
// the name, as encoding/json keeps the last.
func (d *ObjectDecoder) take(name string) (json.RawMessage, bool) {
	var raw json.RawMessage
	ok := false
	for i := range d.members {
		m := &d.members[i]
		if !m.taken && string(m.name) == name {
			m.taken = true
			raw, ok = m.raw, true
		}
	}
	return raw, ok
}

// fail records err, as a DecodeError on field, unless an error is already recorded.
func (d *ObjectDecoder) fail(field string, err error) {
	if d.err == nil {
		d.err = &DecodeError{Type: d.typ, Field: field, Err: err}
	}
}

// Kind checks the discriminator name of a union variant: present and equal to want.
func (d *ObjectDecoder) Kind(name, want string) {
	raw, ok := d.take(name)
	if !ok {
		d.fail(name, ErrMissingKind)
		return
	}
	if len(raw) >= 2 && raw[0] == '"' && string(raw[1:len(raw)-1]) == want {
		if end, plain := scanString(raw, 0); end == len(raw) && plain {
			return // the common case, without allocating the kind found
		}
	}
	if got, err := stringValue(raw); err != nil {
		d.fail(name, err)
	} else if got != want {
		d.fail(name, fmt.Errorf("%w %q (want %q)", ErrUnknownKind, got, want))
	}
}

// SkipUnknown forgets the fields that no one read, so that Finish accepts them: the type
// being decoded is open (CUE `...`).
func (d *ObjectDecoder) SkipUnknown() {
	for i := range d.members {
		d.members[i].taken = true
	}
}

// Finish returns the first error recorded, else an ErrUnknownField error for the first
// (in name order) field that no one read. It returns d to a pool: d must not be used after.
func (d *ObjectDecoder) Finish() error {
	err := d.err
	if err == nil {
		var first []byte
		found := false
		for _, m := range d.members {
			if !m.taken && (!found || string(m.name) < string(first)) {
				first, found = m.name, true
			}
		}
		if found {
			err = &DecodeError{Type: d.typ, Field: string(first), Err: ErrUnknownField}
		}
	}
	d.release()
	return err
}

// Required decodes the required field name into v; its absence is ErrMissingField.
func Required[T any](d *ObjectDecoder, name string, v *T, dec func([]byte, *T) error) {
	raw, ok := d.take(name)
	switch {
	case !ok:
		d.fail(name, ErrMissingField)
	case d.err == nil:
		if err := dec(raw, v); err != nil {
			d.fail(name, err)
		}
	}
}

// Optional decodes field name into v when it is present, and leaves v alone otherwise.
func Optional[T any](d *ObjectDecoder, name string, v *T, dec func([]byte, *T) error) {
	raw, ok := d.take(name)
	if ok && d.err == nil {
		if err := dec(raw, v); err != nil {
			d.fail(name, err)
		}
	}
}

// Default decodes field name into v, or the JSON literal def when it is absent.
func Default[T any](d *ObjectDecoder, name string, v *T, dec func([]byte, *T) error, def string) {
	raw, ok := d.take(name)
	if !ok {
		raw = json.RawMessage(def)
	}
	if d.err == nil {
		if err := dec(raw, v); err != nil {
			d.fail(name, err)
		}
	}
}

// Value decodes data into v with encoding/json, rejecting null. Records and enums decode
// strictly through their UnmarshalJSON methods.
func Value[T any](data []byte, v *T) error {
	if isNull(data) {
		return errNull
	}
	if u, ok := any(v).(json.Unmarshaler); ok && len(data) > 0 && validValue(data) {
		// encoding/json checks the whole value, then hands it, as it is, to UnmarshalJSON
		// and returns its error unchanged.
		return u.UnmarshalJSON(data)
	}
	if fastValue(data, v) {
		return nil
	}
	return json.Unmarshal(data, v)
}

// Checked is Value for data already known to be one well-formed JSON value: an object
// member or a list element handed over by an ObjectDecoder, ListOf or MapOf, which scanned
// it. For such data Value either passes its own validity check or, when its scanner does
// not take data, leaves it to encoding/json, which finds it valid; both then hand data, as
// it is, to T's UnmarshalJSON and return its error unchanged. Checked goes there directly,
// without scanning data a second time. Other data must go through Value.
func Checked[T any](data []byte, v *T) error {
	if u, ok := any(v).(json.Unmarshaler); ok && len(data) > 0 && !isNull(data) {
		return u.UnmarshalJSON(data)
	}
	return Value(data, v)
}

// fastValue decodes data into v, as json.Unmarshal would, when that is simple: a string
// without escapes or non-ASCII bytes, a boolean, a small integer. It reports false, leaving v alone, otherwise.
func fastValue(data []byte, v any) bool {
	switch p := v.(type) {
	case *string:
		s, ok := plainString(data)
		if ok {
			*p = s
		}
		return ok
	case **string:
		s, ok := plainString(data)
		if ok {
			if *p == nil {
				*p = new(string)
			}
			**p = s
		}
		return ok
	case *bool:
		b, ok := plainBool(data)
		if ok {
			*p = b
		}
		return ok
	case **bool:
		b, ok := plainBool(data)
		if ok {
			if *p == nil {
				*p = new(bool)
			}
			**p = b
		}
		return ok
	case *int:
		n, ok := plainInt(data)
		if ok {
			*p = int(n)
		}
		return ok
	case **int:
		n, ok := plainInt(data)
		if ok {
			if *p == nil {
				*p = new(int)
			}
			**p = int(n)
		}
		return ok
	case *int64:
		n, ok := plainInt(data)
		if ok {
			*p = n
		}
		return ok
	}
	return false
}

// plainString returns the value of data when data is a JSON string of printable ASCII
// without escapes.
func plainString(data []byte) (string, bool) {
	if len(data) < 2 || data[0] != '"' {
		return "", false
	}
	end, plain := scanString(data, 0)
	if end != len(data) || !plain {
		return "", false
	}
	return string(data[1 : len(data)-1]), true
}

// plainBool returns the value of data when data is exactly true or false.
func plainBool(data []byte) (bool, bool) {
	switch string(data) {
	case "true":
		return true, true
	case "false":
		return false, true
	}
	return false, false
}

// plainInt returns the value of data when data is a JSON integer of at most 18 digits,
// without fraction, exponent or whitespace.
func plainInt(data []byte) (int64, bool) {
	digits := data
	if len(digits) > 0 && digits[0] == '-' {
		digits = digits[1:]
	}
	if len(digits) == 0 || len(digits) > 18 || (digits[0] == '0' && len(digits) > 1) {
		return 0, false
	}
	var n int64
	for _, c := range digits {
		if !isDigit(c) {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	if len(digits) != len(data) {
		n = -n
	}
	return n, true
}

// Nullable turns a decoder of T into one that also accepts null, as the zero value of T:
// a nil pointer, list, map or union, or the empty enum (absent).
func Nullable[T any](dec func([]byte, *T) error) func([]byte, *T) error {
	return func(data []byte, v *T) error {
		if isNull(data) {
			var zero T
			*v = zero
			return nil
		}
		return dec(data, v)
	}
}

// Raw keeps any JSON value, null included, as it is.
func Raw(data []byte, v *json.RawMessage) error {
	*v = append(json.RawMessage(nil), bytes.TrimSpace(data)...)
	return nil
}

// Duration decodes a duration encoded as an integer number of milliseconds, from 0 to
// the longest a time.Duration holds (about 292 years); a negative count, or one that
// would overflow, is an error.
func Duration(data []byte, v *time.Duration) error {
	var ms int64
	if err := Value(data, &ms); err != nil {
		return err
	}
	// The longest time.Duration in milliseconds (codec imports nothing of dsh's but its
	// own packages: generated code carries it into modules of its own).
	const maxMS = int64(math.MaxInt64 / time.Millisecond)
	if ms < 0 || ms > maxMS {
		return fmt.Errorf("duration of %d ms: want 0 to %d", ms, maxMS)
	}
	*v = time.Duration(ms) * time.Millisecond
	return nil
}

// Enum decodes a string that must be one of values, as the enum type typ.
func Enum[E ~string](typ string, data []byte, v *E, values []E) error {
	var s string
	if err := Value(data, &s); err != nil {
		return &DecodeError{Type: typ, Err: err}
	}
	for _, allowed := range values {
		if E(s) == allowed {
			*v = allowed
			return nil
		}
	}
	return &DecodeError{Type: typ, Err: fmt.Errorf("%w %q (want one of %s)", ErrInvalidEnum, s, join(values))}
}

// PtrOf turns a decoder of T into a decoder of a newly allocated *T.
func PtrOf[T any](dec func([]byte, *T) error) func([]byte, **T) error {
	return func(data []byte, v **T) error {
		p := new(T)
		if err := dec(data, p); err != nil {
			return err
		}
		*v = p
		return nil
	}
}

// ListOf turns a decoder of T into a decoder of a JSON array of T (not null).
func ListOf[T any](dec func([]byte, *T) error) func([]byte, *[]T) error {
	return func(data []byte, v *[]T) error {
		if isNull(data) {
			return errNull
		}
		var buf [16][]byte
		raws, ok := scanArray(data, buf[:0])
		if !ok {
			var old []json.RawMessage
			if err := json.Unmarshal(data, &old); err != nil {
				return err
			}
			raws = raws[:0]
			for _, raw := range old {
				raws = append(raws, raw)
			}
		}
		out := make([]T, len(raws))
		for i, raw := range raws {
			if err := dec(raw, &out[i]); err != nil {
				return fmt.Errorf("[%d]: %w", i, err)
			}
		}
		*v = out
		return nil
	}
}

// MapOf turns a decoder of T into a decoder of a JSON object of T (not null).
func MapOf[T any](dec func([]byte, *T) error) func([]byte, *map[string]T) error {
	return func(data []byte, v *map[string]T) error {
		var raws map[string]json.RawMessage
		if err := Value(data, &raws); err != nil {
			return err
		}
		out := make(map[string]T, len(raws))
		for _, key := range sortedKeys(raws) {
			var elem T
			if err := dec(raws[key], &elem); err != nil {
				return fmt.Errorf("[%q]: %w", key, err)
			}
			out[key] = elem
		}
		*v = out
		return nil
	}
}

// UnionOf turns a union's Unmarshal function into a decoder.
func UnionOf[U any](unmarshal func([]byte) (U, error)) func([]byte, *U) error {
	return func(data []byte, v *U) error {
		u, err := unmarshal(data)
		if err != nil {
			return err
		}
		*v = u
		return nil
	}
}

// PeekKind reads the discriminator name of a union value of type typ.
func PeekKind(typ, name string, data []byte) (string, error) {
	d, err := NewObjectDecoder(typ, data)
	if err != nil {
		return "", err
	}
	raw, ok := d.take(name)
	d.release()
	if !ok {
		return "", &DecodeError{Type: typ, Field: name, Err: ErrMissingKind}
	}
	kind, err := stringValue(raw)
	if err != nil {
		return "", &DecodeError{Type: typ, Field: name, Err: err}
	}
	return kind, nil
}

// stringValue decodes data as Value does a string, without allocating for a plain one.
func stringValue(data []byte) (string, error) {
	if s, ok := plainString(data); ok {
		return s, nil
	}
	return slowString(data)
}

// slowString decodes data as Value does a string.
func slowString(data []byte) (string, error) {
	var s string
	err := Value(data, &s)
	return s, err
}

// sortedKeys returns the keys of m in increasing order.
func sortedKeys[T any](m map[string]T) []string {
	keys := make([]string, 0, len(m))
	for key := range m {
		keys = append(keys, key)
	}
	sort.Strings(keys)
	return keys
}

// Unmarshal decodes data into v exactly as json.Unmarshal does. When *T has its own
// UnmarshalJSON (the generated records) and data is one well-formed value, it calls it
// directly, as encoding/json would after checking data, without encoding/json's second
// scan and reflection.
func Unmarshal[T any](data []byte, v *T) error {
	if u, ok := any(v).(json.Unmarshaler); ok {
		start, end := skipSpace(data, 0), len(data)
		for end > start && isSpace(data[end-1]) {
			end--
		}
		if start < end && validValue(data[start:end]) {
			return u.UnmarshalJSON(data[start:end])
		}
	}
	return json.Unmarshal(data, v)
}
