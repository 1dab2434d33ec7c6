package validutf8

import (
	"encoding/json"
	"reflect"
	"testing"
)

const invalid = "bad \xff"

type inner struct {
	Text string
	Raw  json.RawMessage
}

type record struct {
	Name   string
	Items  []inner
	Tags   map[string]*string
	hidden string
	inner
}

func TestFind(t *testing.T) {
	bad := invalid
	for _, tc := range []struct {
		name string
		v    any
		path string // "" when nothing is found
	}{
		{"valid", record{Name: "n\uFFFD", Items: []inner{{Text: "t"}}, hidden: invalid}, ""},
		{"field", record{Name: invalid}, "r.Name"},
		{"slice element", record{Items: []inner{{Text: "ok"}, {Text: invalid}}}, "r.Items[1].Text"},
		{"map value", record{Tags: map[string]*string{"k": &bad}}, "r.Tags[k]"},
		{"map key", map[string]int{invalid: 1}, "r (a map key)"},
		{"embedded", record{inner: inner{Text: invalid}}, "r.inner.Text"},
		{"interface", []any{1, &record{Name: invalid}}, "r[1].Name"},
		{"bytes are not text", inner{Raw: json.RawMessage(invalid)}, ""},
		{"nil pointer", (*record)(nil), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path, bad := Find(reflect.ValueOf(tc.v), "r")
			if bad != (tc.path != "") || path != tc.path {
				t.Errorf("Find = %q, %v; want %q", path, bad, tc.path)
			}
		})
	}
}

func TestEncoded(t *testing.T) {
	for _, tc := range []struct {
		name string
		v    any
		ok   bool
		path string
	}{
		{"valid", record{Name: "x"}, true, ""},
		{"replacement character", record{Name: "\uFFFD"}, true, ""},
		{"escape from raw JSON", inner{Text: "t", Raw: json.RawMessage(`"\ufffd"`)}, true, ""},
		{"replaced string", record{Name: invalid}, false, "v.Name"},
		{"invalid raw JSON", inner{Raw: json.RawMessage("\"" + invalid + "\"")}, false, "v (its JSON)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data, err := json.Marshal(tc.v)
			if err != nil {
				t.Fatal(err)
			}
			path, ok := Encoded(data, tc.v, "v")
			if ok != tc.ok || path != tc.path {
				t.Errorf("Encoded(%s) = %q, %v; want %q, %v", data, path, ok, tc.path, tc.ok)
			}
		})
	}
}

// TestFindAllocatesNothing: walking valid text without maps costs no allocation (the
// content blocks and messages a tool call checks have none).
func TestFindAllocatesNothing(t *testing.T) {
	v := reflect.ValueOf([]any{record{Name: "n", Items: []inner{{Text: "a"}, {Text: "b"}}}, &inner{Text: "c"}})
	if n := testing.AllocsPerRun(100, func() {
		if _, bad := Find(v, "r"); bad {
			t.Fatal("found invalid text")
		}
	}); n != 0 {
		t.Errorf("Find allocates %v times", n)
	}
}
