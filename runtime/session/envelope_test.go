package session

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/google/go-cmp/cmp"
)

// The fast path decodes exactly what UnmarshalJSON decodes, or declines.
func TestParseEnvelopeAgreesWithUnmarshal(t *testing.T) {
	lines := []string{
		`{"type":"turn/start","seq":0,"time":"2026-05-01T10:00:00.000000001Z","data":{"turn":1}}`,
		`{"type":"tool/result","seq":9,"time":"2026-05-01T10:00:00Z","data":{"a":[1,2.5e3,-0,"x\u00e9\n"],"b":{"c":null,"d":true,"e":false}},"sourceEventSeqs":[8,3]}`,
		`{"type":"future/type","seq":12,"time":"2026-05-01T10:00:00+02:00","data":{}}`,
		// Other layouts: the fast path declines, UnmarshalJSON decides.
		`{"seq":0,"type":"turn/start","time":"2026-05-01T10:00:00Z","data":{"turn":1}}`,
		`{"type":"turn/start", "seq":0,"time":"2026-05-01T10:00:00Z","data":{"turn":1}}`,
		`{"type":"turn/start","seq":0,"time":"2026-05-01T10:00:00Z","data":{"turn":1},"extra":1}`,
		`{"type":"turn/start","seq":0,"time":"2026-05-01T10:00:00Z","data":{"turn":1},"sourceEventSeqs":[]}`,
		`{"type":"t\u0075rn/start","seq":0,"time":"2026-05-01T10:00:00Z","data":{"turn":1}}`,
		// Invalid envelopes: both must reject.
		`{"type":"turn/start","seq":0,"time":"2026-05-01T10:00:00Z","data":{"turn":tru}}`,
		`{"type":"turn/start","seq":0,"time":"2026-05-01T10:00:00Z","data":{"turn":1}`,
		`{"type":"turn/start","seq":0,"time":"2026-05-01T10:00:00Z","data":{"turn":1}}}`,
		`{"type":"turn/start","seq":01,"time":"2026-05-01T10:00:00Z","data":{"turn":1}}`,
		`{"type":"turn/start","seq":1.5,"time":"2026-05-01T10:00:00Z","data":{"turn":1}}`,
		`{"type":"turn/start","seq":2,"time":"yesterday","data":{"turn":1}}`,
		`{"type":"turn/start","seq":2,"time":"2026-05-01T10:00:00Z","data":[1]}`,
		`{"type":"turn/start","seq":2,"time":"2026-05-01T10:00:00Z","data":{"x":"\q"}}`,
		`{"type":"turn/start","seq":2,"time":"2026-05-01T10:00:00Z","data":{"x":"` + "\x01" + `"}}`,
		`{"type":"tool/result","seq":2,"time":"2026-05-01T10:00:00Z","data":{},"sourceEventSeqs":[2]}`,
		`{"type":"","seq":2,"time":"2026-05-01T10:00:00Z","data":{}}`,
		`{"type":"turn/start","seq":2,"time":"2026-05-01T10:00:00Z","data":{"n":1e}}`,
		`{"type":"turn/start","seq":2,"time":"2026-05-01T10:00:00Z","data":{"n":` + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + `}}`,
	}
	for i, line := range lines {
		var want Event
		wantErr := want.UnmarshalJSON([]byte(line))
		got, ok := parseEnvelope([]byte(line))
		if ok {
			if wantErr != nil {
				t.Errorf("line %d: the fast path accepted what UnmarshalJSON rejects (%v): %s", i, wantErr, line)
				continue
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("line %d: fast path (-UnmarshalJSON +fast):\n%s", i, diff)
			}
		}
		if i < 3 && !ok {
			t.Errorf("line %d: the fast path declined a line in the Log's own layout: %s", i, line)
		}
		ev, err := decodeLine([]byte(line))
		if (err == nil) != (wantErr == nil) || (err == nil && !cmp.Equal(ev, want)) {
			t.Errorf("line %d: decodeLine = %+v, %v; want %+v, %v", i, ev, err, want, wantErr)
		}
	}
}

// Every line a Log writes takes the fast path.
func TestLogLinesTakeTheFastPath(t *testing.T) {
	mem := NewMemory()
	l := mustOpen(t, mem, WithClock(stepClock()))
	writeTurn(t, l, 1)
	mustAppend(t, l, dsh.UserMessageLogged{Message: msg("m", "héllo \"quoted\" \u2028 <tag>")}, WithSources(0, 1))
	l.Close()
	if len(mem.lines) < 3 {
		t.Fatalf("%d lines", len(mem.lines))
	}
	for i, line := range mem.lines {
		if _, ok := parseEnvelope(line[:len(line)-1]); !ok {
			t.Errorf("line %d declined: %s", i, line)
		}
	}
}

