package hookproto

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A diagnostic reads "file: path: cause (what skipped)", each part only when it is set.
func TestDiagnosticError(t *testing.T) {
	bad := errors.New("bad timeout")
	for _, c := range []struct {
		d    Diagnostic
		want string
	}{
		{Diagnostic{File: "hooks.json", Path: "hooks.Stop[0]", Skipped: "group", Err: bad}, "hooks.json: hooks.Stop[0]: bad timeout (group skipped)"},
		{Diagnostic{Path: "hooks.Stop[0]", Err: bad}, "hooks.Stop[0]: bad timeout"},
		{Diagnostic{File: "hooks.json", Err: bad}, "hooks.json: bad timeout"},
		{Diagnostic{Err: bad, Skipped: "file"}, "bad timeout (file skipped)"},
	} {
		if got := c.d.Error(); got != c.want {
			t.Errorf("Error() = %q, want %q", got, c.want)
		}
	}
}

// Load's diagnostics quote the offending value ("nothing" when it is missing), and a file
// that is JSON null says so; a timeout of exactly the maximum is accepted.
func TestLoadDiagnosticsQuoteTheValue(t *testing.T) {
	text := func(ds []Diagnostic) []string {
		var out []string
		for _, d := range ds {
			out = append(out, d.Error())
		}
		return out
	}
	for _, c := range []struct{ name, config, want string }{
		{"null file", `null`, "settings.json: invalid hook configuration: want a JSON object, got null (file skipped)"},
		{"missing command", `{"hooks":{"Stop":[{"hooks":[{"type":"command"}]}]}}`, "settings.json: hooks.Stop[0].hooks[0].command: "},
		{"bad status", `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"x","statusMessage":5}]}]}}`,
			"settings.json: hooks.Stop[0].hooks[0].statusMessage: malformed hook entry: statusMessage must be a string, got 5; ignored"},
	} {
		_, ds := Load([]byte(c.config), ccOpts)
		got := text(ds)
		if len(got) != 1 || !strings.HasPrefix(got[0], c.want) {
			t.Errorf("%s: diagnostics %q, want one starting %q", c.name, got, c.want)
		}
		if c.name == "missing command" && (len(got) != 1 || !strings.HasSuffix(got[0], ", got nothing (handler skipped)")) {
			t.Errorf("%s: diagnostics %q, want the missing value called nothing", c.name, got)
		}
	}
	if _, ds := Load([]byte(`{"hooks":{"Stop":[{"hooks":[{"type":"command"`), ccOpts); len(ds) != 1 || strings.Contains(ds[0].Error(), "got null") {
		t.Errorf("invalid JSON: diagnostics %q, want its syntax error", text(ds))
	}
	max := strconv.Itoa(maxTimeoutSeconds)
	c, ds := Load([]byte(`{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"x","timeout":`+max+`}]}]}}`), ccOpts)
	if len(ds) != 0 {
		t.Fatalf("timeout %s: %q", max, text(ds))
	}
	if hs := c.Handlers("Stop"); len(hs) != 1 || hs[0].Timeout != maxTimeoutSeconds*time.Second {
		t.Errorf("timeout %s: handlers %+v", max, hs)
	}
}

// Paths write identifier keys (letters, digits, _ and $) dotted and quote any other key.
func TestDiagnosticPathsQuoteOnlyNonIdentifiers(t *testing.T) {
	names := map[string]string{
		"az": "hooks.az", "AZ": "hooks.AZ", "_$09": "hooks._$09",
		"a-b": `hooks["a-b"]`, "`": "hooks[\"`\"]", "{": `hooks["{"]`, "@": `hooks["@"]`, "[": `hooks["["]`,
		"/": `hooks["/"]`, ":": `hooks[":"]`, "é": `hooks["é"]`, "": `hooks[""]`,
	}
	obj := map[string]any{}
	for n := range names {
		obj[n] = []any{}
	}
	data, err := json.Marshal(map[string]any{"hooks": obj})
	if err != nil {
		t.Fatal(err)
	}
	_, ds := Load(data, ccOpts)
	got := map[string]bool{}
	for _, d := range ds {
		got[d.Path] = true
	}
	for n, want := range names {
		if !got[want] {
			t.Errorf("event %q: no diagnostic at %s (paths: %v)", n, want, got)
		}
	}
}
