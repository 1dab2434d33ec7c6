package codec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// This file pins that the scanning decoders behave exactly as the encoding/json-based
// ones they replaced: the old implementation is kept below as the oracle (old*), and the
// tests and fuzz targets compare results and errors on the same inputs.

// oldDecoder is the map-based ObjectDecoder the scanner replaced.
type oldDecoder struct {
	typ    string
	fields map[string]json.RawMessage
	err    error
}

func oldNewObjectDecoder(typ string, data []byte) (*oldDecoder, error) {
	if isNull(data) {
		return nil, &DecodeError{Type: typ, Err: errNull}
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		return nil, &DecodeError{Type: typ, Err: err}
	}
	return &oldDecoder{typ: typ, fields: fields}, nil
}

func (d *oldDecoder) take(name string) (json.RawMessage, bool) {
	raw, ok := d.fields[name]
	delete(d.fields, name)
	return raw, ok
}

func (d *oldDecoder) fail(field string, err error) {
	if d.err == nil {
		d.err = &DecodeError{Type: d.typ, Field: field, Err: err}
	}
}

func (d *oldDecoder) Kind(name, want string) {
	raw, ok := d.take(name)
	if !ok {
		d.fail(name, ErrMissingKind)
		return
	}
	var got string
	if err := oldValue(raw, &got); err != nil {
		d.fail(name, err)
	} else if got != want {
		d.fail(name, fmt.Errorf("%w %q (want %q)", ErrUnknownKind, got, want))
	}
}

func (d *oldDecoder) SkipUnknown() { clear(d.fields) }

func (d *oldDecoder) Finish() error {
	if d.err != nil {
		return d.err
	}
	if len(d.fields) > 0 {
		return &DecodeError{Type: d.typ, Field: sortedKeys(d.fields)[0], Err: ErrUnknownField}
	}
	return nil
}

