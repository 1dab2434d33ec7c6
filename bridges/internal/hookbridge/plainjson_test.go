package hookbridge

import (
	"encoding/json"
	"testing"
)

// TestPlainStrings: strings come out as JSON.stringify writes them (no HTML escapes, no
// \/ or \u0041, U+2028 and invalid UTF-8 as characters), controls escaped by name or as
// \u00xx, and everything else byte for byte.
func TestPlainStrings(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"command":"touch m1 \u0026\u0026 echo \u003cout\u003e"}`, `{"command":"touch m1 && echo <out>"}`},
		{`{"a":"\/x\u0041","b":"\u2028\u2029"}`, "{\"a\":\"/xA\",\"b\":\"\u2028\u2029\"}"},
		{`{"c":"q\"\\\b\f\n\r\t\u0001\u001f"}`, `{"c":"q\"\\\b\f\n\r\t\u0001\u001f"}`},
		{`{"k\u003c":[1.50, "x", {"n":null}]}`, `{"k<":[1.50, "x", {"n":null}]}`},
		{`{"plain":"no escapes <>&"}`, `{"plain":"no escapes <>&"}`},
		{"{\"bad\":\"\xff\"}", "{\"bad\":\"\uFFFD\"}"},
		{`{"e":"\ufffd"}`, "{\"e\":\"\uFFFD\"}"},
	} {
		got := string(PlainStrings([]byte(c.in)))
		if got != c.want {
			t.Errorf("PlainStrings(%s) = %s, want %s", c.in, got, c.want)
		}
		var a, b any
		if json.Unmarshal([]byte(c.in), &a) == nil && (json.Unmarshal([]byte(got), &b) != nil || !jsonEqual(a, b)) {
			t.Errorf("PlainStrings(%s) changed the value: %s", c.in, got)
		}
	}
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}
