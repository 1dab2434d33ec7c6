package mcp_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/dshkit/dsh/bridges/mcp"
	"github.com/dshkit/dsh/generated/dsh"
)

var apiName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// Tool names fit the model APIs' rule (once, a 208-character name was passed on).
// A dialect's format names the tools as its engine does (Gemini CLI: mcp_<server>_<tool>),
// sanitized and cut alike; an empty format is ToolName's.
func TestFormatToolName(t *testing.T) {
	const gemini = "mcp_{server}_{tool}"
	for _, tt := range []struct{ format, server, tool, want string }{
		{gemini, "hk", "hook", "mcp_hk_hook"},
		{gemini, "my server", "do.it", "mcp_my_server_do_it"},
		{"", "hk", "hook", "mcp__hk__hook"},
	} {
		if got := mcp.FormatToolName(tt.format, tt.server, tt.tool); got != tt.want {
			t.Errorf("FormatToolName(%q, %q, %q) = %q, want %q", tt.format, tt.server, tt.tool, got, tt.want)
		}
	}
	if n := mcp.FormatToolName(gemini, "srv", strings.Repeat("long", 52)); len(n) != mcp.MaxToolName || !strings.HasPrefix(n, "mcp_srv_long") {
		t.Errorf("a long name: %q", n)
	}
}

func TestToolNameFitsTheModelAPIs(t *testing.T) {
	long := strings.Repeat("long", 52)
	tests := []struct{ server, tool, want string }{
		{"github", "create_issue", "mcp__github__create_issue"},
		{"my server", "do.it", "mcp__my_server__do_it"},
		{"srv", "ünïcode", "mcp__srv___n_code"},
	}
	for _, tt := range tests {
		if got := mcp.ToolName(tt.server, tt.tool); got != tt.want {
			t.Errorf("ToolName(%q, %q) = %q, want %q", tt.server, tt.tool, got, tt.want)
		}
	}
	a, b := mcp.ToolName("srv", long+"a"), mcp.ToolName("srv", long+"b")
	for _, n := range []string{a, b} {
		if !apiName.MatchString(n) || len(n) != mcp.MaxToolName {
			t.Errorf("long name %q (%d characters) does not fit", n, len(n))
		}
	}
	if a == b {
		t.Errorf("two long names sharing a prefix came out alike: %q", a)
	}
	if again := mcp.ToolName("srv", long+"a"); again != a {
		t.Errorf("not deterministic: %q then %q", a, again)
	}
	if !strings.HasPrefix(a, "mcp__srv__longlong") {
		t.Errorf("long name %q lost its readable prefix", a)
	}
}

// Collisions are errors at mount naming both sides; nothing is dropped silently (issue
// 30: servers "a b" and "a_b" silently lost one server's tools).
func TestNameCollisionsAreReported(t *testing.T) {
	var logs bytes.Buffer
	o := mcp.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))}
	rt, set, errs := mount(t, o, fakeConfig(t, "a b", "DSH_MCP_FAKE_NAMES=1"), fakeConfig(t, "a_b"))
	var msgs []string
	for _, e := range errs {
		msgs = append(msgs, e.Error())
	}
	all := strings.Join(msgs, "\n")
	if !strings.Contains(all, `servers "a b" (test) and "a_b" (test)`) {
		t.Errorf("no error naming both servers: %q", msgs)
	}
	if !strings.Contains(all, `tool "x.y" of server "a b" and tool "x_y" of server "a b" are both named mcp__a_b__x_y`) {
		t.Errorf("no error naming both tools: %q", msgs)
	}
	if len(errs) != 2 {
		t.Errorf("%d errors, want 2: %q", len(errs), msgs)
	}
	names := map[string]bool{}
	for _, d := range set.Definitions() {
		if !apiName.MatchString(d.Name) {
			t.Errorf("tool %q does not fit the model APIs' rule", d.Name)
		}
		if names[d.Name] {
			t.Errorf("tool %q mounted twice", d.Name)
		}
		names[d.Name] = true
	}
	if r := call(t, rt, "mcp__a_b__x_y", `{}`); text(r) != "I am x.y" {
		t.Errorf("the first of two colliding tools: %q", text(r))
	}
	long := mcp.ToolName("a b", strings.Repeat("long", 52))
	if r := call(t, rt, long, `{}`); text(r) != "I am "+strings.Repeat("long", 52) {
		t.Errorf("the long-named tool %s: %q", long, text(r))
	}
	if !strings.Contains(logs.String(), "collision") {
		t.Errorf("collisions not logged: %s", logs.String())
	}
}

