package session

import (
	"bytes"
	"encoding/json"
	"time"

	"github.com/dshkit/dsh/generated/dsh"
)

// parseEnvelope decodes a line in the exact layout a Log writes (Event.appendJSON):
//
//	{"type":"<ascii>","seq":<n>,"time":"<RFC 3339>","data":{...}[,"sourceEventSeqs":[...]]}
//
// without going through encoding/json, checking what UnmarshalJSON checks (and that the
// whole line is valid JSON). ok is false when the line has another layout (other field
// order, whitespace, escapes in the type or time, unknown fields, ...): the caller then
// decodes it with UnmarshalJSON, which accepts any valid envelope. A line in the Log's
// layout that is not a valid envelope also gives ok false, so that UnmarshalJSON reports
// why.
func parseEnvelope(line []byte) (ev Event, ok bool) {
	p := line
	if !bytes.HasPrefix(p, []byte(`{"type":"`)) {
		return Event{}, false
	}
	p = p[len(`{"type":"`):]
	end := bytes.IndexByte(p, '"')
	if end <= 0 {
		return Event{}, false
	}
	for _, c := range p[:end] {
		if c < 0x20 || c >= 0x7f || c == '\\' {
			return Event{}, false
		}
	}
	typ := internType(p[:end])
	p = p[end+1:]
	if !bytes.HasPrefix(p, []byte(`,"seq":`)) {
		return Event{}, false
	}
	p = p[len(`,"seq":`):]
	seq, n := parseUint(p)
	if n == 0 {
		return Event{}, false
	}
	p = p[n:]
	if !bytes.HasPrefix(p, []byte(`,"time":"`)) {
		return Event{}, false
	}
	p = p[len(`,"time":"`):]
	end = bytes.IndexByte(p, '"')
	if end < 0 || bytes.IndexByte(p[:end], '\\') >= 0 {
		return Event{}, false
	}
	t, err := time.Parse(time.RFC3339Nano, string(p[:end]))
	if err != nil {
		return Event{}, false
	}
	p = p[end+1:]
	if !bytes.HasPrefix(p, []byte(`,"data":{`)) {
		return Event{}, false
	}
	p = p[len(`,"data":`):]
	n = skipValue(p)
	if n <= 0 {
		return Event{}, false
	}
	data := p[:n:n]
	p = p[n:]
	var srcs []int64
	if bytes.HasPrefix(p, []byte(`,"sourceEventSeqs":[`)) {
		p = p[len(`,"sourceEventSeqs":[`):]
		for {
			s, n := parseUint(p)
			if n == 0 || s >= seq {
				return Event{}, false
			}
			srcs = append(srcs, s)
			p = p[n:]
			if len(p) > 0 && p[0] == ',' {
				p = p[1:]
				continue
			}
			if len(p) == 0 || p[0] != ']' {
				return Event{}, false
			}
			p = p[1:]
			break
		}
	}
	if len(p) != 1 || p[0] != '}' {
		return Event{}, false
	}
	return Event{Type: typ, Seq: seq, Time: t.UTC(), Data: json.RawMessage(data), SourceEventSeqs: srcs}, true
}

// parseUint parses a JSON non-negative integer without sign, exponent or fraction at the
// start of p, and returns it with the number of bytes it takes; n is 0 when p does not
// start with one, or it overflows int64.
func parseUint(p []byte) (v int64, n int) {
	for n < len(p) && p[n] >= '0' && p[n] <= '9' {
		if n == 18 {
			return 0, 0 // keep clear of overflow; such seqs are not written
		}
		v = v*10 + int64(p[n]-'0')
		n++
	}
	if n == 0 || (n > 1 && p[0] == '0') {
		return 0, 0
	}
	if n < len(p) && (p[n] == '.' || p[n] == 'e' || p[n] == 'E') {
		return 0, 0
	}
	return v, n
}

// knownTypes maps each event type of the spec to itself.
var knownTypes = func() map[string]string {
	m := make(map[string]string, len(dsh.SessionEventTypes))
	for _, t := range dsh.SessionEventTypes {
		m[t] = t
	}
	return m
}()

// internType returns the event type b names as a shared string: the known types
// without allocating.
func internType(b []byte) string {
	if t, ok := knownTypes[string(b)]; ok {
		return t
	}
	return string(b)
}

// maxDepth is how deeply skipValue lets values nest (encoding/json's limit too).
const maxDepth = 10000

