package differential

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// StdinShape is what the byte-level comparison reads of a hook's raw stdin, beyond its
// parsed fields (which the field comparison checks): the order of each object's keys,
// how each character that JSON may write either way is written, whether the value is
// compact, and what follows it.
type StdinShape struct {
	// Keys holds, per object path ("" for the top, "tool_input", "a.b[]" for the objects
	// of an array), the keys of the first object at that path, in the order written.
	Keys map[string][]string
	// Forms holds, per character written escaped somewhere or worth checking raw (<, >,
	// &, /, DEL and every non-ASCII character), how the stdin writes it: "raw", the
	// escape as written (`\u0026`, `\/`, `\n`), or "mixed" when both appear.
	Forms map[rune]string
	// Compact is false when whitespace separates the value's tokens.
	Compact bool
	// Tail is what follows the JSON value (a trailing newline, say).
	Tail string
}

// ReadStdinShape scans raw, one JSON value and what follows it. ok is false when raw
// does not start with a JSON object (the byte-level comparison then does not apply).
func ReadStdinShape(raw string) (s StdinShape, ok bool) {
	s = StdinShape{Keys: map[string][]string{}, Forms: map[rune]string{}, Compact: true}
	p := &shapeScanner{src: raw, shape: &s}
	p.space()
	if p.i >= len(p.src) || p.src[p.i] != '{' {
		return s, false
	}
	if !p.value("") {
		return s, false
	}
	s.Tail = p.src[p.i:]
	return s, true
}

// shapeScanner is a recursive-descent reader of one JSON value that records its shape.
type shapeScanner struct {
	src   string
	i     int
	shape *StdinShape
}

// space skips white space; white space between tokens (not before the value) makes the
// value not compact.
func (p *shapeScanner) space() {
	start := p.i
	for p.i < len(p.src) && strings.IndexByte(" \t\r\n", p.src[p.i]) >= 0 {
		p.i++
	}
	if p.i > start && start > 0 && p.i < len(p.src) {
		p.shape.Compact = false
	}
}

func (p *shapeScanner) value(path string) bool {
	if p.i >= len(p.src) {
		return false
	}
	switch c := p.src[p.i]; {
	case c == '{':
		p.i++
		var keys []string
		p.space()
		if p.i < len(p.src) && p.src[p.i] == '}' {
			p.i++
			p.record(path, keys)
			return true
		}
		for {
			p.space()
			k, ok := p.str()
			if !ok {
				return false
			}
			keys = append(keys, k)
			p.space()
			if p.i >= len(p.src) || p.src[p.i] != ':' {
				return false
			}
			p.i++
			p.space()
			if !p.value(join(path, k)) {
				return false
			}
			p.space()
			if p.i >= len(p.src) {
				return false
			}
			if p.src[p.i] == '}' {
				p.i++
				p.record(path, keys)
				return true
			}
			if p.src[p.i] != ',' {
				return false
			}
			p.i++
		}
	case c == '[':
		p.i++
		p.space()
		if p.i < len(p.src) && p.src[p.i] == ']' {
			p.i++
			return true
		}
		for {
			p.space()
			if !p.value(path + "[]") {
				return false
			}
			p.space()
			if p.i >= len(p.src) {
				return false
			}
			if p.src[p.i] == ']' {
				p.i++
				return true
			}
			if p.src[p.i] != ',' {
				return false
			}
			p.i++
		}
	case c == '"':
		_, ok := p.str()
		return ok
	default:
		start := p.i
		for p.i < len(p.src) && strings.IndexByte(",}] \t\r\n", p.src[p.i]) < 0 {
			p.i++
		}
		return json.Valid([]byte(p.src[start:p.i]))
	}
}

// record keeps the keys of the first object at path.
func (p *shapeScanner) record(path string, keys []string) {
	if _, seen := p.shape.Keys[path]; !seen {
		p.shape.Keys[path] = keys
	}
}

