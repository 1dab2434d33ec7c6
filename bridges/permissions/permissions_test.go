package permissions

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/generated/hookmap"
	"github.com/dshkit/dsh/runtime/permrule"
)

var table = hookmap.ClaudeCode.Permissions

func write(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func texts(es []permrule.Entry) []string {
	var out []string
	for _, e := range es {
		out = append(out, string(e.Behavior)+" "+e.Rule.Text+" @ "+filepath.Base(e.Source))
	}
	return out
}

// As Claude Code 2.1.328: an untrusted project's allow rules (and defaultMode) are not
// loaded, its deny and ask rules are; a file the user named, or a trusted project's,
// loads whole.
func TestLoadTrust(t *testing.T) {
	dir := t.TempDir()
	project := write(t, dir, ".claude/settings.json", `{"permissions":{"allow":["Bash(touch *)","Write"],"ask":["Edit"],"deny":["Read(./secrets/**)"],"defaultMode":"acceptEdits"}}`)
	named := write(t, dir, "hooks.json", `{"hooks":{},"permissions":{"allow":["Bash(git *)"]}}`)
	srcs := []Source{{Path: project, Project: true}, {Path: named}, {Path: filepath.Join(dir, "absent.json")}}

	s, err := Load(table, srcs, false)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(texts(s.Rules), "; ")
	if want := "ask Edit @ settings.json: permissions.ask[0]; deny Read(./secrets/**) @ settings.json: permissions.deny[0]; allow Bash(git *) @ hooks.json: permissions.allow[0]"; got != want {
		t.Errorf("untrusted rules\n got %s\nwant %s", got, want)
	}
	if s.DefaultMode != "" {
		t.Errorf("an untrusted project set defaultMode %q", s.DefaultMode)
	}
	if len(s.Ignored) != 2 || !strings.Contains(s.Ignored[0], "2 permissions.allow entries") || !strings.Contains(s.Ignored[1], `permissions.defaultMode "acceptEdits"`) {
		t.Errorf("ignored %q", s.Ignored)
	}

	s, err = Load(table, srcs, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Rules) != 5 || s.DefaultMode != "acceptEdits" || s.DefaultModeSource != project || len(s.Ignored) != 0 {
		t.Errorf("trusted: %q, mode %q from %q, ignored %q", texts(s.Rules), s.DefaultMode, s.DefaultModeSource, s.Ignored)
	}
}

// Bad input is an error naming the file, the JSON path and, for a rule, the rule and
// the position of its fault; the good rules of the file still load beside the error.
func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ name, body, want string }{
		{"rule", `{"permissions":{"allow":["Bash(touch *","Write"],"deny":["Edit("]}}`,
			`permissions.allow[0]: permission rule "Bash(touch *": at position 4: an opening parenthesis that never closes`},
		{"deny-rule", `{"permissions":{"deny":["Edit("]}}`, `permissions.deny[0]: permission rule "Edit("`},
		{"list", `{"permissions":{"deny":"Bash"}}`, `permissions.deny: not a list of strings`},
		{"block", `{"permissions":["Bash"]}`, `permissions: not an object`},
		{"mode", `{"permissions":{"defaultMode":"yolo"}}`, `permissions.defaultMode: "yolo" is not a permission mode (want acceptEdits, bypassPermissions, default, dontAsk, plan)`},
		{"json", `{"permissions":`, `not a JSON object`},
		{"auto", `{"permissions":{"defaultMode":"auto"}}`, `permissions.defaultMode: permission mode "auto": dsh does not have it: its calls are decided by a classifier model, which dsh does not have`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := write(t, dir, tc.name+".json", tc.body)
			s, err := Load(table, []Source{{Path: p}}, true)
			if !errors.Is(err, ErrSettings) || !strings.Contains(err.Error(), p+": ") || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want ErrSettings naming %s and %q", err, p, tc.want)
			}
			if tc.name == "rule" && strings.Join(texts(s.Rules), ";") != "allow Write @ rule.json: permissions.allow[1]" {
				t.Errorf("the good rule beside the bad ones: %q", texts(s.Rules))
			}
		})
	}
}

