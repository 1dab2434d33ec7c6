package dialects_test

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dshkit/dsh/bridges/claudecode"
	"github.com/dshkit/dsh/bridges/codex"
	"github.com/dshkit/dsh/bridges/hookproto"
	"github.com/google/go-cmp/cmp"
)

// The events the Claude Code bridge maps, and those of them without a matcher subject.
var (
	ccEvents  = []string{"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop", "SubagentStart", "SubagentStop"}
	noMatcher = []string{"UserPromptSubmit", "Stop"}
	ccOpts    = hookproto.LoadOptions{Dialect: hookproto.ClaudeCode, Rules: &claudecode.Rules, Source: "settings.json", Events: ccEvents, NoMatcherEvents: noMatcher}
	codexOpts = hookproto.LoadOptions{Dialect: hookproto.Codex, Rules: &codex.Rules, Source: "hooks.json", Events: []string{"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop"}, NoMatcherEvents: noMatcher}
)

// row is the comparable projection of a Handler.
type row struct {
	Event, Path, Matcher, Command string
	Args                          []string
	Group, Index                  int
	Timeout                       time.Duration
	Async                         bool
}

func rows(hs []hookproto.Handler) []row {
	var out []row
	for _, h := range hs {
		out = append(out, row{h.Event, h.Path, h.Matcher.String(), h.Command, h.Args, h.Group, h.Index, h.Timeout, h.Async})
	}
	return out
}

func allRows(c *hookproto.Config) []row {
	var out []row
	for _, ev := range c.Events() {
		out = append(out, rows(c.Handlers(ev))...)
	}
	return out
}

// diag is the comparable projection of a Diagnostic.
type diag struct{ Path, Skipped, Kind string }

func diags(ds []hookproto.Diagnostic) []diag {
	kinds := []struct {
		err  error
		name string
	}{
		{hookproto.ErrJSOnlySyntax, "js-only"}, {hookproto.ErrInvalidMatcher, "matcher"}, {hookproto.ErrConfigRead, "read"},
		{hookproto.ErrConfigSyntax, "syntax"}, {hookproto.ErrMalformed, "malformed"}, {hookproto.ErrUnsupportedEvent, "event"},
		{hookproto.ErrUnsupportedHandler, "handler"}, {hookproto.ErrUnknownDialect, "dialect"},
	}
	var out []diag
	for _, d := range ds {
		k := "?"
		for _, c := range kinds {
			if errors.Is(d, c.err) {
				k = c.name
				break
			}
		}
		out = append(out, diag{d.Path, d.Skipped, k})
	}
	return out
}

func load(t *testing.T, opts hookproto.LoadOptions, json string) (*hookproto.Config, []hookproto.Diagnostic) {
	t.Helper()
	c, ds := hookproto.Load([]byte(json), opts)
	if c == nil {
		t.Fatal("Load returned a nil Config")
	}
	for _, d := range ds {
		if d.File != opts.Source {
			t.Errorf("diagnostic %q names file %q, want %q", d, d.File, opts.Source)
		}
		t.Logf("diagnostic: %v", d)
	}
	return c, ds
}

// Scenario 1: the hooks wrapper is optional (plugin form).
func TestLoadScenario1WrapperOptional(t *testing.T) {
	wrapped, ds1 := load(t, ccOpts, `{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"x.sh"}]}]}}`)
	bare, ds2 := load(t, ccOpts, `{"description":"a plugin","PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"x.sh"}]}]}`)
	if len(ds1)+len(ds2) != 0 {
		t.Fatalf("unexpected diagnostics: %v %v", ds1, ds2)
	}
	want := []row{{Event: "PreToolUse", Path: "hooks.PreToolUse[0].hooks[0]", Matcher: "Bash", Command: "x.sh", Timeout: 600 * time.Second}}
	if diff := cmp.Diff(want, allRows(wrapped)); diff != "" {
		t.Errorf("wrapped (-want +got):\n%s", diff)
	}
	want[0].Path = "PreToolUse[0].hooks[0]"
	if diff := cmp.Diff(want, allRows(bare)); diff != "" {
		t.Errorf("wrapper-less (-want +got):\n%s", diff)
	}
	g := wrapped.Groups("PreToolUse")
	if len(g) != 1 || g[0].Path != "hooks.PreToolUse[0]" || g[0].Source != "settings.json" || g[0].Matcher.String() != "Bash" {
		t.Errorf("groups = %+v", g)
	}
}