// skipValue agrees with json.Valid on whole inputs.
func TestSkipValueAgreesWithJSONValid(t *testing.T) {
	for _, s := range []string{
		`{}`, `[]`, `""`, `0`, `-0`, `-0.5e+10`, `1E5`, `true`, `false`, `null`, ` {"a" : [ 1 , 2 ] } `,
		`{"a":"\ud800"}`, `"\u12"`, `01`, `1.`, `.5`, `-`, `+1`, `{"a"}`, `{"a":}`, `{,}`, `[1,]`, `[,1]`,
		`{"a":1,}`, `nul`, `"abc`, "\"\t\"", `"\/"`, `{"a":1}{}`, `[[[]]]`, "\xff", `"` + "\xff" + `"`,
	} {
		checkSkipValue(t, []byte(s))
	}
}

func FuzzSkipValue(f *testing.F) {
	for _, s := range []string{`{"a":[1,2,{"b":null}],"c":"\u00e9"}`, `[1e-3,-0.0]`, `"x\\"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) { checkSkipValue(t, b) })
}

func checkSkipValue(t *testing.T, b []byte) {
	t.Helper()
	n := skipValue(b)
	got := n >= 0 && skipSpace(b, n) == len(b)
	if want := json.Valid(b); got != want {
		t.Errorf("skipValue(%q) = %d (valid %t), json.Valid = %t", b, n, got, want)
	}
}

// A log longer than what it keeps in memory reads its older events back from the store,
// from any seq, on both stores, before and after reopening.
func TestLongLogReadsBackFromTheStore(t *testing.T) {
	for _, kind := range []string{"memory", "file"} {
		t.Run(kind, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "log.jsonl")
			mem := NewMemory()
			open := func() *Log {
				var st Store = mem
				if kind == "file" {
					f, _, err := OpenFile(path)
					if err != nil {
						t.Fatal(err)
					}
					st = f
				}
				return mustOpen(t, st, WithClock(stepClock()))
			}
			l := open()
			var want []Event
			n := 5*keptRecent + 17
			for i := range n {
				var data dsh.SessionEventData = dsh.UserMessageLogged{Message: msg(fmt.Sprint("m", i), fmt.Sprint("text ", i))}
				var opts []AppendOption
				if i%3 == 0 && i > 0 {
					opts = append(opts, WithSources(int64(i-1)))
				}
				want = append(want, mustAppend(t, l, data, opts...))
			}
			check := func(l *Log) {
				t.Helper()
				for _, from := range []int64{0, 1, keptRecent - 1, keptRecent, 2*keptRecent + 1, int64(n) - keptRecent, int64(n) - 1, int64(n), int64(n) + 5, -3} {
					var got []Event
					for ev, err := range l.EventsFrom(from) {
						if err != nil {
							t.Fatalf("EventsFrom(%d): %v", from, err)
						}
						got = append(got, ev)
					}
					w := want[min(max(from, 0), int64(n)):]
					if len(w) == 0 && len(got) == 0 {
						continue
					}
					if diff := cmp.Diff(w, got, cmp.Comparer(func(a, b json.RawMessage) bool { return string(a) == string(b) })); diff != "" {
						t.Fatalf("EventsFrom(%d) (-want +got):\n%s", from, diff)
					}
				}
			}
			check(l)
			snap := l.Events()
			mustAppend(t, l, dsh.TurnStart{Turn: 1})
			count := 0
			for range snap {
				count++
			}
			if count != n {
				t.Fatalf("a snapshot taken at %d events read %d", n, count)
			}
			want = append(want, collect(t, l)[n])
			n++
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			l = open()
			defer l.Close()
			check(l)
			if got := l.Len(); got != int64(n) {
				t.Fatalf("reopened Len = %d, want %d", got, n)
			}
		})
	}
}

// Event times of years 0 to 9999 are appended (RFC 3339 has four-digit years); others are
// refused and append nothing.
func TestEventTimeYears(t *testing.T) {
	for year, ok := range map[int]bool{0: true, 9999: true, -1: false, 10000: false} {
		at := time.Date(year, 6, 1, 0, 0, 0, 0, time.UTC)
		l := mustOpen(t, NewMemory(), WithClock(func() time.Time { return at }))
		_, err := l.Append(context.Background(), dsh.TurnStart{Turn: 1})
		if (err == nil) != ok || l.Len() != map[bool]int64{true: 1, false: 0}[ok] {
			t.Errorf("year %d: Append error %v, Len %d; want accepted %v", year, err, l.Len(), ok)
		}
		if ok {
			ev := l.Events()
			for e := range ev {
				if !e.Time.Equal(at) {
					t.Errorf("year %d: logged time %v", year, e.Time)
				}
			}
		}
		_ = l.Close()
	}
}

// An event type is written as a JSON string that decodes to it: plain printable ASCII
// verbatim, anything else escaped.
func TestAppendJSONStringDecodesBack(t *testing.T) {
	for _, s := range []string{"tool/call", "", " ~", "<&>", "a\"b", `a\b`, "a\x1fb", "a\x7fb", "é", "a\nb"} {
		got, err := appendJSONString([]byte("x"), s)
		var back string
		if err != nil || len(got) < 1 || got[0] != 'x' || json.Unmarshal(got[1:], &back) != nil || back != s {
			t.Errorf("appendJSONString(%q) = %s, %v: does not decode back", s, got, err)
		}
	}
}
