package clix

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// TestConvention: help on stdout with exit 0, usage errors on stderr with the usage and
// exit 2, failures on one line with exit 1; OneOf names the choices.
func TestConvention(t *testing.T) {
	run := func(args ...string) (code int, ok bool, stdout, stderr string) {
		var out, errb bytes.Buffer
		c := New("tool sub", "usage: tool sub [-mode M] [ARG]\n", &out, &errb)
		mode := "a"
		c.Flags.Var(OneOf(&mode, false, "a", "b"), "mode", "the mode")
		code, ok = c.Parse(args, 1)
		return code, ok, out.String(), errb.String()
	}
	if code, ok, out, errs := run("-h"); ok || code != ExitOK || !strings.HasPrefix(out, "usage: tool sub") ||
		!strings.Contains(out, "-mode value") || errs != "" {
		t.Errorf("-h: code %d ok %v stdout %q stderr %q", code, ok, out, errs)
	}
	if code, ok, out, errs := run("-mode", "c"); ok || code != ExitUsage || out != "" ||
		!strings.HasPrefix(errs, `tool sub: invalid value "c" for flag -mode: "c" is not one of a, b`) ||
		!strings.Contains(errs, "\nusage: tool sub") {
		t.Errorf("bad value: code %d ok %v stdout %q stderr %q", code, ok, out, errs)
	}
	if code, ok, _, errs := run("x", "y"); ok || code != ExitUsage || !strings.HasPrefix(errs, `tool sub: unexpected argument "y"`) {
		t.Errorf("extra argument: code %d stderr %q", code, errs)
	}
	if _, ok, _, _ := run("-mode", "b", "x"); !ok {
		t.Error("a valid command line did not parse")
	}
	var errb bytes.Buffer
	c := New("tool", "usage: tool\n", &bytes.Buffer{}, &errb)
	if code := c.Fail(bytes.ErrTooLarge); code != ExitFailure || errb.String() != "tool: bytes.Buffer: too large\n" {
		t.Errorf("Fail: code %d stderr %q", code, errb.String())
	}
	c.OmitFlagList = true
	c.Flags.Bool("v", false, "verbose")
	if strings.Contains(c.Help(), "flags:") {
		t.Errorf("OmitFlagList: %q", c.Help())
	}
	for _, a := range []string{"-h", "-help", "--help", "help"} {
		if !IsHelp(a) {
			t.Errorf("IsHelp(%q) = false", a)
		}
	}
}

// TestExit: Exit maps every kind of error to its code and prints it the convention's way.
func TestExit(t *testing.T) {
	for _, tc := range []struct {
		name     string
		err      error
		code     int
		stderr   string
		hasUsage bool
	}{
		{"nil", nil, ExitOK, "", false},
		{"stop", Stop(ExitUsage), ExitUsage, "", false},
		{"usage", Usagef("want %d FILE", 1), ExitUsage, "tool: want 1 FILE\n", true},
		{"wrapped usage", fmt.Errorf("x: %w", Usagef("bad")), ExitUsage, "tool: bad\n", true},
		{"coded", &CodedError{Code: 2, Err: errors.New("spec: broken")}, 2, "tool: spec: broken\n", false},
		{"coded unprefixed", &CodedError{Code: 2, Err: errors.New("a.cue:1:2: bad"), Unprefixed: true}, 2, "a.cue:1:2: bad\n", false},
		{"failure", errors.New("no such file"), ExitFailure, "tool: no such file\n", false},
	} {
		var errb bytes.Buffer
		c := New("tool", "usage: tool FILE\n", &bytes.Buffer{}, &errb)
		if code := c.Exit(tc.err); code != tc.code {
			t.Errorf("%s: code %d, want %d", tc.name, code, tc.code)
		}
		got := errb.String()
		if tc.hasUsage {
			if !strings.HasSuffix(got, "usage: tool FILE\n") {
				t.Errorf("%s: stderr %q lacks the usage", tc.name, got)
			}
			got, _, _ = strings.Cut(got, "\n")
			got += "\n"
		}
		if got != tc.stderr {
			t.Errorf("%s: stderr %q, want %q", tc.name, got, tc.stderr)
		}
	}
}