func TestFlagRules(t *testing.T) {
	es, err := FlagRules("--allowedTools", []string{"Bash(git log *),Read", "Edit(src/**) Bash(npm run test:*)"}, permrule.Allow)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(texts(es), "; "); got != "allow Bash(git log *) @ --allowedTools[0]; allow Read @ --allowedTools[1]; allow Edit(src/**) @ --allowedTools[2]; allow Bash(npm run test:*) @ --allowedTools[3]" {
		t.Errorf("rules %s", got)
	}
	if _, err := FlagRules("--disallowedTools", []string{"Bash(rm *"}, permrule.Deny); err == nil || !strings.Contains(err.Error(), `--disallowedTools[0]: permission rule "Bash(rm *"`) {
		t.Errorf("error %v", err)
	}
}

// plugin is the permission plugin of Claude Code's table under mode with rules.
func plugin(t *testing.T, mode string, rules map[permrule.Behavior][]string) (*Plugin, *[]dsh.DecisionRecorded) {
	t.Helper()
	m, err := Mode(table, mode)
	if err != nil {
		t.Fatal(err)
	}
	var all []permrule.Entry
	for b, rs := range rules {
		es, err := permrule.Entries(rs, b, "settings.json")
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, es...)
	}
	var recs []dsh.DecisionRecorded
	return &Plugin{Policy: permrule.Policy{Rules: all, Mode: m, As: table.RulesAs}, Texts: table, Unanswered: table.Modes[mode].Unanswered,
		Env:    permrule.Env{Tools: RuleTable(&hookmap.ClaudeCode), Dir: "/w"},
		Record: func(_ context.Context, r dsh.DecisionRecorded) { recs = append(recs, r) }}, &recs
}