// str reads a string token, recording how its characters are written, and returns its
// value.
func (p *shapeScanner) str() (string, bool) {
	if p.i >= len(p.src) || p.src[p.i] != '"' {
		return "", false
	}
	start := p.i
	p.i++
	for p.i < len(p.src) {
		c := p.src[p.i]
		switch {
		case c == '"':
			p.i++
			var v string
			if json.Unmarshal([]byte(p.src[start:p.i]), &v) != nil {
				return "", false
			}
			return v, true
		case c == '\\':
			if p.i+1 >= len(p.src) {
				return "", false
			}
			if e := p.src[p.i+1]; e != 'u' {
				r, ok := shortEscapes[e]
				if !ok {
					return "", false
				}
				p.form(r, p.src[p.i:p.i+2])
				p.i += 2
				continue
			}
			if p.i+6 > len(p.src) {
				return "", false
			}
			n, err := strconv.ParseUint(p.src[p.i+2:p.i+6], 16, 16)
			if err != nil {
				return "", false
			}
			p.form(rune(n), p.src[p.i:p.i+6])
			p.i += 6
		case c < utf8.RuneSelf:
			if strings.IndexByte("<>&/\x7f", c) >= 0 {
				p.form(rune(c), "raw")
			}
			p.i++
		default:
			r, size := utf8.DecodeRuneInString(p.src[p.i:])
			p.form(r, "raw")
			p.i += size
		}
	}
	return "", false
}

// shortEscapes are JSON's two-character escapes and the characters they stand for.
var shortEscapes = map[byte]rune{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

// form records that r is written as f.
func (p *shapeScanner) form(r rune, f string) {
	if old, ok := p.shape.Forms[r]; ok && old != f {
		f = "mixed"
	}
	p.shape.Forms[r] = f
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// bytesDiffs compares the byte-level shape of two runs' stdin: the order of the keys
// both sides write (a key one side lacks is a field difference, not an order one), the
// form of each character both sides write, compactness and what follows the value. Each
// result is an aspect (bytes.order, bytes.escaping, bytes.spacing, bytes.newline) and
// its detail.
func bytesDiffs(name string, engine, dsh HookRun) [][2]string {
	a, oka := ReadStdinShape(engine.Raw)
	b, okb := ReadStdinShape(dsh.Raw)
	if !oka || !okb {
		return nil
	}
	var out [][2]string
	paths := make([]string, 0, len(a.Keys))
	for p := range a.Keys {
		if _, ok := b.Keys[p]; ok {
			paths = append(paths, p)
		}
	}
	slices.Sort(paths)
	for _, p := range paths {
		ka, kb := common(a.Keys[p], b.Keys[p]), common(b.Keys[p], a.Keys[p])
		if !slices.Equal(ka, kb) {
			at := "the top"
			if p != "" {
				at = p
			}
			out = append(out, [2]string{"bytes.order", fmt.Sprintf("%s: keys at %s: engine %s, dsh %s", name, at, strings.Join(ka, ","), strings.Join(kb, ","))})
			break
		}
	}
	chars := make([]rune, 0, len(a.Forms))
	for r := range a.Forms {
		if _, ok := b.Forms[r]; ok {
			chars = append(chars, r)
		}
	}
	slices.Sort(chars)
	var forms []string
	for _, r := range chars {
		if fa, fb := a.Forms[r], b.Forms[r]; fa != fb {
			forms = append(forms, fmt.Sprintf("%q: engine %s, dsh %s", r, fa, fb))
		}
	}
	if len(forms) > 0 {
		out = append(out, [2]string{"bytes.escaping", name + ": " + strings.Join(forms, "; ")})
	}
	if a.Compact != b.Compact {
		out = append(out, [2]string{"bytes.spacing", fmt.Sprintf("%s: compact under the engine %v, under dsh %v", name, a.Compact, b.Compact)})
	}
	if a.Tail != b.Tail {
		out = append(out, [2]string{"bytes.newline", fmt.Sprintf("%s: after the value the engine writes %q, dsh %q", name, a.Tail, b.Tail)})
	}
	return out
}

// common is the keys of x that y has too, in x's order.
func common(x, y []string) []string {
	var out []string
	for _, k := range x {
		if slices.Contains(y, k) {
			out = append(out, k)
		}
	}
	return out
}
