package builtin

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/dshkit/dsh/runtime/llm"
	"github.com/dshkit/dsh/runtime/tools"
)

func TestToolsetsLoad(t *testing.T) {
	if _, err := Toolsets(); err != nil {
		t.Fatalf("the spec's toolsets: %v", err)
	}
}

func TestToolsetBadRows(t *testing.T) {
	for name, tc := range map[string]struct{ file, want string }{
		"syntax":       {`{"tools": [`, "spec/toolsets/x.json: unexpected end"},
		"no name":      {`{"tools": [{"impl": "bash"}]}`, "spec/toolsets/x.json: tools[0]: no name"},
		"no impl":      {`{"tools": [{"name": "A", "impl": "bash"}, {"name": "B"}]}`, "tools[1] (B): neither impl nor absent"},
		"model's tool": {`{"tools": [{"name": "A", "impl": "bash"}], "models": {"m": {"without": ["B"]}}}`, `models["m"]: no tool "B"`},
		"unknown impl": {`{"tools": [{"name": "A", "impl": "nope"}]}`, `tools[0] (A): unknown impl "nope"`},
		"namespace":    {`{"tools": [{"name": "A", "impl": "bash", "namespace": "ns"}]}`, `tools[0] (A): namespace "ns" has no description in namespaces`},
		"empty refuse": {`{"tools": [{"name": "A", "impl": "bash", "refuse": {}}]}`, `tools[0] (A): refuse: no refusal`},
		"verifier":     {`{"session_reminders": {"verifier": "later"}, "tools": [{"name": "A", "impl": "bash"}]}`, `spec/toolsets/x.json: session_reminders.verifier: "later" is not "after_first_results"`},
		"server key":   {`{"tools": [{"name": "A", "impl": "bash", "refuse": {"unknown_server": "x"}}]}`, `tools[0] (A): refuse: unknown_server and server_key go together`},
		"no required": {`{"tools": [{"name": "A", "impl": "bash", "input_schema": {"type": "object"}, "refuse": {"missing_field": "m"}}]}`,
			`tools[0] (A): refuse: missing_field: the input schema requires no property`},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := loadToolsets(fstest.MapFS{"toolsets/x.json": {Data: []byte(tc.file)}})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tc.want)
			}
		})
	}
	got, err := loadToolsets(fstest.MapFS{"toolsets/x.json": {Data: []byte(`{"dialect": "x", "tools": [{"name": "A", "impl": "bash"}, {"name": "B", "absent": "no"}]}`)}})
	if err != nil || len(got) != 1 || len(got[0].Tools) != 2 {
		t.Fatalf("good file: %v %+v", err, got)
	}
}

// TestGeminiToolsetDefinitions: under StyleGemini the tools are the toolset's rows that
// name an implementation, in its order, each with the row's description and the schema
// exactly as recorded from the engine; the rows dsh does not offer say why.
func TestGeminiToolsetDefinitions(t *testing.T) {
	all, err := Toolsets()
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(all, func(ts Toolset) bool { return ts.Dialect == "gemini" })
	if i < 0 {
		t.Fatal("no gemini toolset")
	}
	defs, err := Definitions(Options{Workspace: t.TempDir(), Style: StyleGemini})
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, r := range all[i].Tools {
		if r.Impl == "" || r.Impl == "agent" {
			continue // absent, or the host's (Options.Agent: invoke_agent, with a subagent runner)
		}
		want = append(want, r.Name)
		d := defs[len(want)-1]
		if d.Name != r.Name || d.Description != r.Description || !bytes.Equal(d.InputSchema, r.InputSchema) {
			t.Errorf("%s: got %s %q %s", r.Name, d.Name, d.Description, d.InputSchema)
		}
		if d.FinalizeContent == nil {
			t.Errorf("%s: failures would read with dsh's \"Error: \"", r.Name)
		}
	}
	if got := len(defs); got != len(want) {
		t.Errorf("%d tools, want %d (%v)", got, len(want), want)
	}
	for _, name := range []string{"run_shell_command", "read_file", "write_file", "replace", "glob", "grep_search", "list_directory", "web_fetch", "write_todos", "update_topic"} {
		if !slices.Contains(want, name) {
			t.Errorf("%s is not offered", name)
		}
	}
}

// TestToolsetModes: Claude Code words claude-opus-5-5's Bash otherwise under
// --permission-mode default (channel/permission): one more paragraph; under another
// mode, or for the recording model, the description is the model's own. A mode's row
// naming a tool the toolset lacks is an error.
func TestToolsetModes(t *testing.T) {
	const important = "- IMPORTANT: Avoid using this tool to run `cat`, `head`"
	bash := func(model, mode string) string {
		t.Helper()
		defs, err := Definitions(Options{Workspace: t.TempDir(), Style: StyleClaudeCode, Model: model, PermissionMode: mode})
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range defs {
			if d.Name == "Bash" {
				return d.Description
			}
		}
		t.Fatal("no Bash")
		return ""
	}
	def, bypass := bash("claude-opus-5-5", "default"), bash("claude-opus-5-5", "bypassPermissions")
	if !strings.Contains(def, important) || strings.Contains(bypass, important) {
		t.Errorf("opus Bash: default has the paragraph %v, bypassPermissions %v; want true, false",
			strings.Contains(def, important), strings.Contains(bypass, important))
	}
	i := strings.Index(def, important)
	if j := strings.Index(def[i:], "\n"); j < 0 || def[:i]+def[i+j+1:] != bypass {
		t.Error("the default mode's Bash differs from bypassPermissions' by more than the paragraph")
	}
	if bash("claude-opus-5-5", "") != bypass {
		t.Error("no mode differs from bypassPermissions")
	}
	if s := bash("claude-sonnet-4-5", "default"); strings.Contains(s, important) {
		t.Error("sonnet's Bash has opus's default-mode paragraph")
	}
	_, err := loadToolsets(fstest.MapFS{"toolsets/x.json": {Data: []byte(`{"tools": [{"name": "A", "impl": "bash"}], "models": {"m": {"modes": {"default": [{"name": "B"}]}}}}`)}})
	if err == nil || !strings.Contains(err.Error(), `models["m"]: no tool "B"`) {
		t.Errorf("a mode's unknown tool: %v", err)
	}
}

