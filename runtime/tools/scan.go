package tools

import (
	"strconv"
	"unicode/utf8"
)

// maxDepth is the deepest nesting of arrays and objects accepted, as in encoding/json.
const maxDepth = 10000

// jsonScanner validates lossless JSON in one pass (docs/design/SEMANTICS.md#0-shared-vocabulary): RFC 8259 syntax,
// valid UTF-8 in strings, and numbers that are finite as a float64 and not -0. Why it is
// not codec/scan.go: docs/decisions/0014-json-scanners.md, "Two JSON scanners and three string escapers".
type jsonScanner struct {
	data  []byte
	i     int
	depth int
}

// validLossless reports whether data is exactly one lossless JSON value, with optional
// surrounding white space.
func validLossless(data []byte) bool {
	s := jsonScanner{data: data}
	s.space()
	if !s.value() {
		return false
	}
	s.space()
	return s.i == len(s.data)
}

func (s *jsonScanner) space() {
	for s.i < len(s.data) {
		switch s.data[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

func (s *jsonScanner) value() bool {
	if s.i >= len(s.data) {
		return false
	}
	switch c := s.data[s.i]; {
	case c == '{':
		return s.object()
	case c == '[':
		return s.array()
	case c == '"':
		return s.string()
	case c == 't':
		return s.literal("true")
	case c == 'f':
		return s.literal("false")
	case c == 'n':
		return s.literal("null")
	case c == '-' || (c >= '0' && c <= '9'):
		return s.number()
	}
	return false
}

func (s *jsonScanner) literal(lit string) bool {
	if len(s.data)-s.i < len(lit) || string(s.data[s.i:s.i+len(lit)]) != lit {
		return false
	}
	s.i += len(lit)
	return true
}

func (s *jsonScanner) object() bool {
	if s.depth++; s.depth > maxDepth {
		return false
	}
	s.i++ // {
	s.space()
	if s.i < len(s.data) && s.data[s.i] == '}' {
		s.i++
		s.depth--
		return true
	}
	for {
		s.space()
		if s.i >= len(s.data) || s.data[s.i] != '"' || !s.string() {
			return false
		}
		s.space()
		if s.i >= len(s.data) || s.data[s.i] != ':' {
			return false
		}
		s.i++
		s.space()
		if !s.value() {
			return false
		}
		s.space()
		if s.i >= len(s.data) {
			return false
		}
		switch s.data[s.i] {
		case ',':
			s.i++
		case '}':
			s.i++
			s.depth--
			return true
		default:
			return false
		}
	}
}

func (s *jsonScanner) array() bool {
	if s.depth++; s.depth > maxDepth {
		return false
	}
	s.i++ // [
	s.space()
	if s.i < len(s.data) && s.data[s.i] == ']' {
		s.i++
		s.depth--
		return true
	}
	for {
		s.space()
		if !s.value() {
			return false
		}
		s.space()
		if s.i >= len(s.data) {
			return false
		}
		switch s.data[s.i] {
		case ',':
			s.i++
		case ']':
			s.i++
			s.depth--
			return true
		default:
			return false
		}
	}
}

func (s *jsonScanner) string() bool {
	s.i++ // "
	for s.i < len(s.data) {
		c := s.data[s.i]
		switch {
		case c == '"':
			s.i++
			return true
		case c < 0x20:
			return false
		case c == '\\':
			if s.i+1 >= len(s.data) {
				return false
			}
			switch s.data[s.i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				s.i += 2
			case 'u':
				if len(s.data)-s.i < 6 {
					return false
				}
				for _, h := range s.data[s.i+2 : s.i+6] {
					if !isHex(h) {
						return false
					}
				}
				s.i += 6
			default:
				return false
			}
		case c < utf8.RuneSelf:
			s.i++
		default:
			r, size := utf8.DecodeRune(s.data[s.i:])
			if r == utf8.RuneError && size == 1 {
				return false
			}
			s.i += size
		}
	}
	return false
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

// number scans a number and checks that it is finite and not -0.
func (s *jsonScanner) number() bool {
	start := s.i
	neg := s.data[s.i] == '-'
	if neg {
		s.i++
	}
	switch {
	case s.i < len(s.data) && s.data[s.i] == '0':
		s.i++
	case s.i < len(s.data) && s.data[s.i] >= '1' && s.data[s.i] <= '9':
		s.digits()
	default:
		return false
	}
	exp := false
	if s.i < len(s.data) && s.data[s.i] == '.' {
		s.i++
		if !s.digits() {
			return false
		}
	}
	if s.i < len(s.data) && (s.data[s.i] == 'e' || s.data[s.i] == 'E') {
		exp = true
		s.i++
		if s.i < len(s.data) && (s.data[s.i] == '+' || s.data[s.i] == '-') {
			s.i++
		}
		if !s.digits() {
			return false
		}
	}
	if neg || exp || s.i-start > 300 {
		f, err := strconv.ParseFloat(string(s.data[start:s.i]), 64)
		if err != nil || (f == 0 && neg) {
			return false
		}
	}
	return true
}

// digits scans one or more digits.
func (s *jsonScanner) digits() bool {
	start := s.i
	for s.i < len(s.data) && s.data[s.i] >= '0' && s.data[s.i] <= '9' {
		s.i++
	}
	return s.i > start
}
