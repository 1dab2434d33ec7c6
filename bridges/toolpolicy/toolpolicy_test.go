package toolpolicy

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dshkit/dsh/bridges/gemini"
	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/generated/hookmap"
)

// table is the gemini dialect's row.
var table = gemini.Descriptor().ToolPolicy

func write(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func tools(es []Entry) []string {
	var out []string
	for _, e := range es {
		s := e.Tool
		if e.Narrow {
			s += "(" + e.Prefix + ")"
		}
		out = append(out, s+" @ "+filepath.Base(strings.SplitN(e.Source, ":", 2)[0]))
	}
	return out
}

// As Gemini CLI 0.61.0 merges its settings files: exclude lists add up, a later core list
// replaces an earlier one; a file without the block, or a missing file, changes nothing.
func TestLoadMerges(t *testing.T) {
	dir := t.TempDir()
	user := write(t, dir, "user.json", `{"tools":{"exclude":["glob"],"core":["read_file","glob"]}}`)
	none := write(t, dir, "none.json", `{"hooks":{}}`)
	project := write(t, dir, "project.json", `{"tools":{"exclude":["web_fetch"],"core":["list_directory","run_shell_command(git log)"]}}`)
	s, err := Load(table, []Source{{Path: user}, {Path: none}, {Path: filepath.Join(dir, "absent.json")}, {Path: project, Project: true}}, true)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := tools(s.Exclude), []string{"glob @ user.json", "web_fetch @ project.json"}; !slices.Equal(got, want) {
		t.Errorf("exclude %v, want %v", got, want)
	}
	if got, want := tools(s.Core), []string{"list_directory @ project.json", "run_shell_command(git log) @ project.json"}; !slices.Equal(got, want) {
		t.Errorf("core %v, want %v", got, want)
	}
	if s, _ := Load(table, []Source{{Path: none}}, true); !s.Empty() || s.Core != nil {
		t.Errorf("no lists: %+v", s)
	}
	// An empty core list is set: it offers nothing.
	if s, _ := Load(table, []Source{{Path: write(t, dir, "empty.json", `{"tools":{"core":[]}}`)}}, true); s.Core == nil || s.Empty() {
		t.Errorf("an empty core list was not kept: %+v", s)
	}
}

// An untrusted project's core list, which could widen the user's, is not loaded (and
// said); its exclude list is.
func TestLoadUntrusted(t *testing.T) {
	dir := t.TempDir()
	user := write(t, dir, "user.json", `{"tools":{"core":["read_file"]}}`)
	project := write(t, dir, "project.json", `{"tools":{"exclude":["glob"],"core":["read_file","run_shell_command"]}}`)
	s, err := Load(table, []Source{{Path: user}, {Path: project, Project: true}}, false)
	if err != nil {
		t.Fatal(err)
	}
	if got := tools(s.Core); !slices.Equal(got, []string{"read_file @ user.json"}) {
		t.Errorf("core %v, want the user's", got)
	}
	if got := tools(s.Exclude); !slices.Equal(got, []string{"glob @ project.json"}) {
		t.Errorf("exclude %v", got)
	}
	if len(s.Ignored) != 1 || !strings.Contains(s.Ignored[0], project+": tools.core") {
		t.Errorf("ignored %v", s.Ignored)
	}
}

// A malformed file, block or list is an error naming the file and the field.
func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	for body, want := range map[string]string{
		`{"tools":`:                            "not a JSON object",
		`{"tools":["glob"]}`:                   "tools: not an object",
		`{"tools":{"exclude":"glob"}}`:         "tools.exclude: not a list of strings",
		`{"tools":{"core":["ls",1]}}`:          "tools.core: not a list of strings",
		`{"tools":{"core":{"ls":true}}}`:       "tools.core: not a list of strings",
		`{"tools":{"exclude":[null, "glob"]}}`: "tools.exclude: not a list of strings",
		// Restricting settings dsh does not honour are refused, never left out.
		`{"mcp":{"excluded":["hk"]}}`:                 "mcp.excluded is set",
		`{"policyPaths":["/etc/p.toml"]}`:             "policyPaths is set",
		`{"tools":{"confirmationRequired":["glob"]}}`: "tools.confirmationRequired is set",
	} {
		p := write(t, dir, "bad.json", body)
		_, err := Load(table, []Source{{Path: p}}, true)
		if !errors.Is(err, ErrSettings) || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want one naming %s and %q", body, err, p, want)
		}
	}
	// A permissive or unset one is not refused.
	for _, body := range []string{`{"mcp":{"excluded":null}}`, `{"tools":{"allowed":["glob"]}}`, `{"mcp":{"serverCommand":"x"}}`} {
		if _, err := Load(table, []Source{{Path: write(t, dir, "ok.json", body)}}, true); err != nil {
			t.Errorf("%s: %v", body, err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "dir.json"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(table, []Source{{Path: filepath.Join(dir, "dir.json")}}, true); !errors.Is(err, ErrSettings) {
		t.Errorf("an unreadable file: %v", err)
	}
}

func plugin(core, exclude []string) (*Plugin, *[]dsh.DecisionRecorded) {
	var s Settings
	s.Core = nil
	if core != nil {
		s.Core, s.CoreSource = []Entry{}, "settings.json: tools.core"
		for _, c := range core {
			e := Entry{Tool: c, Source: "settings.json: tools.core"}
			if m := entryRE.FindStringSubmatch(c); m != nil {
				e.Tool, e.Prefix, e.Narrow = m[1], m[2], true
			}
			s.Core = append(s.Core, e)
		}
	}
	for _, x := range exclude {
		s.Exclude = append(s.Exclude, Entry{Tool: x, Source: "settings.json: tools.exclude"})
	}
	var recs []dsh.DecisionRecorded
	return &Plugin{Table: table, Settings: s, Record: func(_ context.Context, r dsh.DecisionRecorded) { recs = append(recs, r) }}, &recs
}

func shell(cmd string) json.RawMessage {
	b, _ := json.Marshal(map[string]string{"command": cmd})
	return b
}

// A core entry run_shell_command(PREFIX) allows a command that, whole and each of its
// simple commands, starts with PREFIX followed by a blank, a quote or the end; a command
// dsh cannot split is denied (fail closed).
func TestDecideShellPrefix(t *testing.T) {
	p, _ := plugin([]string{"list_directory", "run_shell_command(echo)", "run_shell_command(git log)"}, nil)
	for cmd, want := range map[string]bool{
		"echo hi":                 true,
		"echo":                    true,
		`echo "hi"`:               true,
		"echo a | echo b":         true,
		"echo a && git log -1":    true,
		"git log":                 true,
		"echo hi; touch ran_1":    false,
		"echo a && touch ran_1":   false,
		"echo $(touch ran_1)":     false,
		"touch ran_1":             false,
		"echoes":                  false,
		"git logx":                false,
		"git status":              false,
		"if true; then echo; fi":  false,
		"":                        false,
		"touch x && echo hi":      false,
		"echo hi | tee /tmp/leak": false,
	} {
		if ok, why := p.Decide("run_shell_command", shell(cmd)); ok != want {
			t.Errorf("%q: allowed %v (%s), want %v", cmd, ok, why, want)
		}
	}
	if ok, _ := p.Decide("run_shell_command", json.RawMessage(`{"dir_path":"."}`)); ok {
		t.Error("a call without a command was allowed")
	}
	// The tool named whole allows any command.
	p, _ = plugin([]string{"run_shell_command"}, nil)
	if ok, why := p.Decide("run_shell_command", shell("touch x && rm -rf y")); !ok {
		t.Errorf("core names the shell whole, yet: %s", why)
	}
	// No core list: the shell runs anything not excluded.
	p, _ = plugin(nil, []string{"glob"})
	if ok, why := p.Decide("run_shell_command", shell("touch x")); !ok {
		t.Errorf("no core list, yet: %s", why)
	}
}

// An excluded tool, or one a core list does not name, is denied; exclude wins over core.
func TestDecideTools(t *testing.T) {
	p, _ := plugin([]string{"list_directory", "glob"}, []string{"glob"})
	for tool, want := range map[string]bool{"list_directory": true, "glob": false, "read_file": false} {
		if ok, why := p.Decide(tool, json.RawMessage(`{}`)); ok != want {
			t.Errorf("%s: allowed %v (%s), want %v", tool, ok, why, want)
		}
	}
}

// The tools the settings do not offer are left out of the request; the restriction is
// recorded. Settings that leave every tool pass.
func TestRequest(t *testing.T) {
	req := &dsh.RequestPayload{Request: dsh.ModelRequest{Tools: []dsh.ModelTool{{Name: "glob"}, {Name: "list_directory"}, {Name: "run_shell_command"}, {Name: "read_file"}}}}
	for name, tc := range map[string]struct {
		core, exclude, want []string
	}{
		"exclude":      {nil, []string{"glob", "run_shell_command"}, []string{"glob", "run_shell_command"}},
		"core":         {[]string{"list_directory", "run_shell_command(echo)"}, nil, []string{"glob", "read_file"}},
		"core-exclude": {[]string{"list_directory", "glob"}, []string{"glob"}, []string{"glob", "run_shell_command", "read_file"}},
		"empty-core":   {[]string{}, nil, []string{"glob", "list_directory", "run_shell_command", "read_file"}},
	} {
		t.Run(name, func(t *testing.T) {
			p, recs := plugin(tc.core, tc.exclude)
			d, err := p.request(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			r, ok := d.(dsh.RequestRestrict)
			if !ok {
				t.Fatalf("decision %s, want restrict", d.Kind())
			}
			var want []string
			for _, tl := range req.Request.Tools {
				if !slices.Contains(tc.want, tl.Name) {
					want = append(want, tl.Name)
				}
			}
			if want == nil {
				want = []string{}
			}
			if !slices.Equal(r.Allow, want) || r.Allow == nil {
				t.Errorf("allow %#v, want %#v", r.Allow, want)
			}
			if len(*recs) != 1 || (*recs)[0].Decision != "restrict" || (*recs)[0].Listener != "tool-settings" {
				t.Errorf("records %+v", *recs)
			}
		})
	}
	p, _ := plugin(nil, []string{"web_fetch"})
	if d, _ := p.request(context.Background(), req); d.Kind() != dsh.RequestPassKind {
		t.Errorf("nothing hidden, yet %s", d.Kind())
	}
}

// At the tool gate the hooks decide first (as BeforeTool runs before the engine's policy):
// their denial stands; else a call the settings do not allow is denied with the engine's
// text, recorded, and the model reads the text without "Error: ". The guard denies it
// again whatever allowed it.
func TestGate(t *testing.T) {
	p, recs := plugin([]string{"run_shell_command(echo)"}, []string{"glob"})
	ran := 0
	pre := func(id, tool string, args json.RawMessage, downstream dsh.PreToolDecision) dsh.PreToolDecision {
		pl := &dsh.PreToolPayload{Exec: dsh.ToolExecution{CallID: id, Name: tool, Arguments: args}}
		d, err := p.preTool(context.Background(), pl, dsh.WaterfallNextFunc(func(context.Context) (dsh.PreToolDecision, error) { ran++; return downstream, nil }))
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	const denied = "Tool execution denied by policy."
	if d, ok := pre("c1", "run_shell_command", shell("touch ran_1"), dsh.PreToolAllow{}).(dsh.PreToolDeny); !ok || d.Reason != denied || ran != 1 {
		t.Errorf("touch: %+v (hooks ran %d)", d, ran)
	}
	if d, ok := pre("c2", "glob", json.RawMessage(`{"pattern":"*"}`), dsh.PreToolAllow{}).(dsh.PreToolDeny); !ok || d.Reason != denied {
		t.Errorf("excluded glob: %+v", d)
	}
	if d := pre("c3", "run_shell_command", shell("echo hi"), dsh.PreToolAllow{}); d.Kind() != dsh.PreToolAllowKind {
		t.Errorf("echo hi: %s", d.Kind())
	}
	if d, ok := pre("c4", "run_shell_command", shell("touch x"), dsh.PreToolDeny{Reason: "hook says no"}).(dsh.PreToolDeny); !ok || d.Reason != "hook says no" {
		t.Errorf("a hook's denial: %+v", d)
	}
	if len(*recs) != 2 || (*recs)[0].Decision != "deny" || *(*recs)[0].CallID != "c1" || !strings.Contains(*(*recs)[1].Reason, "excluded by settings.json: tools.exclude") {
		t.Errorf("records %+v", *recs)
	}
	post := func(id, content string) dsh.PostToolDecision {
		pl := &dsh.PostToolPayload{Exec: dsh.ToolExecution{CallID: id}, Result: dsh.ToolFailure{Error: dsh.ToolError{Message: denied}, Content: []dsh.ContentBlock{dsh.TextBlock{Text: content}}}}
		d, err := p.postTool(context.Background(), pl, dsh.WaterfallNextFunc(func(context.Context) (dsh.PostToolDecision, error) { return dsh.PostToolAccept{}, nil }))
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	if d, ok := post("c1", "Error: "+denied).(dsh.PostToolAccept); !ok || len(d.Content) != 1 || d.Content[0].(dsh.TextBlock).Text != denied {
		t.Errorf("the denial's content: %+v", d)
	}
	if d := post("c3", "Error: "+denied).(dsh.PostToolAccept); d.Content != nil {
		t.Errorf("a call the plugin did not deny was rewritten: %+v", d)
	}
	if v, ok := p.guard(context.Background(), &dsh.GuardPayload{Exec: dsh.ToolExecution{CallID: "c5", Name: "run_shell_command", Arguments: shell("rm -rf x")}}).(dsh.GuardDeny); !ok || v.Reason != denied {
		t.Errorf("guard: %+v", v)
	}
	if _, ok := p.guard(context.Background(), &dsh.GuardPayload{Exec: dsh.ToolExecution{Name: "run_shell_command", Arguments: shell("echo ok")}}).(dsh.GuardAbstain); !ok {
		t.Error("the guard did not abstain for an allowed call")
	}
}

// The dialect's row is the generated table's, with the engine's keys, texts and ranks.
func TestTable(t *testing.T) {
	if table == nil || table != hookmap.Gemini.ToolPolicy {
		t.Fatalf("gemini's row %p is not the generated table's", table)
	}
	if table.Key != "tools" || table.Core != "core" || table.Exclude != "exclude" || !slices.Equal(table.Shell, []string{"run_shell_command"}) ||
		table.Denied != "Tool execution denied by policy." || table.ExcludePriority <= table.CorePriority || table.CorePriority <= table.CoreOthersPriority {
		t.Errorf("gemini's row %+v", table)
	}
}