// TestCodexAgentRows: the codex toolset's multi_agent_v1 rows are offered with the host's
// functions (Options.Agents), each marked with its namespace (llm.NamespaceKey), and not
// to gpt-5.5, whose toolset is without the namespace; without the host's functions they
// are not offered.
func TestCodexAgentRows(t *testing.T) {
	rows, err := AgentRows(StyleCodex)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	agents := map[string]tools.Definition{}
	for _, r := range rows {
		names = append(names, r.Name)
		agents[r.Name] = tools.Definition{Name: r.Name, Run: func(context.Context, *tools.RunContext) (any, error) { return nil, nil }}
	}
	if want := []string{"close_agent", "resume_agent", "send_input", "spawn_agent", "wait_agent"}; !slices.Equal(names, want) {
		t.Fatalf("agent rows %v, want %v", names, want)
	}
	offered := func(o Options) map[string]json.RawMessage {
		defs, err := Definitions(o)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]json.RawMessage{}
		for _, d := range defs {
			out[d.Name] = d.InputSchema
		}
		return out
	}
	got := offered(Options{Workspace: t.TempDir(), Style: StyleCodex, Agents: agents})
	for _, n := range names {
		var schema map[string]any
		if err := json.Unmarshal(got[n], &schema); err != nil {
			t.Fatalf("%s: %v", n, err)
		}
		ns, _, ok := llm.NamespaceOf(schema)
		if !ok || ns.Name != "multi_agent_v1" || ns.Description != "Tools for spawning and managing sub-agents." {
			t.Errorf("%s: namespace %+v (ok %v)", n, ns, ok)
		}
	}
	if got := offered(Options{Workspace: t.TempDir(), Style: StyleCodex, Agents: agents, Model: "gpt-5.5"}); got["spawn_agent"] != nil {
		t.Error("spawn_agent offered to gpt-5.5")
	}
	if got := offered(Options{Workspace: t.TempDir(), Style: StyleCodex}); got["spawn_agent"] != nil {
		t.Error("spawn_agent offered without the host's functions")
	}
	if hn := HookNames(StyleCodex); hn["wait_agent"] != "multi_agent_v1wait_agent" || hn["spawn_agent"] != "spawn_agent" {
		t.Errorf("hook names %v", hn)
	}
}

// TestCodexSpawnRoles: spawn_agent takes agent_type whether or not the session has roles:
// without, the property is there for validation but marked unoffered (llm.UnofferedKey);
// with, it is offered, its description listing the session's roles by name, then Codex's
// own (default, explorer, worker), a session's role replacing one of the same name
// (measured in codex/subagent-role).
func TestCodexSpawnRoles(t *testing.T) {
	agents := map[string]tools.Definition{"spawn_agent": {Run: func(context.Context, *tools.RunContext) (any, error) { return nil, nil }}}
	spawn := func(roles []AgentRole) map[string]any {
		defs, err := Definitions(Options{Workspace: t.TempDir(), Style: StyleCodex, Agents: agents, AgentRoles: roles})
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range defs {
			if d.Name == "spawn_agent" {
				var m map[string]any
				if err := json.Unmarshal(d.InputSchema, &m); err != nil {
					t.Fatal(err)
				}
				return m
			}
		}
		t.Fatal("no spawn_agent")
		return nil
	}
	none := spawn(nil)
	if u, _ := none[llm.UnofferedKey].([]any); len(u) != 1 || u[0] != "agent_type" || none["properties"].(map[string]any)["agent_type"] == nil {
		t.Errorf("without roles: %v", none)
	}
	with := spawn([]AgentRole{{"zeta", "Z role"}, {"explorer", "My explorer"}, {"alpha", "A role"}})
	if with[llm.UnofferedKey] != nil {
		t.Errorf("with roles: agent_type not offered: %v", with[llm.UnofferedKey])
	}
	desc, _ := with["properties"].(map[string]any)["agent_type"].(map[string]any)["description"].(string)
	_, list, ok := strings.Cut(desc, "Available roles:\n")
	if !ok || !strings.HasPrefix(list, "alpha: {\nA role\n}\nexplorer: {\nMy explorer\n}\nzeta: {\nZ role\n}\ndefault: {\nDefault agent.\n}\nworker: {\nUse for execution") ||
		strings.Count(list, "explorer: {") != 1 || !strings.HasSuffix(list, "\n}") {
		t.Errorf("roles listed:\n%s", list)
	}
	rs, err := RolesOf(StyleCodex)
	if err != nil || rs == nil || rs.Unknown != "unknown agent_type '{type}'" || len(rs.Builtin) != 3 {
		t.Errorf("roles shape %+v %v", rs, err)
	}
}
