package hookproto

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/dshkit/dsh/generated/dsh"
)

func TestProcessOutcome(t *testing.T) {
	zero, two := 0, 2
	tests := []struct {
		name string
		r    Result
		want Outcome
	}{
		{"exit 0", Result{ExitCode: &zero}, ""},
		{"exit 2", Result{ExitCode: &two, Stderr: []byte("no")}, ""},
		{"orphaned but exited", Result{ExitCode: &zero, Orphaned: true}, ""},
		{"timeout", Result{TimedOut: true}, dsh.HookOutcomeTimeout},
		{"cancelled", Result{Cancelled: true}, dsh.HookOutcomeError},
		{"spawn", Result{SpawnErr: errors.New("no sh")}, dsh.HookOutcomeError},
		{"signal", Result{}, dsh.HookOutcomeError},
		// Output over the cap settles nothing: Decode never lets it lose a block.
		{"stdout over cap", Result{ExitCode: &zero, StdoutOverCap: true, StdoutLost: true}, ""},
		{"stderr over cap", Result{ExitCode: &two, StderrOverCap: true, StderrLost: true}, ""},
		{"io error", Result{ExitCode: &zero, Err: errors.New("write")}, dsh.HookOutcomeError},
	}
	for _, tt := range tests {
		got, ok := ProcessOutcome(tt.r)
		if got != tt.want || ok != (tt.want != "") {
			t.Errorf("%s: ProcessOutcome = %q, %v; want %q", tt.name, got, ok, tt.want)
		}
	}
}

// Scenario 52 (and 11: a non-positive cap means the default).
func TestStderrSummary(t *testing.T) {
	x600 := []byte(strings.Repeat("x", 600))
	tests := []struct {
		in   []byte
		max  int
		want string
	}{
		{x600, 0, strings.Repeat("x", 500) + "…"},
		{x600, -5, strings.Repeat("x", 500) + "…"},
		{x600, 40, strings.Repeat("x", 40) + "…"},
		{[]byte("  this command is not allowed\n"), 0, "this command is not allowed"},
		{[]byte(strings.Repeat("x", 500)), 500, strings.Repeat("x", 500)},
		{nil, 0, ""},
		{[]byte(" \n\t"), 0, ""},
		{[]byte("bad \xff\xfe\n"), 0, "bad \uFFFD"},
		{[]byte("日本語のエラー"), 3, "日本語…"},
	}
	for _, tt := range tests {
		if got := StderrSummary(tt.in, tt.max); got != tt.want {
			t.Errorf("StderrSummary(%q, %d) = %q, want %q", tt.in, tt.max, got, tt.want)
		}
	}
}

func TestCapContext(t *testing.T) {
	if got := CapContext("short", 0); got != "short" {
		t.Errorf("short text changed: %q", got)
	}
	exact := strings.Repeat("é", DefaultContextMax)
	if got := CapContext(exact, 0); got != exact {
		t.Error("text of exactly the cap changed")
	}
	long := strings.Repeat("é", 25000)
	got := CapContext(long, 0)
	if n := utf8.RuneCountInString(got); n > DefaultContextMax || n < DefaultContextMax-100 {
		t.Errorf("capped to %d characters, want just under %d", n, DefaultContextMax)
	}
	if !utf8.ValidString(got) || !strings.HasPrefix(got, "éé") || !strings.Contains(got, "characters omitted]") || !strings.Contains(got, "of 25000") {
		t.Errorf("bad capped text tail: %q", got[len(got)-80:])
	}
	if got := CapContext("abcdefghij", 5); got != "abcde" {
		t.Errorf("tiny cap: %q", got)
	}
	if got := CapContext(strings.Repeat("a", 200), 100); utf8.RuneCountInString(got) > 100 || !strings.Contains(got, "of 200 characters omitted") {
		t.Errorf("cap 100: %q", got)
	}
}

// CapContext keeps as much text as fits with the note, which counts the omitted
// characters; when only the note would fit, the text is just cut.
func TestCapContextCounts(t *testing.T) {
	s := strings.Repeat("é", 100)
	note := func(omitted int) string { return fmt.Sprintf("\n[truncated: %d of 100 characters omitted]", omitted) }
	noteLen := utf8.RuneCountInString(note(100))
	for _, c := range []struct {
		max  int
		want string
	}{
		{100, s},
		{60, strings.Repeat("é", 60-noteLen) + note(100-(60-noteLen))},
		{noteLen + 1, "é" + note(99)},
		{noteLen, strings.Repeat("é", noteLen)},
		{10, strings.Repeat("é", 10)},
	} {
		if got := CapContext(s, c.max); got != c.want {
			t.Errorf("CapContext(100 runes, %d) = %q, want %q", c.max, got, c.want)
		}
	}
}
