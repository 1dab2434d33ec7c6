package hookbridge

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// PlainStrings returns data, one valid JSON value, with every string written as the
// engines write a hook's stdin (JavaScript's JSON.stringify in Claude Code and Gemini
// CLI, serde_json in Codex, all measured): only the quote, the backslash and the control
// characters U+0000 to U+001F are escaped (\b, \f, \n, \r and \t by name, the others as
// \u00xx), and every other character is itself. encoding/json, which the generated
// encoders follow, also escapes <, > and & (for HTML), U+2028 and U+2029; a model's raw
// arguments may use any escape (\/, \u0041). Numbers, key order and white space are
// kept. data comes back as it is when no string in it needs rewriting.
func PlainStrings(data []byte) []byte {
	if bytes.IndexByte(data, '\\') < 0 && utf8.Valid(data) {
		return data
	}
	out := make([]byte, 0, len(data))
	for i := 0; i < len(data); {
		if data[i] != '"' {
			out = append(out, data[i])
			i++
			continue
		}
		end, escaped := stringEnd(data, i)
		if !escaped && utf8.Valid(data[i:end]) {
			out = append(out, data[i:end]...)
		} else {
			var s string
			if json.Unmarshal(data[i:end], &s) != nil {
				// Not a string token after all (data was not valid JSON): keep the rest.
				return append(out, data[i:]...)
			}
			out = appendPlainString(out, s)
		}
		i = end
	}
	return out
}

// stringEnd returns the index just past the string token starting at data[start] (a
// quote), and whether it holds an escape.
func stringEnd(data []byte, start int) (end int, escaped bool) {
	for i := start + 1; i < len(data); i++ {
		switch data[i] {
		case '\\':
			escaped = true
			i++
		case '"':
			return i + 1, escaped
		}
	}
	return len(data), escaped
}

const hexDigits = "0123456789abcdef"

// appendPlainString appends s as a JSON string escaped as JSON.stringify escapes it (the
// third escaper of docs/decisions/0014-json-scanners.md).
func appendPlainString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '"', '\\':
			dst = append(dst, '\\', c)
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
			if c < 0x20 {
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			} else {
				dst = append(dst, c)
			}
		}
	}
	return append(dst, '"')
}
