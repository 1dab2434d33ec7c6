package codec

import (
	"encoding/json"
	"sync"
)

// The scanner below walks JSON text in one pass without building anything, so that the
// decoders can find an object's members or an array's elements without going through
// encoding/json. It is deliberately strict: it accepts only text that encoding/json
// accepts (RFC 8259, any bytes of 0x80 and above in strings, as encoding/json does) and
// reports anything else, or anything unusual (nesting deeper than maxScanDepth), as
// "not scanned"; the callers then take the encoding/json path, which gives the errors
// (and the results) it always gave. FuzzDecodeObject pins that the two agree. Why
// runtime/tools has a scanner of its own: docs/decisions/0014-json-scanners.md, "Two JSON scanners and two
// string escapers".

// maxScanDepth bounds the scanner's recursion; deeper values go through encoding/json.
const maxScanDepth = 200

// member is one member of a scanned object: its name, unescaped, and its raw value.
type member struct {
	name  []byte
	raw   []byte
	taken bool
}

// isSpace reports whether c is JSON whitespace.
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r'
}

// skipSpace returns the index of the first byte at or after i that is not whitespace.
func skipSpace(data []byte, i int) int {
	for i < len(data) && isSpace(data[i]) {
		i++
	}
	return i
}

// scanString scans the string starting at data[i] == '"'. It returns the index after the
// closing quote, or -1 if the string is malformed, and whether the string is plain: no
// escape and no byte outside printable ASCII, so that its content is its value.
func scanString(data []byte, i int) (int, bool) {
	i++
	plain := true
	for i < len(data) {
		c := data[i]
		if plainByte[c] {
			i++
			continue
		}
		switch {
		case c == '"':
			return i + 1, plain
		case c == '\\':
			plain = false
			i++
			if i >= len(data) {
				return -1, false
			}
			switch data[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i++
			case 'u':
				if i+4 >= len(data) {
					return -1, false
				}
				for _, h := range data[i+1 : i+5] {
					if !isHex(h) {
						return -1, false
					}
				}
				i += 5
			default:
				return -1, false
			}
		case c < 0x20:
			return -1, false
		default:
			if c >= 0x80 {
				plain = false
			}
			i++
		}
	}
	return -1, false
}

// plainByte tells the bytes that stand for themselves in a plain string: printable ASCII
// but the quote and the backslash.
var plainByte = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// isHex reports whether c is a hexadecimal digit.
func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// isDigit reports whether c is a decimal digit.
func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// scanNumber scans the number starting at data[i]; it returns the index after it, or -1.
func scanNumber(data []byte, i int) int {
	if i < len(data) && data[i] == '-' {
		i++
	}
	switch {
	case i >= len(data):
		return -1
	case data[i] == '0':
		i++
	case '1' <= data[i] && data[i] <= '9':
		for i < len(data) && isDigit(data[i]) {
			i++
		}
	default:
		return -1
	}
	if i < len(data) && data[i] == '.' {
		i++
		if i >= len(data) || !isDigit(data[i]) {
			return -1
		}
		for i < len(data) && isDigit(data[i]) {
			i++
		}
	}
	if i < len(data) && (data[i] == 'e' || data[i] == 'E') {
		i++
		if i < len(data) && (data[i] == '+' || data[i] == '-') {
			i++
		}
		if i >= len(data) || !isDigit(data[i]) {
			return -1
		}
		for i < len(data) && isDigit(data[i]) {
			i++
		}
	}
	return i
}

// scanLiteral scans the literal lit at data[i]; it returns the index after it, or -1.
func scanLiteral(data []byte, i int, lit string) int {
	if len(data)-i < len(lit) || string(data[i:i+len(lit)]) != lit {
		return -1
	}
	return i + len(lit)
}

