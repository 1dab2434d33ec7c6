package tools

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// refLossless is the reference for validLossless: encoding/json's syntax check (which
// also caps nesting at 10000), valid UTF-8, and every number finite as a float64 and not
// a negative zero.
func refLossless(doc []byte) bool {
	if !json.Valid(doc) || !utf8.Valid(doc) {
		return false
	}
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return false
	}
	var ok func(any) bool
	ok = func(v any) bool {
		switch v := v.(type) {
		case json.Number:
			f, err := strconv.ParseFloat(string(v), 64)
			return err == nil && !math.IsInf(f, 0) && !(f == 0 && math.Signbit(f)) && !(f == 0 && strings.HasPrefix(string(v), "-"))
		case []any:
			for _, e := range v {
				if !ok(e) {
					return false
				}
			}
		case map[string]any:
			for _, e := range v {
				if !ok(e) {
					return false
				}
			}
		}
		return true
	}
	return ok(v)
}

// The one-pass lossless scanner agrees with encoding/json plus the lossless rules on the
// edge cases of the grammar: literals cut short, nesting at and past the limit, escapes,
// control characters and invalid UTF-8 in strings, and number forms.
func TestScannerAgreesWithEncodingJSON(t *testing.T) {
	deep := func(open, close string, n int) string {
		return strings.Repeat(open, n) + "1" + strings.Repeat(close, n)
	}
	docs := []string{
		"true", "false", "null", "tru", "fals", "nul", "t", "[true]", "[tru]", "truex", "[nul]", "[tru", "[1,nul", "{\"a\":fals}",
		deep("[", "]", maxDepth), deep("[", "]", maxDepth+1),
		deep(`{"a":`, "}", maxDepth), deep(`{"a":`, "}", maxDepth+1),
		// Closing a container gives its depth back: many siblings nest no deeper.
		"[" + strings.Repeat("{},", maxDepth) + "1]", "[" + strings.Repeat("[],", maxDepth) + "1]",
		"[" + strings.Repeat(`{"a":1},`, maxDepth) + "1]", "[" + strings.Repeat("[1],", maxDepth) + "1]",
		`"a"`, `""`, `"\u00e9"`, `"\u00E9"`, `"\u09af"`, `"\uAF0F"`, `"\u00/0"`, `"\u00:0"`, `"\u00@0"`, `"\u00G0"`, "\"\\u00`0\"", `"\u00g0"`, `"\u00g9"`, `"\u00e"`, `"\u00"`, `"\"`, `"\x"`, `"\/\b\f\n\r\t\\\""`,
		"\"a\x01\"", "\"\x1f\"", "\"\xff\"", "\"é€😀\"", "\"\xe2\x82\"", `"abc`, `"\`, `"\u`,
		"0", "-0", "-0.0", "0.0", "1", "-1", "01", "-01", "1.", "1.5", ".5", "+1", "1e", "1e+", "1e-", "1e5",
		"1E-5", "1e+5", "1e999", "-1e999", "1e-400", "0x1", "-", "--1", "1.5e3", "9", "-9", "19.9e9",
		strings.Repeat("9", 300), strings.Repeat("9", 309), strings.Repeat("9", 310), "1" + strings.Repeat("0", 308),
		"{}", "{ }", `{"a":1}`, `{"a":1,}`, `{"a" 1}`, `{a:1}`, `{"a":1 "b":2}`, `{"a":}`, `{"a":1`, "{", `{"a"`, `{"a":1,"b":[]}`,
		"[]", "[ ]", "[1,2]", "[1,]", "[1 2]", "[", "[1", "[,1]", `[1,"x",{"y":[null]}]`,
		" 1 ", "1 2", "", "   ", "\t\n\r1\n", "[1] x", `{"a":1}}`,
	}
	for _, d := range docs {
		b := []byte(d)
		got, want := validLossless(b[:len(b):len(b)]), refLossless(b) // no spare capacity to read into
		if got != want {
			name := d
			if len(name) > 40 {
				name = name[:40] + "..."
			}
			t.Errorf("validLossless(%q) = %v, want %v", name, got, want)
		}
	}
}