// Scenario 2: a missing file is one diagnostic and an empty configuration.
func TestLoadScenario2MissingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nope.json")
	c, ds := hookproto.LoadFile(path, hookproto.LoadOptions{Dialect: hookproto.ClaudeCode, Rules: &claudecode.Rules})
	if len(ds) != 1 || !errors.Is(ds[0], hookproto.ErrConfigRead) || !errors.Is(ds[0], fs.ErrNotExist) || ds[0].File != path {
		t.Fatalf("diagnostics = %v, want one read error naming %s", ds, path)
	}
	if c == nil || len(c.Events()) != 0 || c.Match("PreToolUse", "Bash") != nil {
		t.Errorf("config not empty: %+v", c)
	}
	// Invalid JSON and a non-object are the same: one diagnostic, empty config.
	for _, bad := range []string{`{"hooks":`, `[1,2]`, `null`, ``} {
		c, ds := hookproto.Load([]byte(bad), hookproto.LoadOptions{Dialect: hookproto.Codex, Rules: &codex.Rules})
		if len(ds) != 1 || !errors.Is(ds[0], hookproto.ErrConfigSyntax) || len(c.Events()) != 0 {
			t.Errorf("Load(%q) = %v, %v", bad, c.Events(), ds)
		}
	}
	// LoadFile names the file in the handlers' Source.
	good := filepath.Join(t.TempDir(), "hooks.json")
	if err := os.WriteFile(good, []byte(`{"hooks":{"Stop":[{"hooks":[{"command":"s.sh"}]}]}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	opts := codexOpts
	opts.Source = ""
	c, ds = hookproto.LoadFile(good, opts)
	if hs := c.Handlers("Stop"); len(ds) != 0 || len(hs) != 1 || hs[0].Source != good {
		t.Errorf("LoadFile: %+v %v", hs, ds)
	}
}

// Scenario 3: an invalid regex on a matcher event is reported with pattern and event. Per
// dsh bridge decision 9 only its group is skipped; the TS bridge registered nothing.
func TestLoadScenario3InvalidRegexSkipsOnlyItsGroup(t *testing.T) {
	c, ds := load(t, ccOpts, `{"hooks":{
		"PreToolUse":[
			{"matcher":"(","hooks":[{"command":"bad.sh"}]},
			{"matcher":"Bash","hooks":[{"command":"good.sh"}]}],
		"UserPromptSubmit":[{"hooks":[{"type":"command","command":"exit 2"}]}]}}`)
	if diff := cmp.Diff([]diag{{"hooks.PreToolUse[0].matcher", "group", "matcher"}}, diags(ds)); diff != "" {
		t.Fatalf("diagnostics (-want +got):\n%s", diff)
	}
	if msg := ds[0].Error(); !strings.Contains(msg, `invalid claude-code regex matcher "(" on event "PreToolUse"`) || !strings.HasPrefix(msg, "settings.json: hooks.PreToolUse[0].matcher: ") {
		t.Errorf("message = %q", msg)
	}
	var me *hookproto.MatcherError
	if !errors.As(ds[0], &me) || me.Event != "PreToolUse" || me.Pattern != "(" {
		t.Errorf("MatcherError = %+v", me)
	}
	want := []row{
		{Event: "PreToolUse", Path: "hooks.PreToolUse[1].hooks[0]", Matcher: "Bash", Command: "good.sh", Group: 1, Timeout: 10 * time.Minute},
		{Event: "UserPromptSubmit", Path: "hooks.UserPromptSubmit[0].hooks[0]", Command: "exit 2", Timeout: 30 * time.Second},
	}
	if diff := cmp.Diff(want, allRows(c)); diff != "" {
		t.Errorf("loaded (-want +got):\n%s", diff)
	}
}

// Scenario 4: an unsupported event is dropped before its groups are parsed, so its bad
// matcher is not a regex error. Decision 9 makes the drop itself a diagnostic (the TS
// bridge was silent).
func TestLoadScenario4UnsupportedEventDroppedFirst(t *testing.T) {
	c, ds := load(t, ccOpts, `{"hooks":{
		"Setup":[{"matcher":"(","hooks":[{"command":"setup.sh"}]}],
		"UserPromptSubmit":[{"hooks":[{"command":"exit 2"}]}]}}`)
	if diff := cmp.Diff([]diag{{"hooks.Setup", "event", "event"}}, diags(ds)); diff != "" {
		t.Errorf("diagnostics (-want +got):\n%s", diff)
	}
	if got := c.Match("UserPromptSubmit", ""); len(got) != 1 || got[0].Command != "exit 2" {
		t.Errorf("UserPromptSubmit handlers = %+v", got)
	}
	if len(c.Handlers("Setup")) != 0 {
		t.Error("Setup loaded")
	}
}

// Scenario 5: events without a matcher subject drop their matcher before validation.
func TestLoadScenario5MatcherlessEventsDropMatcher(t *testing.T) {
	for _, opts := range []hookproto.LoadOptions{ccOpts, codexOpts} {
		c, ds := load(t, opts, `{"hooks":{
			"UserPromptSubmit":[{"matcher":"[","hooks":[{"command":"u.sh"}]}],
			"Stop":[{"matcher":"(","hooks":[{"command":"s.sh"}]}]}}`)
		if len(ds) != 0 {
			t.Errorf("%s: diagnostics %v", opts.Dialect, ds)
		}
		for ev, cmd := range map[string]string{"UserPromptSubmit": "u.sh", "Stop": "s.sh"} {
			if got := c.Match(ev, "anything"); len(got) != 1 || got[0].Command != cmd || !got[0].Matcher.MatchesAll() {
				t.Errorf("%s %s: %+v", opts.Dialect, ev, got)
			}
		}
	}
}

// Scenario 6: a missing type is a command; http, prompt, agent and mcp_tool handlers load
// (Claude Code runs them); an agent without a prompt, a malformed mcp_tool and unknown
// types are skipped one by one.
func TestLoadScenario6HandlerTypes(t *testing.T) {
	c, ds := load(t, ccOpts, `{"hooks":{"PreToolUse":[{"hooks":[
		{"type":"prompt","prompt":"judge"},
		{"type":"command","command":"ok.sh"},
		{"type":"http","url":"http://x"},
		{"command":"untyped.sh"},
		{"type":"agent"},{"type":"mcp_tool"},{"type":"webhook"},{"type":"agent","prompt":"verify"}]}]}}`)
	p := "hooks.PreToolUse[0].hooks"
	want := []diag{
		{p + "[4].prompt", "handler", "malformed"}, {p + "[5].server", "handler", "malformed"}, {p + "[6]", "handler", "handler"},
	}
	if diff := cmp.Diff(want, diags(ds)); diff != "" {
		t.Errorf("diagnostics (-want +got):\n%s", diff)
	}
	var cmds []string
	for _, h := range c.Match("PreToolUse", "Bash") {
		cmds = append(cmds, h.Command)
	}
	if diff := cmp.Diff([]string{"judge", "ok.sh", "http://x", "untyped.sh", "verify"}, cmds); diff != "" {
		t.Errorf("commands (-want +got):\n%s", diff)
	}
}

// Scenario 7: malformed entries are dropped with a diagnostic each; empty groups vanish.
func TestLoadScenario7MalformedEntries(t *testing.T) {
	c, ds := load(t, ccOpts, `{"hooks":{
		"PreToolUse":"nope",
		"PostToolUse":[42, {"hooks":"no"}, {"matcher":7,"hooks":[{"command":"m.sh"}]}, {"hooks":[{"command":5}]},
			{"hooks":[{"command":""}, "str", {"command":"a.sh","args":"x"}, {"command":"b.sh","async":"yes"}, {"command":"ok.sh","unknown":true}]},
			{"hooks":[]}, {"nohooks":true}],
		"Stop":null}}`)
	p := "hooks.PostToolUse"
	want := []diag{
		{p + "[0]", "group", "malformed"},
		{p + "[1].hooks", "group", "malformed"},
		{p + "[2].matcher", "group", "malformed"},
		{p + "[3].hooks[0].command", "handler", "malformed"},
		{p + "[4].hooks[0].command", "handler", "malformed"},
		{p + "[4].hooks[1]", "handler", "malformed"},
		{p + "[4].hooks[2].args", "handler", "malformed"},
		{p + "[4].hooks[3].async", "handler", "malformed"},
		{p + "[6].hooks", "group", "malformed"},
		{"hooks.PreToolUse", "event", "malformed"},
	}
	if diff := cmp.Diff(want, diags(ds)); diff != "" {
		t.Errorf("diagnostics (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"PostToolUse"}, c.Events()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if gs := c.Groups("PostToolUse"); len(gs) != 1 || gs[0].Index != 4 || len(gs[0].Handlers) != 1 || gs[0].Handlers[0].Command != "ok.sh" {
		t.Errorf("groups = %+v", gs)
	}
	// A wrapper that is not an object loads nothing, with one diagnostic.
	if c, ds := load(t, ccOpts, `{"hooks":[1]}`); len(c.Events()) != 0 || len(ds) != 1 || ds[0].Path != "hooks" {
		t.Errorf("hooks:[1] gave %v %v", c.Events(), ds)
	}
}

// Scenario 8: timeouts in seconds, per dialect defaults (Claude Code 600 s, measured).
func TestLoadScenario8Timeouts(t *testing.T) {
	c, ds := load(t, ccOpts, `{"hooks":{"Stop":[{"hooks":[
		{"command":"a","timeout":30}, {"command":"b"}, {"command":"c","timeoutSec":20},
		{"command":"d","timeout":0}, {"command":"e","timeout":"5"}, {"command":"f","timeout":1.5}]}]}}`)
	var got []time.Duration
	for _, h := range c.Handlers("Stop") {
		got = append(got, h.Timeout)
	}
	want := []time.Duration{30 * time.Second, 10 * time.Minute, 10 * time.Minute, 10 * time.Minute, 10 * time.Minute, 1500 * time.Millisecond}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("claude-code timeouts (-want +got):\n%s", diff)
	}
	// An invalid timeout keeps the handler (with the default) and says so.
	wantDiags := []diag{{"hooks.Stop[0].hooks[3].timeout", "", "malformed"}, {"hooks.Stop[0].hooks[4].timeout", "", "malformed"}}
	if diff := cmp.Diff(wantDiags, diags(ds)); diff != "" {
		t.Errorf("diagnostics (-want +got):\n%s", diff)
	}

	c, _ = load(t, codexOpts, `{"hooks":{"Stop":[{"hooks":[
		{"command":"a","timeout":10}, {"command":"b","timeoutSec":20}, {"command":"c"}, {"command":"d","timeout":5,"timeoutSec":7}]}]}}`)
	got = nil
	for _, h := range c.Handlers("Stop") {
		got = append(got, h.Timeout)
	}
	want = []time.Duration{10 * time.Second, 20 * time.Second, 600 * time.Second, 5 * time.Second}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("codex timeouts (-want +got):\n%s", diff)
	}
}

// Scenario 9 (and decision 5): ${...} substitution and the exported variables.
func TestLoadScenario9Substitution(t *testing.T) {
	const cfg = `{"hooks":{"PreToolUse":[{"hooks":[
		{"command":"${CLAUDE_PLUGIN_ROOT}/s.sh ${CLAUDE_PROJECT_DIR}"},
		{"command":"${PLUGIN_ROOT}/p.sh ${NOT_SUBSTITUTED}/s.sh"},
		{"command":"${CLAUDE_PLUGIN_ROOT}/exec","args":["${CLAUDE_PLUGIN_DATA}/d","${PLUGIN_DATA}"]}]}]}}`
	type out struct {
		Cmds [][]string
		Env  []string
	}
	get := func(opts hookproto.LoadOptions) out {
		c, ds := load(t, opts, cfg)
		if len(ds) != 0 {
			t.Errorf("diagnostics: %v", ds)
		}
		var o out
		for _, h := range c.Handlers("PreToolUse") {
			o.Cmds = append(o.Cmds, append([]string{h.Command}, h.Args...))
			o.Env = h.Env
		}
		return o
	}
	cc := ccOpts
	cc.PluginRoot, cc.PluginData, cc.ProjectDir = "/p", "/data", "/proj"
	cx := codexOpts
	cx.PluginRoot, cx.PluginData, cx.ProjectDir = "/p", "/data", "/proj"
	tests := []struct {
		name string
		opts hookproto.LoadOptions
		want out
	}{
		{"claude-code plugin", cc, out{
			Cmds: [][]string{{"/p/s.sh /proj"}, {"${PLUGIN_ROOT}/p.sh ${NOT_SUBSTITUTED}/s.sh"}, {"/p/exec", "/data/d", "${PLUGIN_DATA}"}},
			Env:  []string{"CLAUDE_PLUGIN_ROOT=/p", "CLAUDE_PLUGIN_DATA=/data", "CLAUDE_PROJECT_DIR=/proj"},
		}},
		{"claude-code, nothing configured: verbatim, the shell expands it", ccOpts, out{
			Cmds: [][]string{{"${CLAUDE_PLUGIN_ROOT}/s.sh ${CLAUDE_PROJECT_DIR}"}, {"${PLUGIN_ROOT}/p.sh ${NOT_SUBSTITUTED}/s.sh"}, {"${CLAUDE_PLUGIN_ROOT}/exec", "${CLAUDE_PLUGIN_DATA}/d", "${PLUGIN_DATA}"}},
		}},
		{"codex plugin", cx, out{
			Cmds: [][]string{{"/p/s.sh ${CLAUDE_PROJECT_DIR}"}, {"/p/p.sh ${NOT_SUBSTITUTED}/s.sh"}, {"/p/exec", "/data/d", "/data"}},
			Env:  []string{"PLUGIN_ROOT=/p", "CLAUDE_PLUGIN_ROOT=/p", "PLUGIN_DATA=/data", "CLAUDE_PLUGIN_DATA=/data"},
		}},
		{"codex user hooks never substitute", codexOpts, out{
			Cmds: [][]string{{"${CLAUDE_PLUGIN_ROOT}/s.sh ${CLAUDE_PROJECT_DIR}"}, {"${PLUGIN_ROOT}/p.sh ${NOT_SUBSTITUTED}/s.sh"}, {"${CLAUDE_PLUGIN_ROOT}/exec", "${CLAUDE_PLUGIN_DATA}/d", "${PLUGIN_DATA}"}},
		}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, get(tt.opts)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
	}
}

// Scenario 10: async handlers load with Async set (decision 7: they run detached; the TS
// Codex bridge skipped them), and events the bridge does not support are skipped.
func TestLoadScenario10AsyncAndUnsupported(t *testing.T) {
	c, ds := load(t, codexOpts, `{"hooks":{
		"PreToolUse":[{"hooks":[{"command":"h.sh"},{"command":"bg.sh","async":true}]}],
		"TeammateIdle":[{"hooks":[{"command":"exit 2"}]}]}}`)
	if diff := cmp.Diff([]diag{{"hooks.TeammateIdle", "event", "event"}}, diags(ds)); diff != "" {
		t.Errorf("diagnostics (-want +got):\n%s", diff)
	}
	want := []row{
		{Event: "PreToolUse", Path: "hooks.PreToolUse[0].hooks[0]", Command: "h.sh", Timeout: 600 * time.Second},
		{Event: "PreToolUse", Path: "hooks.PreToolUse[0].hooks[1]", Command: "bg.sh", Index: 1, Timeout: 600 * time.Second, Async: true},
	}
	if diff := cmp.Diff(want, allRows(c)); diff != "" {
		t.Errorf("loaded (-want +got):\n%s", diff)
	}
}

// Scenario 11 (stderrSummaryMaxChars must be a positive integer) is a bridge option, not
// part of the hook file; here the cap is an int and a non-positive one means the default
// (see TestStderrSummary).

// JS-only matchers are reported as such and skip their group only.
func TestLoadJSOnlyMatcher(t *testing.T) {
	c, ds := load(t, codexOpts, `{"hooks":{"PreToolUse":[
		{"matcher":"^(?!Bash).*","hooks":[{"command":"js.sh"}]},
		{"matcher":"Edit|Write","hooks":[{"command":"ok.sh"}]}]}}`)
	if diff := cmp.Diff([]diag{{"hooks.PreToolUse[0].matcher", "group", "js-only"}}, diags(ds)); diff != "" {
		t.Fatalf("diagnostics (-want +got):\n%s", diff)
	}
	if !strings.Contains(ds[0].Error(), `negative lookahead "(?!"`) {
		t.Errorf("message %q does not name the construct", ds[0].Error())
	}
	if got := c.Match("PreToolUse", "Write"); len(got) != 1 || got[0].Command != "ok.sh" {
		t.Errorf("Match = %+v", got)
	}
}

func TestLoadUnknownDialect(t *testing.T) {
	c, ds := hookproto.Load([]byte(`{"hooks":{}}`), hookproto.LoadOptions{})
	if len(ds) != 1 || !errors.Is(ds[0], hookproto.ErrUnknownDialect) || len(c.Events()) != 0 {
		t.Errorf("got %v %v", c.Events(), ds)
	}
}

// Without an Events set every event loads; wrapper-less metadata stays ignored.
func TestLoadAllEvents(t *testing.T) {
	c, ds := load(t, hookproto.LoadOptions{Dialect: hookproto.ClaudeCode, Rules: &claudecode.Rules}, `{"description":"x","version":2,"FileChanged":[{"matcher":"\\.go$","hooks":[{"command":"f.sh"}]}],"Weird Event":[{"hooks":[{"command":"w"}]}]}`)
	if len(ds) != 0 {
		t.Errorf("diagnostics %v", ds)
	}
	if diff := cmp.Diff([]string{"FileChanged", "Weird Event"}, c.Events()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if hs := c.Handlers("Weird Event"); len(hs) != 1 || hs[0].Path != `["Weird Event"][0].hooks[0]` {
		t.Errorf("handlers %+v", hs)
	}
}

// Decision 3, scenario 60: Claude Code runs an identical command (string plus args) from
// several files once; Codex runs every copy.
func TestMergeDedupe(t *testing.T) {
	const user = `{"hooks":{"Stop":[{"hooks":[{"command":"s.sh"},{"command":"e","args":["1"]}]}],
		"PreToolUse":[{"matcher":"Bash","hooks":[{"command":"guard.sh"}]}]}}`
	const project = `{"hooks":{"Stop":[{"hooks":[{"command":"s.sh"},{"command":"e","args":["2"]},{"command":"e","args":["1"]},{"command":"s.sh","args":[]}]}],
		"PreToolUse":[{"matcher":"Edit|Bash","hooks":[{"command":"guard.sh"},{"command":"edit.sh"}]}]}}`
	commands := func(hs []hookproto.Handler) []string {
		var out []string
		for _, h := range hs {
			out = append(out, h.Source+":"+strings.Join(append([]string{h.Command}, h.Args...), " "))
		}
		return out
	}
	merge := func(d hookproto.Dialect) *hookproto.Config {
		a, _ := hookproto.Load([]byte(user), hookproto.LoadOptions{Dialect: d, Source: "user", Rules: ptr(rules[d])})
		b, _ := hookproto.Load([]byte(project), hookproto.LoadOptions{Dialect: d, Source: "project", Rules: ptr(rules[d])})
		m, err := hookproto.Merge(a, nil, b)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	cc, cx := merge(hookproto.ClaudeCode), merge(hookproto.Codex)
	tests := []struct {
		name string
		got  []hookproto.Handler
		want []string
	}{
		{"claude-code Stop", cc.Match("Stop", ""), []string{"user:s.sh", "user:e 1", "project:e 2", "project:s.sh"}},
		{"codex Stop", cx.Match("Stop", ""), []string{"user:s.sh", "user:e 1", "project:s.sh", "project:e 2", "project:e 1", "project:s.sh"}},
		// Dedupe is among the handlers that match: for Edit only the project copy does.
		{"claude-code PreToolUse Bash", cc.Match("PreToolUse", "Bash"), []string{"user:guard.sh", "project:edit.sh"}},
		{"claude-code PreToolUse Edit", cc.Match("PreToolUse", "Edit"), []string{"project:guard.sh", "project:edit.sh"}},
		{"claude-code Handlers keeps all", cc.Handlers("Stop"), []string{"user:s.sh", "user:e 1", "project:s.sh", "project:e 2", "project:e 1", "project:s.sh"}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, commands(tt.got)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
	}
	a, _ := hookproto.Load([]byte(user), hookproto.LoadOptions{Dialect: hookproto.ClaudeCode, Rules: &claudecode.Rules})
	b, _ := hookproto.Load([]byte(user), hookproto.LoadOptions{Dialect: hookproto.Codex, Rules: &codex.Rules})
	if _, err := hookproto.Merge(a, b); !errors.Is(err, hookproto.ErrDialectMismatch) {
		t.Errorf("Merge of two dialects: %v", err)
	}
	var nilCfg *hookproto.Config
	if nilCfg.Match("Stop", "") != nil || nilCfg.Events() != nil || nilCfg.Groups("Stop") != nil {
		t.Error("nil Config is not empty")
	}
}

// TestDisableAllHooks: Claude Code's "disableAllHooks": true in any settings file turns
// every hook off, from every file; a non-boolean is a diagnostic and ignored.
func TestDisableAllHooks(t *testing.T) {
	dir := t.TempDir()
	on := filepath.Join(dir, "on.json")
	off := filepath.Join(dir, "off.json")
	bad := filepath.Join(dir, "bad.json")
	_ = os.WriteFile(on, []byte(`{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"true"}]}]}}`), 0o644)
	_ = os.WriteFile(off, []byte(`{"disableAllHooks":true}`), 0o644)
	_ = os.WriteFile(bad, []byte(`{"disableAllHooks":"yes","hooks":{"Stop":[{"hooks":[{"type":"command","command":"true"}]}]}}`), 0o644)
	o := hookproto.SourcesOptions{Dialect: hookproto.ClaudeCode, Rules: &claudecode.Rules, Events: []string{"Stop"}}
	cfg, _ := hookproto.LoadSources([]hookproto.Source{{Path: on}, {Path: off}}, o)
	if cfg.DisabledBy != off || len(cfg.Events()) != 0 {
		t.Errorf("disabled by %q, events %v", cfg.DisabledBy, cfg.Events())
	}
	cfg, diags := hookproto.LoadSources([]hookproto.Source{{Path: bad}}, o)
	if cfg.DisabledBy != "" || len(cfg.Events()) != 1 || len(diags) != 1 || !strings.Contains(diags[0].Error(), "disableAllHooks must be a boolean") {
		t.Errorf("disabled by %q, events %v, diags %v", cfg.DisabledBy, cfg.Events(), diags)
	}
}

// A diagnostic reads "file: path: cause (what skipped)", each part only when it is set.
func TestDiagnosticError(t *testing.T) {
	bad := errors.New("bad timeout")
	for _, c := range []struct {
		d    hookproto.Diagnostic
		want string
	}{
		{hookproto.Diagnostic{File: "hooks.json", Path: "hooks.Stop[0]", Skipped: "group", Err: bad}, "hooks.json: hooks.Stop[0]: bad timeout (group skipped)"},
		{hookproto.Diagnostic{Path: "hooks.Stop[0]", Err: bad}, "hooks.Stop[0]: bad timeout"},
		{hookproto.Diagnostic{File: "hooks.json", Err: bad}, "hooks.json: bad timeout"},
		{hookproto.Diagnostic{Err: bad, Skipped: "file"}, "bad timeout (file skipped)"},
	} {
		if got := c.d.Error(); got != c.want {
			t.Errorf("Error() = %q, want %q", got, c.want)
		}
	}
}

// Load's diagnostics quote the offending value ("nothing" when it is missing), and a file
// that is JSON null says so; a timeout of exactly the maximum is accepted.
func TestLoadDiagnosticsQuoteTheValue(t *testing.T) {
	text := func(ds []hookproto.Diagnostic) []string {
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
		_, ds := hookproto.Load([]byte(c.config), ccOpts)
		got := text(ds)
		if len(got) != 1 || !strings.HasPrefix(got[0], c.want) {
			t.Errorf("%s: diagnostics %q, want one starting %q", c.name, got, c.want)
		}
		if c.name == "missing command" && (len(got) != 1 || !strings.HasSuffix(got[0], ", got nothing (handler skipped)")) {
			t.Errorf("%s: diagnostics %q, want the missing value called nothing", c.name, got)
		}
	}
	if _, ds := hookproto.Load([]byte(`{"hooks":{"Stop":[{"hooks":[{"type":"command"`), ccOpts); len(ds) != 1 || strings.Contains(ds[0].Error(), "got null") {
		t.Errorf("invalid JSON: diagnostics %q, want its syntax error", text(ds))
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
	_, ds := hookproto.Load(data, ccOpts)
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

// ptr returns a pointer to a copy of r.
func ptr(r hookproto.Rules) *hookproto.Rules { return &r }