// A server printing garbage before its replies is tolerated, the lines logged (once,
// one garbage line before the tools/list reply unmounted the whole server).
func TestGarbageBeforeTheReplyIsSkipped(t *testing.T) {
	var logs bytes.Buffer
	o := mcp.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))}
	banner := fakeConfig(t, "banner")
	banner.Env = []string{"DSH_MCP_FAKE=banner"}
	rt, set, errs := mount(t, o, banner)
	if len(errs) > 0 || len(set.Servers()) != 1 {
		t.Fatalf("a banner before initialize unmounted the server: %v", errs)
	}
	if r := call(t, rt, "mcp__banner__noisy", `{}`); r.IsError() || text(r) != "answered" {
		t.Errorf("a stray line before a reply: error=%v %q", r.IsError(), text(r))
	}
	if r := call(t, rt, "mcp__banner__echo", `{"text":"after"}`); text(r) != "echo: after" {
		t.Errorf("after the stray line: %q", text(r))
	}
	for _, want := range []string{"Starting the fake server", "{not json either", "debug: handling noisy"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("skipped line %q not logged:\n%s", want, logs.String())
		}
	}
}

// readOnlyHint counts only for a server the user trusts (once, a tool declaring
// itself read-only skipped the ACP permission prompt).
func TestReadOnlyHintNeedsTrust(t *testing.T) {
	_, untrusted, _ := mount(t, mcp.Options{}, fakeConfig(t, "srv"))
	if untrusted.ReadOnly("mcp__srv__echo") {
		t.Error("readOnlyHint of an untrusted server counted")
	}
	_, trusted, _ := mount(t, mcp.Options{TrustedServers: []string{"srv"}}, fakeConfig(t, "srv"))
	if !trusted.ReadOnly("mcp__srv__echo") || trusted.ReadOnly("mcp__srv__fail") {
		t.Error("readOnlyHint of a trusted server not reported as annotated")
	}
}

// MCP results are capped like Read, with a note (once, a 10 MB result went whole into
// the log and the model's context).
func TestResultsAreCapped(t *testing.T) {
	for _, tt := range []struct {
		max, limit int
	}{{0, mcp.DefaultMaxResultBytes}, {5000, 5000}} {
		rt, _, _ := mount(t, mcp.Options{MaxResultBytes: tt.max}, fakeConfig(t, "srv"))
		r := call(t, rt, "mcp__srv__big", `{}`)
		ok, isOK := r.Outcome.(dsh.ToolSuccess)
		if !isOK {
			t.Fatalf("big: %#v", r.Outcome)
		}
		var v mcp.Value
		if err := json.Unmarshal(ok.Value, &v); err != nil {
			t.Fatal(err)
		}
		size := len(v.StructuredContent)
		for _, c := range v.Content {
			size += len(c)
		}
		if size > tt.limit+300 {
			t.Errorf("cap %d: the value keeps %d bytes", tt.limit, size)
		}
		got := text(r)
		if !strings.HasPrefix(got, "héllo xxx") || !utf8.ValidString(got) {
			t.Errorf("cap %d: the kept text does not start the result: %.40q", tt.limit, got)
		}
		if !strings.Contains(got, "[truncated: the MCP result was 20971") || !strings.Contains(got, "-byte cap") {
			t.Errorf("cap %d: no truncation note: …%q", tt.limit, got[max(0, len(got)-200):])
		}
	}
	// Under the cap, nothing changes.
	rt, _, _ := mount(t, mcp.Options{}, fakeConfig(t, "srv"))
	if r := call(t, rt, "mcp__srv__echo", `{"text":"hi"}`); text(r) != "echo: hi" {
		t.Errorf("small result: %q", text(r))
	}
}