func oldRequired[T any](d *oldDecoder, name string, v *T, dec func([]byte, *T) error) {
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

func oldOptional[T any](d *oldDecoder, name string, v *T, dec func([]byte, *T) error) {
	raw, ok := d.take(name)
	if ok && d.err == nil {
		if err := dec(raw, v); err != nil {
			d.fail(name, err)
		}
	}
}

func oldDefault[T any](d *oldDecoder, name string, v *T, dec func([]byte, *T) error, def string) {
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

func oldValue[T any](data []byte, v *T) error {
	if isNull(data) {
		return errNull
	}
	return json.Unmarshal(data, v)
}

func oldListOf[T any](dec func([]byte, *T) error) func([]byte, *[]T) error {
	return func(data []byte, v *[]T) error {
		var raws []json.RawMessage
		if err := oldValue(data, &raws); err != nil {
			return err
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

func oldPeekKind(typ, name string, data []byte) (string, error) {
	d, err := oldNewObjectDecoder(typ, data)
	if err != nil {
		return "", err
	}
	raw, ok := d.take(name)
	if !ok {
		return "", &DecodeError{Type: typ, Field: name, Err: ErrMissingKind}
	}
	var kind string
	if err := oldValue(raw, &kind); err != nil {
		return "", &DecodeError{Type: typ, Field: name, Err: err}
	}
	return kind, nil
}

// hue is an enum with its own UnmarshalJSON, as generated enums have.
type hue string

func (h *hue) UnmarshalJSON(data []byte) error {
	return Enum("Hue", data, h, []hue{"red", "blue", "é"})
}

// inner is an open record decoded by the new decoder; oldInner the same by the old one.
type inner struct {
	X string `json:"x"`
	Y *int   `json:"y,omitempty"`
}

func (r *inner) UnmarshalJSON(data []byte) error {
	d, err := NewObjectDecoder("Inner", data)
	if err != nil {
		return err
	}
	var v inner
	Required(d, "x", &v.X, Value[string])
	Optional(d, "y", &v.Y, Nullable(Value[*int]))
	d.SkipUnknown()
	if err := d.Finish(); err != nil {
		return err
	}
	*r = v
	return nil
}

type oldInner struct {
	X string `json:"x"`
	Y *int   `json:"y,omitempty"`
}

func (r *oldInner) UnmarshalJSON(data []byte) error {
	d, err := oldNewObjectDecoder("Inner", data)
	if err != nil {
		return err
	}
	var v oldInner
	oldRequired(d, "x", &v.X, oldValue[string])
	oldOptional(d, "y", &v.Y, Nullable(oldValue[*int]))
	d.SkipUnknown()
	if err := d.Finish(); err != nil {
		return err
	}
	*r = v
	return nil
}

// rec is a closed union variant with one field of each kind the generator emits.
type rec[I any] struct {
	Name  string                     `json:"name"`
	Ptr   *string                    `json:"ptr"`
	N     int                        `json:"n"`
	PN    *int                       `json:"pn"`
	I64   int64                      `json:"i64"`
	B     bool                       `json:"b"`
	PB    *bool                      `json:"pb"`
	F     *float64                   `json:"f"`
	Tags  []string                   `json:"tags"`
	Hue   hue                        `json:"hue"`
	Inner *I                         `json:"inner"`
	Items []I                        `json:"items"`
	Extra map[string]json.RawMessage `json:"extra"`
	Raw   json.RawMessage            `json:"raw"`
}

func newRec(data []byte) (rec[inner], error) {
	var v rec[inner]
	d, err := NewObjectDecoder("Rec", data)
	if err != nil {
		return v, err
	}
	d.Kind("kind", "rec")
	Required(d, "name", &v.Name, Value[string])
	Optional(d, "ptr", &v.Ptr, Nullable(Value[*string]))
	Default(d, "n", &v.N, Value[int], `7`)
	Optional(d, "pn", &v.PN, Value[*int])
	Optional(d, "i64", &v.I64, Value[int64])
	Optional(d, "b", &v.B, Value[bool])
	Optional(d, "pb", &v.PB, Value[*bool])
	Optional(d, "f", &v.F, Value[*float64])
	Optional(d, "tags", &v.Tags, ListOf(Value[string]))
	Default(d, "hue", &v.Hue, Value[hue], `"red"`)
	Optional(d, "inner", &v.Inner, Value[*inner])
	Optional(d, "items", &v.Items, Nullable(ListOf(Value[inner])))
	Optional(d, "extra", &v.Extra, MapOf(Raw))
	Optional(d, "raw", &v.Raw, Raw)
	return v, d.Finish()
}

func oldRec(data []byte) (rec[oldInner], error) {
	var v rec[oldInner]
	d, err := oldNewObjectDecoder("Rec", data)
	if err != nil {
		return v, err
	}
	d.Kind("kind", "rec")
	oldRequired(d, "name", &v.Name, oldValue[string])
	oldOptional(d, "ptr", &v.Ptr, Nullable(oldValue[*string]))
	oldDefault(d, "n", &v.N, oldValue[int], `7`)
	oldOptional(d, "pn", &v.PN, oldValue[*int])
	oldOptional(d, "i64", &v.I64, oldValue[int64])
	oldOptional(d, "b", &v.B, oldValue[bool])
	oldOptional(d, "pb", &v.PB, oldValue[*bool])
	oldOptional(d, "f", &v.F, oldValue[*float64])
	oldOptional(d, "tags", &v.Tags, oldListOf(oldValue[string]))
	oldDefault(d, "hue", &v.Hue, oldValue[hue], `"red"`)
	oldOptional(d, "inner", &v.Inner, oldValue[*oldInner])
	oldOptional(d, "items", &v.Items, Nullable(oldListOf(oldValue[oldInner])))
	oldOptional(d, "extra", &v.Extra, MapOf(Raw))
	oldOptional(d, "raw", &v.Raw, Raw)
	return v, d.Finish()
}

// sameError reports how two errors differ, or "" if they have the same message, the same
// sentinels and the same DecodeError type and field.
func sameError(got, want error) string {
	if (got == nil) != (want == nil) {
		return fmt.Sprintf("error %v, want %v", got, want)
	}
	if got == nil {
		return ""
	}
	if got.Error() != want.Error() {
		return fmt.Sprintf("error %q, want %q", got, want)
	}
	for _, s := range []error{ErrMissingField, ErrUnknownField, ErrMissingKind, ErrUnknownKind, ErrInvalidEnum, errNull} {
		if errors.Is(got, s) != errors.Is(want, s) {
			return fmt.Sprintf("errors.Is(%v, %v) differs", got, s)
		}
	}
	var gd, wd *DecodeError
	if errors.As(got, &gd) != errors.As(want, &wd) || gd != nil && (gd.Type != wd.Type || gd.Field != wd.Field) {
		return fmt.Sprintf("DecodeError %+v, want %+v", gd, wd)
	}
	var gs, ws *json.SyntaxError
	if errors.As(got, &gs) != errors.As(want, &ws) || gs != nil && gs.Offset != ws.Offset {
		return fmt.Sprintf("SyntaxError %+v, want %+v", gs, ws)
	}
	return ""
}

// checkRec compares decoding data with the new and the old decoders.
func checkRec(t *testing.T, data []byte) {
	t.Helper()
	got, gerr := newRec(data)
	want, werr := oldRec(data)
	if d := sameError(gerr, werr); d != "" {
		t.Fatalf("%q: %s", data, d)
	}
	if gerr != nil {
		return
	}
	gj, _ := json.Marshal(got)
	wj, _ := json.Marshal(want)
	if !bytes.Equal(gj, wj) {
		t.Fatalf("%q: decoded %s, want %s", data, gj, wj)
	}
}

// checkValues compares Value, ListOf and PeekKind with their old versions on data.
func checkValues(t *testing.T, data []byte) {
	t.Helper()
	compare := func(what string, got, want any, gerr, werr error) {
		t.Helper()
		if d := sameError(gerr, werr); d != "" {
			t.Fatalf("%s %q: %s", what, data, d)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s %q: decoded %#v, want %#v", what, data, got, want)
		}
	}
	{
		var g, w string
		compare("string", g, w, Value(data, &g), oldValue(data, &w))
	}
	{
		var g, w *string
		ge, we := Value(data, &g), oldValue(data, &w)
		compare("*string", g, w, ge, we)
		// A pointer already set is written through, as encoding/json does.
		a, b := "a", "a"
		g, w = &a, &b
		ge, we = Value(data, &g), oldValue(data, &w)
		compare("*string reused", a, b, ge, we)
	}
	{
		var g, w bool
		compare("bool", g, w, Value(data, &g), oldValue(data, &w))
	}
	{
		var g, w *bool
		compare("*bool", g, w, Value(data, &g), oldValue(data, &w))
	}
	{
		var g, w int
		compare("int", g, w, Value(data, &g), oldValue(data, &w))
	}
	{
		var g, w *int
		compare("*int", g, w, Value(data, &g), oldValue(data, &w))
	}
	{
		var g, w int64
		compare("int64", g, w, Value(data, &g), oldValue(data, &w))
	}
	{
		var g, w *float64
		compare("*float64", g, w, Value(data, &g), oldValue(data, &w))
	}
	{
		var g, w hue
		compare("hue", g, w, Value(data, &g), oldValue(data, &w))
	}
	{
		var g, w inner
		ge, we := Value(data, &g), oldValue(data, &w)
		compare("inner", g, inner(w), ge, we)
	}
	{
		var g, w []string
		compare("[]string", g, w, ListOf(Value[string])(data, &g), oldListOf(oldValue[string])(data, &w))
	}
	{
		var g, w []hue
		compare("[]hue", g, w, ListOf(Value[hue])(data, &g), oldListOf(oldValue[hue])(data, &w))
	}
	{
		var g, w inner
		ge, we := Unmarshal(data, &g), json.Unmarshal(data, &w)
		compare("Unmarshal inner", g, w, ge, we)
	}
	{
		var g, w hue
		ge, we := Unmarshal(data, &g), json.Unmarshal(data, &w)
		compare("Unmarshal hue", g, w, ge, we)
	}
	{
		var g, w []string
		ge, we := Unmarshal(data, &g), json.Unmarshal(data, &w)
		compare("Unmarshal []string", g, w, ge, we)
	}
	{
		g, ge := PeekKind("U", "kind", data)
		w, we := oldPeekKind("U", "kind", data)
		compare("PeekKind", g, w, ge, we)
	}
	{
		d, ge := NewObjectDecoder("O", data)
		o, we := oldNewObjectDecoder("O", data)
		if msg := sameError(ge, we); msg != "" {
			t.Fatalf("NewObjectDecoder %q: %s", data, msg)
		}
		if ge == nil {
			// The same members, the last of duplicates, and the same first unknown one.
			for _, name := range sortedKeys(o.fields) {
				raw, ok := d.take(name)
				if !ok || !bytes.Equal(raw, o.fields[name]) {
					t.Fatalf("NewObjectDecoder %q: member %q is %q %v, want %q", data, name, raw, ok, o.fields[name])
				}
			}
			if err := d.Finish(); err != nil {
				t.Fatalf("NewObjectDecoder %q: members left: %v", data, err)
			}
		}
	}
	// The scanner never accepts what encoding/json rejects.
	if validValue(data) && !json.Valid(data) {
		t.Fatalf("validValue accepts %q, which encoding/json rejects", data)
	}
	if json.Valid(data) && len(bytes.TrimLeft(data, " \t\r\n")) == len(data) && len(bytes.TrimRight(data, " \t\r\n")) == len(data) &&
		bytes.Count(data, []byte("["))+bytes.Count(data, []byte("{")) < maxScanDepth && !validValue(data) {
		t.Fatalf("validValue rejects %q, which encoding/json accepts", data)
	}
}

// decodeCorpus holds inputs for the differential tests and seeds for the fuzz targets.
var decodeCorpus = []string{
	`{"kind":"rec","name":"n"}`,
	` { "kind" : "rec" , "name" : "n" , "n" : 3 } `,
	`{"kind":"rec","name":"n","ptr":null,"n":-12,"pn":0,"i64":-0,"b":true,"pb":false,"f":1.5e3,"tags":["a","b"],"hue":"blue","inner":{"x":"y","z":[1,{}]},"items":[{"x":"1"},{"x":"2","y":null}],"extra":{"b":1,"a":[true]},"raw":  {"a" :1}  }`,
	`{"kind":"rec","name":"n","name":"m"}`,
	`{"kind":"rec","name":"n","kind":"other"}`,
	`{"kind":"rec","name":"n","z":1,"a":2,"z":3}`,
	`{"kind":"rec"}`,
	`{"name":"n"}`,
	`{"kind":"rec","name":null}`,
	`{"kind":"rec","name":"n","n":1.0}`,
	`{"kind":"rec","name":"n","n":1e2}`,
	`{"kind":"rec","name":"n","n":99999999999999999999}`,
	`{"kind":"rec","name":"n","n":"1"}`,
	`{"kind":"rec","name":"n","f":-0}`,
	`{"kind":"rec","name":"n","f":1e400}`,
	`{"kind":"rec","name":"n","hue":"green"}`,
	`{"kind":"rec","name":"n","hue":"\u00e9"}`,
	`{"kind":"rec","name":"n","items":[{"y":1}]}`,
	`{"kind":"rec","name":"n","items":[{"x":"a"},null]}`,
	`{"kind":"rec","name":"n","items":null}`,
	`{"kind":"rec","name":"n","tags":[1]}`,
	`{"kind":"rec","name":"n","tags":{}}`,
	`{"kind":"rec","name":"n","inner":null}`,
	`{"kind":"rec","name":"n","inner":[]}`,
	`{"kind":"rec","name":"n\u0041\n\ud83d\ude00\ud800x\"\\"}`,
	"{\"kind\":\"rec\",\"name\":\"\xff\xfe\xc3(\"}",
	`{"ki\u006ed":"rec","name":"n"}`,
	"{\"kind\":\"rec\",\"na\xffme\":\"n\"}",
	`{"kind":"rec","name":"n",}`,
	`{"kind":"rec","name":"n"} x`,
	`{"kind":"rec","name":"n"`,
	`{"kind":"rec" "name":"n"}`,
	`{"kind":"rec","name":"n","n":01}`,
	`{"kind":"rec","name":"n","n":-}`,
	`{"kind":"rec","name":"n","n":1.}`,
	`{"kind":"rec","name":"n","b":tru}`,
	`{"kind":"rec","name":"\x01"}`,
	`{"kind":"rec","name":"\q"}`,
	`{"kind":"rec","name":"\u12"}`,
	`{kind:"rec"}`,
	`[]`,
	`["a","b"]`,
	`[ "a" , "b" ]`,
	`["a",]`,
	`[1,2`,
	`"plain"`,
	`"red"`,
	`"with \" escape"`,
	`"é"`,
	"\"\xff\"",
	`  "spaced"  `,
	`true`,
	`false`,
	`null`,
	` null `,
	" {\"x\":\"a\"}\n",
	"\t\"red\" ",
	"\u00a0null",
	`0`,
	`-0`,
	`123456789012345678`,
	`1234567890123456789`,
	`-9223372036854775808`,
	`9223372036854775808`,
	`1.25`,
	`1e5`,
	`{"x":"a","y":2}`,
	`{"x":"a","y":1.5}`,
	``,
	` `,
	`{}`,
	`{"kind":"a","kind":"b"}`,
	`{"kind":1}`,
	`{"kind":null}`,
	strings.Repeat("[", 300) + strings.Repeat("]", 300),
	`{"kind":"rec","name":"n","raw":` + strings.Repeat("[", 250) + strings.Repeat("]", 250) + `}`,
	`{"kind":"rec","name":"n","raw":` + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + `}`,
}

func TestScanningDecodersMatchEncodingJSON(t *testing.T) {
	for _, c := range decodeCorpus {
		checkRec(t, []byte(c))
		checkValues(t, []byte(c))
	}
}

func FuzzDecodeRecord(f *testing.F) {
	for _, c := range decodeCorpus {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkRec(t, data)
	})
}

func FuzzDecodeValue(f *testing.F) {
	for _, c := range decodeCorpus {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkValues(t, data)
	})
}

func TestObjectDecoderAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector makes sync.Pool drop items")
	}
	data := []byte(`{"kind":"rec","name":"n","n":3,"b":true}`)
	var out struct {
		n int
		b bool
	}
	allocs := testing.AllocsPerRun(100, func() {
		d, err := NewObjectDecoder("Rec", data)
		if err != nil {
			t.Fatal(err)
		}
		d.Kind("kind", "rec")
		Required(d, "n", &out.n, Value[int])
		Required(d, "b", &out.b, Value[bool])
		d.SkipUnknown()
		if err := d.Finish(); err != nil {
			t.Fatal(err)
		}
	})
	if out.n != 3 || !out.b {
		t.Errorf("decoded %+v", out)
	}
	if allocs > 0 {
		t.Errorf("decoding a record of scalars allocates %v times, want 0 (pooled decoder)", allocs)
	}
}