// scanValue scans the value starting at data[i] (no whitespace before it) and returns the
// index after it, or -1 if it is malformed or nested deeper than maxScanDepth.
func scanValue(data []byte, i, depth int) int {
	if i >= len(data) {
		return -1
	}
	switch c := data[i]; {
	case c == '"':
		end, _ := scanString(data, i)
		return end
	case c == '{':
		if depth >= maxScanDepth {
			return -1
		}
		i = skipSpace(data, i+1)
		if i < len(data) && data[i] == '}' {
			return i + 1
		}
		for {
			if i >= len(data) || data[i] != '"' {
				return -1
			}
			if i, _ = scanString(data, i); i < 0 {
				return -1
			}
			i = skipSpace(data, i)
			if i >= len(data) || data[i] != ':' {
				return -1
			}
			if i = scanValue(data, skipSpace(data, i+1), depth+1); i < 0 {
				return -1
			}
			i = skipSpace(data, i)
			if i >= len(data) {
				return -1
			}
			if data[i] == '}' {
				return i + 1
			}
			if data[i] != ',' {
				return -1
			}
			i = skipSpace(data, i+1)
		}
	case c == '[':
		if depth >= maxScanDepth {
			return -1
		}
		i = skipSpace(data, i+1)
		if i < len(data) && data[i] == ']' {
			return i + 1
		}
		for {
			if i = scanValue(data, i, depth+1); i < 0 {
				return -1
			}
			i = skipSpace(data, i)
			if i >= len(data) {
				return -1
			}
			if data[i] == ']' {
				return i + 1
			}
			if data[i] != ',' {
				return -1
			}
			i = skipSpace(data, i+1)
		}
	case c == '-' || isDigit(c):
		return scanNumber(data, i)
	case c == 't':
		return scanLiteral(data, i, "true")
	case c == 'f':
		return scanLiteral(data, i, "false")
	case c == 'n':
		return scanLiteral(data, i, "null")
	}
	return -1
}

// validValue reports whether data is exactly one JSON value, without whitespace around it.
func validValue(data []byte) bool {
	return scanValue(data, 0, 0) == len(data)
}

// scanObject appends the members of the JSON object data (whitespace around it allowed) to
// members, in order, duplicates included. It reports false if data is not a well-formed
// object the scanner takes; members is then unusable.
func scanObject(data []byte, members []member) ([]member, bool) {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return members, false
	}
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == '}' {
		return members, skipSpace(data, i+1) == len(data)
	}
	for {
		if i >= len(data) || data[i] != '"' {
			return members, false
		}
		start := i
		end, plain := scanString(data, i)
		if end < 0 {
			return members, false
		}
		name := data[start+1 : end-1]
		if !plain {
			var s string
			if json.Unmarshal(data[start:end], &s) != nil {
				return members, false
			}
			name = []byte(s)
		}
		i = skipSpace(data, end)
		if i >= len(data) || data[i] != ':' {
			return members, false
		}
		i = skipSpace(data, i+1)
		vend := scanValue(data, i, 1)
		if vend < 0 {
			return members, false
		}
		members = append(members, member{name: name, raw: data[i:vend]})
		i = skipSpace(data, vend)
		if i >= len(data) {
			return members, false
		}
		if data[i] == '}' {
			return members, skipSpace(data, i+1) == len(data)
		}
		if data[i] != ',' {
			return members, false
		}
		i = skipSpace(data, i+1)
	}
}

// scanArray appends the elements of the JSON array data (whitespace around it allowed) to
// elems. It reports false if data is not a well-formed array the scanner takes.
func scanArray(data []byte, elems [][]byte) ([][]byte, bool) {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '[' {
		return elems, false
	}
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == ']' {
		return elems, skipSpace(data, i+1) == len(data)
	}
	for {
		end := scanValue(data, i, 1)
		if end < 0 {
			return elems, false
		}
		elems = append(elems, data[i:end])
		i = skipSpace(data, end)
		if i >= len(data) {
			return elems, false
		}
		if data[i] == ']' {
			return elems, skipSpace(data, i+1) == len(data)
		}
		if data[i] != ',' {
			return elems, false
		}
		i = skipSpace(data, i+1)
	}
}

// decoderPool recycles ObjectDecoders and their member slices: Finish returns a decoder.
var decoderPool = sync.Pool{New: func() any { return &ObjectDecoder{members: make([]member, 0, 16)} }}

// release clears d (so that it keeps no reference to decoded data) and returns it to the
// pool.
func (d *ObjectDecoder) release() {
	clear(d.members)
	d.members = d.members[:0]
	d.typ, d.err = "", nil
	decoderPool.Put(d)
}
