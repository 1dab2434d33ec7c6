package codec

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
)

// encodeOne runs write on a fresh Encoder and returns what Finish returns.
func encodeOne(write func(*Encoder)) ([]byte, error) {
	e := NewEncoder()
	write(e)
	return e.Finish()
}

// sameAsJSON requires the encoder's output for v (written by write) to be what
// encoding/json.Marshal makes of v.
func sameAsJSON[T any](t *testing.T, v T, write func(*Encoder, T)) {
	t.Helper()
	want, wantErr := json.Marshal(v)
	got, err := encodeOne(func(e *Encoder) { write(e, v) })
	if (err != nil) != (wantErr != nil) {
		t.Fatalf("%#v: error %v, encoding/json's %v", v, err, wantErr)
	}
	if err == nil && string(got) != string(want) {
		t.Errorf("%#v: got %s, encoding/json writes %s", v, got, want)
	}
}

var testStrings = []string{
	"", "plain", `quote " backslash \ slash /`, "<script>&amp;</script>", "\b\f\n\r\t\x00\x01\x1f\x7f",
	"é ü 日本語 🙂", "\u2028 and \u2029", "bad \xff utf8 \xc3", "\xe2\x80", "trailing \xe2",
	strings.Repeat("lorem ipsum ", 20),
}

func TestStringMatchesEncodingJSON(t *testing.T) {
	for _, s := range testStrings {
		sameAsJSON(t, s, (*Encoder).String)
	}
}

func FuzzString(f *testing.F) {
	for _, s := range testStrings {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) { sameAsJSON(t, s, (*Encoder).String) })
}

func TestFloatMatchesEncodingJSON(t *testing.T) {
	for _, f := range []float64{0, math.Copysign(0, -1), 1, -1.5, 1e-6, 1e-7, 123456789, 1e20, 1e21, 1.5e300, 5e-324, -2.5e-9, 0.1, math.MaxFloat64} {
		sameAsJSON(t, f, (*Encoder).Float)
	}
}

func TestFloatRejectsNaNAndInfinity(t *testing.T) {
	for _, f := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		_, err := encodeOne(func(e *Encoder) {
			e.BeginObject()
			e.Key("n")
			e.Float(f)
			e.EndObject()
		})
		var uv *json.UnsupportedValueError
		if !errors.As(err, &uv) || !strings.Contains(err.Error(), `field "n"`) {
			t.Errorf("%v: error %v, want a json.UnsupportedValueError naming field n", f, err)
		}
	}
}

func TestRawMatchesEncodingJSON(t *testing.T) {
	for _, raw := range []json.RawMessage{
		nil, json.RawMessage(`{"a":1}`), json.RawMessage(" { \"a\" : [1, 2] }\n"), json.RawMessage(`"<&>"`),
		json.RawMessage(`"` + "\u2028" + `"`), json.RawMessage(`"a b"`), json.RawMessage(`null`),
		json.RawMessage(``), json.RawMessage(`{`), json.RawMessage(`1 2`),
	} {
		sameAsJSON(t, raw, (*Encoder).Raw)
	}
}

func TestObjectsListsAndMaps(t *testing.T) {
	got, err := encodeOne(func(e *Encoder) {
		e.BeginObject()
		e.Key("l")
		EncodeList(e, []int{1, 2, 3}, (*Encoder).Int)
		e.Key("empty")
		EncodeList(e, NonNilList[string](nil), (*Encoder).String)
		e.Key("nil")
		EncodeList[string](e, nil, (*Encoder).String)
		e.Key("m")
		EncodeMap(e, map[string]bool{"b": true, "a": false, "<": true}, (*Encoder).Bool)
		e.Key("nested")
		EncodeList(e, [][]int64{{1}, nil, {}}, func(e *Encoder, s []int64) { EncodeList(e, s, (*Encoder).Int64) })
		e.Key("emptymap")
		EncodeMap(e, NonNilMap[int](nil), (*Encoder).Int)
		e.Key("v")
		e.Value(struct{ A string }{"x"})
		e.EndObject()
	})
	if err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal(map[string]any{
		"l": []int{1, 2, 3}, "empty": []string{}, "nil": []string(nil),
		"m": map[string]bool{"b": true, "a": false, "<": true}, "nested": [][]int64{{1}, nil, {}},
		"emptymap": map[string]int{}, "v": struct{ A string }{"x"},
	})
	var a, b any
	if err := json.Unmarshal(got, &a); err != nil {
		t.Fatalf("%s: %v", got, err)
	}
	_ = json.Unmarshal(want, &b)
	if ga, gb := mustJSON(a), mustJSON(b); ga != gb {
		t.Errorf("got %s, want %s", got, want)
	}
	if !strings.Contains(string(got), `"m":{"\u003c":true,"a":false,"b":true}`) {
		t.Errorf("map keys not sorted and escaped as encoding/json does: %s", got)
	}
}

func mustJSON(v any) string {
	data, _ := json.Marshal(v)
	return string(data)
}

type point struct{ X, Y int }

func (p point) encodeJSON(e *Encoder) {
	e.BeginObject()
	e.Key("x").Int(p.X)
	e.Key("y").Int(p.Y)
	e.EndObject()
}

func TestMarshalAndEncodePtr(t *testing.T) {
	got, err := Marshal(point{1, 2}, point.encodeJSON)
	if err != nil || string(got) != `{"x":1,"y":2}` {
		t.Errorf("Marshal: %s %v", got, err)
	}
	got, err = encodeOne(func(e *Encoder) {
		EncodeList(e, []*point{{3, 4}, nil}, func(e *Encoder, p *point) { EncodePtr(e, p, point.encodeJSON) })
	})
	if err != nil || string(got) != `[{"x":3,"y":4},null]` {
		t.Errorf("EncodePtr: %s %v", got, err)
	}
}

func TestFinishCopiesAndFirstErrorWins(t *testing.T) {
	a, _ := encodeOne(func(e *Encoder) { e.String("first") })
	b, _ := encodeOne(func(e *Encoder) { e.String("second") })
	if string(a) != `"first"` || string(b) != `"second"` {
		t.Errorf("pooled buffers shared: %s %s", a, b)
	}
	_, err := encodeOne(func(e *Encoder) {
		e.BeginObject()
		e.Key("x")
		e.Raw(json.RawMessage(`{`))
		e.Key("y")
		e.Float(math.NaN())
		e.EndObject()
	})
	if err == nil || !strings.Contains(err.Error(), `field "x"`) {
		t.Errorf("error %v, want the first one (field x)", err)
	}
	out, err := NewEncoder().AppendTo([]byte("prefix"))
	if err != nil || string(out) != "prefix" {
		t.Errorf("AppendTo of an empty encoder: %q %v", out, err)
	}
}

func TestEncodeAllocatesOnce(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector makes sync.Pool drop encoders at random")
	}
	long := strings.Repeat("lorem ipsum ", 20)
	allocs := testing.AllocsPerRun(100, func() {
		e := NewEncoder()
		e.BeginObject()
		e.Key("text")
		e.String(long)
		e.Key("n")
		e.Int(42)
		e.Key("m")
		EncodeMap(e, map[string]int{"a": 1}, (*Encoder).Int)
		e.EndObject()
		if _, err := e.Finish(); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 1 {
		t.Errorf("%v allocations per encoding, want 1 (the copy Finish returns)", allocs)
	}
}