func pre(t *testing.T, p *Plugin, tool string, input map[string]any, downstream dsh.PreToolDecision) dsh.PreToolDecision {
	t.Helper()
	args, _ := json.Marshal(input)
	pl := &dsh.PreToolPayload{Exec: dsh.ToolExecution{CallID: "c1", Name: tool, Arguments: args}}
	d, err := p.preTool(context.Background(), pl, dsh.WaterfallNextFunc(func(context.Context) (dsh.PreToolDecision, error) { return downstream, nil }))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func reason(d dsh.PreToolDecision) string {
	//dshvet:partial an allow or a halt is named by its kind
	switch d := d.(type) {
	case dsh.PreToolDeny:
		return "deny: " + d.Reason
	case dsh.PreToolAsk:
		if d.Reason == nil {
			return "ask"
		}
		return "ask: " + *d.Reason
	}
	return string(d.Kind())
}

// What the model reads of each refusal is Claude Code 2.1.328's, measured headless
// (differential cases permissions/*).
func TestPluginTexts(t *testing.T) {
	bash := map[string]any{"command": "touch ran_1; echo out1"}
	write := map[string]any{"file_path": "/w/w.txt", "content": "x"}
	allow := dsh.PreToolDecision(dsh.PreToolAllow{})
	for _, tc := range []struct {
		name  string
		mode  string
		rules map[permrule.Behavior][]string
		tool  string
		input map[string]any
		want  string
	}{
		{"deny-command", "bypassPermissions", map[permrule.Behavior][]string{permrule.Deny: {"Bash(touch *)"}}, "Bash", bash,
			"deny: Permission to use Bash with command touch ran_1; echo out1 has been denied."},
		{"deny-whole", "bypassPermissions", map[permrule.Behavior][]string{permrule.Deny: {"Write"}}, "Write", write,
			"deny: <tool_use_error>Error: No such tool available: Write. Write is disabled for this session, in subagents as well as here.</tool_use_error>"},
		{"deny-path", "bypassPermissions", map[permrule.Behavior][]string{permrule.Deny: {"Read(./notes.txt)"}}, "Read", map[string]any{"file_path": "/w/notes.txt"},
			"deny: <tool_use_error>File is in a directory that is denied by your permission settings.</tool_use_error>"},
		{"ask-rule", "acceptEdits", map[permrule.Behavior][]string{permrule.Ask: {"Bash(echo *)"}}, "Bash", bash,
			"ask: Claude requested permissions to use Bash, but you haven't granted it yet."},
		{"ask-rule-edit", "default", map[permrule.Behavior][]string{permrule.Ask: {"Edit"}}, "Edit", map[string]any{"file_path": "/w/notes.txt"},
			"ask: Claude requested permissions to use Edit, but you haven't granted it yet."},
		{"ask-rule-write", "default", map[permrule.Behavior][]string{permrule.Ask: {"Write"}}, "Write", write,
			"ask: Claude requested permissions to write to /w/w.txt, but you haven't granted it yet."},
		{"write-path-rule-no-op", "default", map[permrule.Behavior][]string{permrule.Allow: {"Write(w.txt)"}}, "Write", write,
			"ask: Claude requested permissions to write to /w/w.txt, but you haven't granted it yet."},
		{"edit-rule-decides-write", "default", map[permrule.Behavior][]string{permrule.Allow: {"Edit(w.txt)"}}, "Write", write, "allow"},
		{"whole-write-allow", "default", map[permrule.Behavior][]string{permrule.Allow: {"Write"}}, "Write", write, "allow"},
		{"default-write", "default", nil, "Write", write,
			"ask: Claude requested permissions to write to /w/w.txt, but you haven't granted it yet."},
		{"accept-edits-write", "acceptEdits", nil, "Write", write, "allow"},
		{"plan-write", "plan", nil, "Write", write, "deny: Cannot write to /w/w.txt while in plan mode."},
		{"dont-ask", "dontAsk", nil, "Bash", bash, "deny: Permission to use Bash has been denied because Claude Code is running in don't ask mode."},
		{"bypass", "bypassPermissions", nil, "Bash", bash, "allow"},
		{"allow-rule", "default", map[permrule.Behavior][]string{permrule.Allow: {"Bash(touch *)", "Bash(echo *)"}}, "Bash", bash, "allow"},
		{"allow-rule-partial", "default", map[permrule.Behavior][]string{permrule.Allow: {"Bash(touch *)"}}, "Bash", bash,
			"ask: Claude requested permissions to use Bash, but you haven't granted it yet."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, _ := plugin(t, tc.mode, tc.rules)
			if got := reason(pre(t, p, tc.tool, tc.input, allow)); !strings.HasPrefix(got, tc.want) {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}

// A downstream denial stands; a downstream ask keeps its own words; each decision the
// plugin makes is recorded with the rule and where it was written; the guard denies
// what a deny rule matches whatever allowed it.
func TestPluginDownstreamAndRecords(t *testing.T) {
	p, recs := plugin(t, "default", map[permrule.Behavior][]string{permrule.Deny: {"Bash(rm *)"}, permrule.Allow: {"Bash(ls *)"}})
	if got := reason(pre(t, p, "Bash", map[string]any{"command": "ls"}, dsh.PreToolDeny{Reason: "hook says no"})); got != "deny: hook says no" {
		t.Errorf("downstream deny: %q", got)
	}
	why := "please confirm"
	if got := reason(pre(t, p, "Bash", map[string]any{"command": "make"}, dsh.PreToolAsk{Reason: &why})); got != "ask: please confirm" {
		t.Errorf("downstream ask: %q", got)
	}
	pre(t, p, "Bash", map[string]any{"command": "ls -la"}, dsh.PreToolAllow{})
	pre(t, p, "Bash", map[string]any{"command": "rm -rf /"}, dsh.PreToolAllow{})
	var got []string
	for _, r := range *recs {
		got = append(got, r.Point+" "+r.Listener+" "+r.Decision+" "+*r.CallID+": "+*r.Reason)
	}
	want := []string{
		"tools/pre-execute permissions ask c1: permission mode default: ask",
		"tools/pre-execute permissions allow c1: allow rule Bash(ls *) (settings.json[0])",
		"tools/pre-execute permissions deny c1: deny rule Bash(rm *) (settings.json[0])",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("records\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	args, _ := json.Marshal(map[string]any{"command": "rm -rf /"})
	if v, ok := p.guard(context.Background(), &dsh.GuardPayload{Exec: dsh.ToolExecution{CallID: "c2", Name: "Bash", Arguments: args}}).(dsh.GuardDeny); !ok ||
		v.Reason != "Permission to use Bash with command rm -rf / has been denied." {
		t.Errorf("guard: %+v", v)
	}
	args, _ = json.Marshal(map[string]any{"command": "ls"})
	if _, ok := p.guard(context.Background(), &dsh.GuardPayload{Exec: dsh.ToolExecution{Name: "Bash", Arguments: args}}).(dsh.GuardAbstain); !ok {
		t.Error("the guard did not abstain for a call no deny rule matches")
	}
}

// The model reads the engine's text of a refusal the plugin made as it is, without the
// runtime's "Error: " (the result stays a failure); another failure is left alone.
func TestPluginPostTool(t *testing.T) {
	p, _ := plugin(t, "default", nil)
	write := map[string]any{"file_path": "/w/w.txt", "content": "x"}
	pre(t, p, "Write", write, dsh.PreToolAllow{})
	const text = "Claude requested permissions to write to /w/w.txt, but you haven't granted it yet."
	post := func(id, content string) dsh.PostToolDecision {
		pl := &dsh.PostToolPayload{Exec: dsh.ToolExecution{CallID: id, Name: "Write"},
			Result: dsh.ToolFailure{Error: dsh.ToolError{Message: text}, Content: []dsh.ContentBlock{dsh.TextBlock{Text: content}}}}
		d, err := p.postTool(context.Background(), pl, dsh.WaterfallNextFunc(func(context.Context) (dsh.PostToolDecision, error) { return dsh.PostToolAccept{}, nil }))
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	if d, ok := post("c1", "Error: "+text).(dsh.PostToolAccept); !ok || len(d.Content) != 1 || d.Content[0].(dsh.TextBlock).Text != text {
		t.Errorf("the refusal's content: %+v", d)
	}
	// Once only, and only for the text the plugin gave.
	if d := post("c1", "Error: "+text).(dsh.PostToolAccept); d.Content != nil {
		t.Errorf("a second result of c1 was rewritten: %+v", d)
	}
	pre(t, p, "Write", write, dsh.PreToolAllow{})
	if d := post("c1", "Error: the user rejected tool \"Write\"").(dsh.PostToolAccept); d.Content != nil {
		t.Errorf("another failure was rewritten: %+v", d)
	}
}

// A tool a deny rule names whole is left out of every request (an MCP server's rule takes
// its tools); a deny rule with a specifier, or an allow rule, hides nothing. The
// restriction is recorded.
func TestPluginHidesWholeDeniedTools(t *testing.T) {
	tools := []dsh.ModelTool{{Name: "Bash"}, {Name: "Read"}, {Name: "Write"}, {Name: "mcp__fs__read"}, {Name: "mcp__web__get"}}
	for name, tc := range map[string]struct {
		rules map[permrule.Behavior][]string
		want  []string // nil: the request passes
	}{
		"whole":     {map[permrule.Behavior][]string{permrule.Deny: {"Write", "mcp__fs"}}, []string{"Bash", "Read", "mcp__web__get"}},
		"specifier": {map[permrule.Behavior][]string{permrule.Deny: {"Write(secrets/**)", "Bash(rm *)"}}, nil},
		"allow":     {map[permrule.Behavior][]string{permrule.Allow: {"Write"}}, nil},
		"all":       {map[permrule.Behavior][]string{permrule.Deny: {"Bash", "Read", "Write", "mcp__fs__*", "mcp__web__get"}}, []string{}},
	} {
		t.Run(name, func(t *testing.T) {
			p, recs := plugin(t, "bypassPermissions", tc.rules)
			d, err := p.request(context.Background(), &dsh.RequestPayload{Request: dsh.ModelRequest{Tools: tools}})
			if err != nil {
				t.Fatal(err)
			}
			r, restricted := d.(dsh.RequestRestrict)
			switch {
			case tc.want == nil && restricted:
				t.Fatalf("restricted to %v, want pass", r.Allow)
			case tc.want == nil:
				return
			case !restricted:
				t.Fatalf("decision %s, want restrict %v", d.Kind(), tc.want)
			case !slices.Equal(r.Allow, tc.want) || r.Allow == nil:
				t.Errorf("allow %#v, want %#v", r.Allow, tc.want)
			}
			if len(*recs) != 1 || (*recs)[0].Decision != "restrict" || !strings.Contains(*(*recs)[0].Reason, "settings.json") {
				t.Errorf("records %+v", *recs)
			}
		})
	}
	// The table says whether the engine hides them: only then does the plugin listen.
	reg := dsh.NewRegistry()
	p, _ := plugin(t, "bypassPermissions", map[permrule.Behavior][]string{permrule.Deny: {"Write"}})
	unregister := p.Register(reg.Plugin(p.Name()))
	if !reg.Listens(dsh.RequestEventName) {
		t.Error("no agent/request listener under a table that hides whole-denied tools")
	}
	unregister()
	hides := *p.Texts
	hides.WholeDeniedHidden = false
	p.Texts = &hides
	unregister = p.Register(reg.Plugin(p.Name()))
	if reg.Listens(dsh.RequestEventName) {
		t.Error("an agent/request listener under a table that does not hide them")
	}
	unregister()
}
