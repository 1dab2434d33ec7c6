package codec

import (
	"encoding/json"
	"errors"
	"testing"
	"time"
)

type color string

func TestObjectDecoder(t *testing.T) {
	type rec struct {
		Name  string
		Wait  *time.Duration
		Tags  []string
		Color color
	}
	decode := func(data string, open bool) (rec, error) {
		var v rec
		d, err := NewObjectDecoder("Rec", []byte(data))
		if err != nil {
			return v, err
		}
		d.Kind("kind", "rec")
		Required(d, "name", &v.Name, Value[string])
		Optional(d, "wait", &v.Wait, Nullable(PtrOf(Duration)))
		Default(d, "tags", &v.Tags, ListOf(Value[string]), `["x"]`)
		Default(d, "color", &v.Color, func(b []byte, c *color) error {
			return Enum("Color", b, c, []color{"red", "blue"})
		}, `"red"`)
		if open {
			d.SkipUnknown()
		}
		return v, d.Finish()
	}
	v, err := decode(`{"kind":"rec","name":"n","wait":1500}`, false)
	if err != nil || v.Name != "n" || *v.Wait != 1500*time.Millisecond || len(v.Tags) != 1 || v.Color != "red" {
		t.Errorf("got %+v, %v", v, err)
	}
	for _, c := range []struct {
		data     string
		open     bool
		sentinel error
		field    string
	}{
		{`{"kind":"rec"}`, false, ErrMissingField, "name"},
		{`{"name":"n"}`, false, ErrMissingKind, "kind"},
		{`{"kind":"other","name":"n"}`, false, ErrUnknownKind, "kind"},
		{`{"kind":"rec","name":"n","z":1,"a":2}`, false, ErrUnknownField, "a"},
		{`{"kind":"rec","name":"n","color":"green"}`, false, ErrInvalidEnum, "color"},
		{`{"kind":"rec","name":null}`, false, errNull, "name"},
	} {
		_, err := decode(c.data, c.open)
		var de *DecodeError
		if !errors.Is(err, c.sentinel) || !errors.As(err, &de) || de.Type != "Rec" || de.Field != c.field {
			t.Errorf("%s: error %v, want a DecodeError on Rec.%s wrapping %v", c.data, err, c.field, c.sentinel)
		}
	}
	if _, err := decode(`{"kind":"rec","name":"n","z":1}`, true); err != nil {
		t.Errorf("an open record rejects an unknown field: %v", err)
	}
	if v, err := decode(`{"kind":"rec","name":"n","wait":null}`, false); err != nil || v.Wait != nil {
		t.Errorf("nullable null: %+v %v", v, err)
	}
}

func TestPeekKindAndUnknownKind(t *testing.T) {
	if k, err := PeekKind("U", "kind", []byte(`{"kind":"a","x":1}`)); err != nil || k != "a" {
		t.Errorf("PeekKind: %q %v", k, err)
	}
	if _, err := PeekKind("U", "kind", []byte(`{"x":1}`)); !errors.Is(err, ErrMissingKind) {
		t.Errorf("PeekKind without kind: %v", err)
	}
	if _, err := PeekKind("U", "kind", []byte(`null`)); err == nil {
		t.Error("PeekKind accepts null")
	}
	err := UnknownKind("U", "kind", "z", []color{"a", "b"})
	if !errors.Is(err, ErrUnknownKind) || err.Error() != `U.kind: unknown union kind "z" (want one of "a", "b")` {
		t.Errorf("UnknownKind: %v", err)
	}
}

func TestRawAndMapOf(t *testing.T) {
	var raw json.RawMessage
	if err := Raw([]byte(" null "), &raw); err != nil || string(raw) != "null" {
		t.Errorf("Raw: %s %v", raw, err)
	}
	var m map[string]int
	err := MapOf(Value[int])([]byte(`{"b":1,"a":"x"}`), &m)
	if err == nil || err.Error()[:5] != `["a"]` {
		t.Errorf("MapOf: %v, want an error naming key a", err)
	}
}

func TestChecks(t *testing.T) {
	if err := Exclusive("R", []string{"a", "b", "c"}, true, false, true); !errors.Is(err, ErrExclusive) || err.(*DecodeError).Field != "a|c" {
		t.Errorf("Exclusive: %v", err)
	}
	if err := Exclusive("R", []string{"a", "b"}, true, false); err != nil {
		t.Errorf("Exclusive with one set: %v", err)
	}
	fail := func(n int) error {
		if n < 0 {
			return errors.New("negative")
		}
		return nil
	}
	if err := CheckList([]int{1, -1}, fail); err == nil || err.Error() != "[1]: negative" {
		t.Errorf("CheckList: %v", err)
	}
	if err := MapChecker(fail)(map[string]int{"b": -1, "a": -2}); err == nil || err.Error() != `["a"]: negative` {
		t.Errorf("MapChecker: %v", err)
	}
}

// A duration whose milliseconds would overflow time.Duration, or a negative one, is an
// error, never a wrapped or negative duration.
func TestDurationRange(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"1500", 1500 * time.Millisecond, true},
		{"0", 0, true},
		{"9223372036854", 9223372036854 * time.Millisecond, true},
		{"9223372036855", 0, false},
		{"9223372036854775807", 0, false},
		{"-1", 0, false},
	} {
		var d time.Duration
		err := Duration([]byte(tc.in), &d)
		if (err == nil) != tc.ok || (tc.ok && d != tc.want) || d < 0 {
			t.Errorf("Duration(%s) = %v, %v; want %v (ok %v)", tc.in, d, err, tc.want, tc.ok)
		}
	}
}