// skipValue returns the length of the JSON value at the start of p, or -1 when p does not
// start with a valid one. It validates as encoding/json does (strings may hold any byte
// but control characters; escapes must be valid), without allocating.
func skipValue(p []byte) int { return skipNested(p, 0) }

// skipNested is skipValue for a value nested depth levels deep.
func skipNested(p []byte, depth int) int {
	if depth > maxDepth {
		return -1
	}
	i := skipSpace(p, 0)
	if i >= len(p) {
		return -1
	}
	switch c := p[i]; {
	case c == '{':
		i = skipSpace(p, i+1)
		if i < len(p) && p[i] == '}' {
			return i + 1
		}
		for {
			if i >= len(p) || p[i] != '"' {
				return -1
			}
			n := skipString(p[i:])
			if n < 0 {
				return -1
			}
			i = skipSpace(p, i+n)
			if i >= len(p) || p[i] != ':' {
				return -1
			}
			i++
			n = skipNested(p[i:], depth+1)
			if n < 0 {
				return -1
			}
			i = skipSpace(p, i+n)
			if i >= len(p) {
				return -1
			}
			if p[i] == '}' {
				return i + 1
			}
			if p[i] != ',' {
				return -1
			}
			i = skipSpace(p, i+1)
		}
	case c == '[':
		i = skipSpace(p, i+1)
		if i < len(p) && p[i] == ']' {
			return i + 1
		}
		for {
			n := skipNested(p[i:], depth+1)
			if n < 0 {
				return -1
			}
			i = skipSpace(p, i+n)
			if i >= len(p) {
				return -1
			}
			if p[i] == ']' {
				return i + 1
			}
			if p[i] != ',' {
				return -1
			}
			i++
		}
	case c == '"':
		n := skipString(p[i:])
		if n < 0 {
			return -1
		}
		return i + n
	case c == 't':
		return literal(p, i, "true")
	case c == 'f':
		return literal(p, i, "false")
	case c == 'n':
		return literal(p, i, "null")
	case c == '-' || (c >= '0' && c <= '9'):
		return skipNumber(p, i)
	}
	return -1
}

// skipSpace returns the index of the first byte at or after i that is not JSON
// whitespace.
func skipSpace(p []byte, i int) int {
	for i < len(p) && (p[i] == ' ' || p[i] == '\t' || p[i] == '\n' || p[i] == '\r') {
		i++
	}
	return i
}

// literal returns the end of lit at p[i:], or -1.
func literal(p []byte, i int, lit string) int {
	if len(p)-i < len(lit) || string(p[i:i+len(lit)]) != lit {
		return -1
	}
	return i + len(lit)
}

// skipString returns the length of the JSON string p starts with (quotes included), or
// -1.
func skipString(p []byte) int {
	for i := 1; i < len(p); i++ {
		switch c := p[i]; {
		case c == '"':
			return i + 1
		case c < 0x20:
			return -1
		case c == '\\':
			i++
			if i >= len(p) {
				return -1
			}
			switch p[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if i+4 >= len(p) {
					return -1
				}
				for _, h := range p[i+1 : i+5] {
					if !(h >= '0' && h <= '9' || h >= 'a' && h <= 'f' || h >= 'A' && h <= 'F') {
						return -1
					}
				}
				i += 4
			default:
				return -1
			}
		}
	}
	return -1
}

// skipNumber returns the end of the JSON number at p[i:], or -1.
func skipNumber(p []byte, i int) int {
	if p[i] == '-' {
		i++
	}
	switch {
	case i < len(p) && p[i] == '0':
		i++
	case i < len(p) && p[i] >= '1' && p[i] <= '9':
		for i < len(p) && p[i] >= '0' && p[i] <= '9' {
			i++
		}
	default:
		return -1
	}
	if i < len(p) && p[i] == '.' {
		i++
		start := i
		for i < len(p) && p[i] >= '0' && p[i] <= '9' {
			i++
		}
		if i == start {
			return -1
		}
	}
	if i < len(p) && (p[i] == 'e' || p[i] == 'E') {
		i++
		if i < len(p) && (p[i] == '+' || p[i] == '-') {
			i++
		}
		start := i
		for i < len(p) && p[i] >= '0' && p[i] <= '9' {
			i++
		}
		if i == start {
			return -1
		}
	}
	return i
}
