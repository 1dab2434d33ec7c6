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

	"github.com/dshkit/dsh/generated/dsh"
)

// userPolicies writes the files into home's user policy directory and returns home.
func userPolicies(t *testing.T, files map[string]string) string {
	t.Helper()
	home := t.TempDir()
	dir := filepath.Join(home, ".gemini", "policies")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range files {
		write(t, dir, name, body)
	}
	return home
}

// ranked loads the user policy files and ranks them with the settings' lists.
func ranked(t *testing.T, s Settings, files map[string]string) *Ranked {
	t.Helper()
	pol, err := LoadPolicies(table, userPolicies(t, files), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return Rank(table, s, pol.Rules)
}

func args(kv ...string) json.RawMessage {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	b, _ := json.Marshal(m)
	return b
}

// As Gemini CLI 0.61.0 loads them: the files of ~/.gemini/policies in name order, each
// rule expanded per tool name and command prefix, ranked 4 + priority/1000, an MCP rule's
// tool named mcp_<server>_<tool>, the source naming the tier and the file.
func TestLoadPolicies(t *testing.T) {
	home := userPolicies(t, map[string]string{
		"b.toml": "[[rule]]\ntoolName = [\"glob\", \"read_file\"]\ndecision = \"deny\"\npriority = 5\n",
		"a.toml": "[[rule]]\ntoolName = \"run_shell_command\"\ncommandPrefix = [\"git log\", \"ls\"]\ndecision = \"allow\"\npriority = 500\n\n" +
			"[[rule]]\nmcpName = \"hk\"\ntoolName = \"hook\"\ndecision = \"ask_user\"\npriority = 0\ndeny_message = \"old\"\ndenyMessage = \"new\"\n",
		"notes.txt": "not a policy file",
	})
	pol, err := LoadPolicies(table, home, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range pol.Rules {
		s := r.Tool + " " + r.Decision + " " + r.Source
		if r.Args != nil {
			s += " /" + r.Args.String() + "/"
		}
		got = append(got, s)
	}
	want := []string{
		`run_shell_command allow User: a.toml /"command":"git log(?:[\s"]|\\")/`,
		`run_shell_command allow User: a.toml /"command":"ls(?:[\s"]|\\")/`,
		"mcp_hk_hook ask_user User: a.toml",
		"glob deny User: b.toml",
		"read_file deny User: b.toml",
	}
	if !slices.Equal(got, want) {
		t.Errorf("rules\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(pol.Rules) == 5 && (pol.Rules[0].Priority != 4.5 || pol.Rules[2].Priority != 4 || pol.Rules[3].Priority != 4.005 || pol.Rules[2].Message != "new") {
		t.Errorf("priorities or message: %+v", pol.Rules)
	}
	if pol, err := LoadPolicies(table, t.TempDir(), t.TempDir()); err != nil || len(pol.Rules) != 0 {
		t.Errorf("no policy directory: %+v, %v", pol, err)
	}
}

// A malformed file or rule is an error naming the file and the rule, also beside a good
// file: dsh never runs without a rule the user wrote (the engine skips such a file).
func TestLoadPoliciesErrors(t *testing.T) {
	for body, want := range map[string]string{
		"[[rule]]\ntoolName = \"glob\"\ndecision = \"deny\"\n":                                                                         "rule #1: priority: <nil> is not an integer from 0 to 999",
		"[[rule]\ntoolName = 1":                                                                                                        "bad.toml:1:",
		"[[rule]]\ntoolName = \"glob\"\ndecision = \"block\"\npriority = 1\n":                                                          "rule #1: decision: block is not allow, deny or ask_user",
		"[[rule]]\ntoolName = \"glob\"\ndecision = \"deny\"\npriority = 1000\n":                                                        "priority: 1000 is not an integer from 0 to 999",
		"[[rule]]\ntoolName = \"glob\"\ndecision = \"deny\"\npriority = 1.5\n":                                                         "priority: 1.5 is not an integer",
		"[[rule]]\ntoolName = \"\"\ndecision = \"deny\"\npriority = 1\n":                                                               "toolName: empty",
		"[[rule]]\ndecision = \"deny\"\npriority = 1\n":                                                                                "toolName: required",
		"[[rule]]\ntoolName = \"glob\"\ncommandPrefix = \"ls\"\ndecision = \"deny\"\npriority = 1\n":                                   `commandPrefix and commandRegex need toolName = "run_shell_command"`,
		"[[rule]]\ntoolName = \"run_shell_command\"\ncommandPrefix = \"ls\"\nargsPattern = \"x\"\ndecision = \"deny\"\npriority = 1\n": "one of them only",
		"[[rule]]\ntoolName = \"glob\"\ncomandPrefix = \"ls\"\ndecision = \"deny\"\npriority = 1\n":                                    "comandPrefix: not a field of a rule",
		"[[rule]]\ntoolName = \"glob\"\ntoolAnnotations = { readOnlyHint = true }\ndecision = \"deny\"\npriority = 1\n":                "toolAnnotations: dsh does not match a rule on it",
		"[[rule]]\ntoolName = \"glob\"\nargsPattern = \"(?=x)\"\ndecision = \"deny\"\npriority = 1\n":                                  "dsh cannot run it (RE2 syntax",
		"[[rule]]\ntoolName = \"glob\"\nmodes = [\"sometimes\"]\ndecision = \"deny\"\npriority = 1\n":                                  `modes: "sometimes" is not one of`,
		"[[safety_checker]]\ntoolName = \"*\"\npriority = 1\n":                                                                         "safety_checker: dsh does not run the engine's safety checkers",
		"rule = \"glob\"\n": "rule: not an array of tables",
	} {
		home := userPolicies(t, map[string]string{"bad.toml": body, "good.toml": "[[rule]]\ntoolName = \"glob\"\ndecision = \"deny\"\npriority = 1\n"})
		path := filepath.Join(home, ".gemini", "policies", "bad.toml")
		_, err := LoadPolicies(table, home, t.TempDir())
		if !errors.Is(err, ErrPolicy) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want one naming %s and %q", body, err, path, want)
		}
	}
}

// The admin directory is read only when root owns it and neither group nor others may
// write it; otherwise it is skipped with a notice, as the engine skips it.
func TestLoadPoliciesAdmin(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "etc", "gemini-cli", "policies")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, dir, "admin.toml", "[[rule]]\ntoolName = \"glob\"\ndecision = \"deny\"\npriority = 0\n")
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	pol, err := LoadPolicies(table, t.TempDir(), root)
	if err != nil || len(pol.Rules) != 0 || len(pol.Skipped) != 1 || !strings.Contains(pol.Skipped[0], "writable by group or others") {
		t.Fatalf("a writable admin directory: %+v, %v", pol, err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	pol, err = LoadPolicies(table, t.TempDir(), root)
	if err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() == 0 { // the directory is root's
		if len(pol.Rules) != 1 || pol.Rules[0].Priority != 5 || pol.Rules[0].Source != "Admin: admin.toml" {
			t.Errorf("root's admin directory: %+v", pol)
		}
	} else if len(pol.Rules) != 0 || len(pol.Skipped) != 1 || !strings.Contains(pol.Skipped[0], "not owned by root") {
		t.Errorf("another user's admin directory: %+v", pol)
	}
}

// Precedence as the engine's: the highest priority first, of equal ones the first loaded;
// a shell call an allow rule matches is decided again per simple command; a tool the
// settings' lists take out stays out whatever a rule says.
func TestRankDecides(t *testing.T) {
	sh := "run_shell_command"
	type call struct {
		tool string
		args json.RawMessage
		want string
	}
	for name, tc := range map[string]struct {
		settings Settings
		files    map[string]string
		calls    []call
		hidden   []string
	}{
		"allow over a lower deny": {files: map[string]string{"p.toml": "[[rule]]\ntoolName = \"run_shell_command\"\ndecision = \"deny\"\npriority = 100\n\n" +
			"[[rule]]\ntoolName = \"run_shell_command\"\ncommandPrefix = \"echo\"\ndecision = \"allow\"\npriority = 200\n"},
			calls: []call{{sh, args("command", "echo hi"), Allow}, {sh, args("command", "touch x"), Deny}, {sh, args("command", "echo a && touch b"), Deny},
				{sh, args("command", "echoes"), Deny}, {sh, args("command", "echo a | echo b"), Allow}}},
		"deny by prefix": {files: map[string]string{"p.toml": "[[rule]]\ntoolName = \"run_shell_command\"\ncommandPrefix = \"rm\"\ndecision = \"deny\"\npriority = 100\n"},
			calls: []call{{sh, args("command", "touch a && rm b"), Deny}, {sh, args("command", "rm -f x"), Deny}, {sh, args("command", "touch y"), Allow},
				{sh, args("command", "rmdir y"), Allow}}},
		"deny by name and pattern": {files: map[string]string{"p.toml": "[[rule]]\ntoolName = \"glob\"\ndecision = \"deny\"\npriority = 100\n\n" +
			"[[rule]]\ntoolName = \"read_file\"\nargsPattern = '\"file_path\":\"[^\"]*secret'\ndecision = \"deny\"\npriority = 100\n"},
			hidden: []string{"glob"},
			calls:  []call{{"glob", args("pattern", "*"), Deny}, {"read_file", args("file_path", "secret.txt"), Deny}, {"read_file", args("file_path", "a.txt"), Allow}}},
		"exclude over a higher allow": {settings: Settings{Exclude: []Entry{{Tool: "glob", Source: "s.json: tools.exclude"}}},
			files:  map[string]string{"p.toml": "[[rule]]\ntoolName = \"glob\"\ndecision = \"allow\"\npriority = 999\n"},
			hidden: []string{"glob"}, calls: []call{{"glob", args(), Deny}}},
		"a user deny over core (4.3 > 4.25)": {settings: Settings{Core: []Entry{{Tool: "read_file"}, {Tool: "glob"}}, CoreSource: "s.json: tools.core"},
			files:  map[string]string{"p.toml": "[[rule]]\ntoolName = \"read_file\"\ndecision = \"deny\"\npriority = 300\n\n[[rule]]\ntoolName = \"glob\"\ndecision = \"deny\"\npriority = 200\n"},
			hidden: []string{"read_file", "list_directory", "write_file", "run_shell_command", "mcp_hk_hook", "mcp_db_query", "mcp_hk_other"}, calls: []call{{"read_file", args(), Deny}, {"glob", args(), Allow}, {"list_directory", args(), Deny}}},
		"equal priority: the first loaded": {files: map[string]string{"a.toml": "[[rule]]\ntoolName = \"glob\"\ndecision = \"allow\"\npriority = 7\n",
			"b.toml": "[[rule]]\ntoolName = \"glob\"\ndecision = \"deny\"\npriority = 7\n\n[[rule]]\ntoolName = \"read_file\"\ndecision = \"deny\"\npriority = 7\n\n[[rule]]\ntoolName = \"read_file\"\ndecision = \"allow\"\npriority = 7\n"},
			hidden: []string{"read_file"}, calls: []call{{"glob", args(), Allow}, {"read_file", args(), Deny}}},
		"modes and interactive": {files: map[string]string{"p.toml": "[[rule]]\ntoolName = \"glob\"\ndecision = \"deny\"\npriority = 1\nmodes = [\"plan\"]\n\n" +
			"[[rule]]\ntoolName = \"read_file\"\ndecision = \"deny\"\npriority = 1\nmodes = [\"yolo\"]\n\n" +
			"[[rule]]\ntoolName = \"list_directory\"\ndecision = \"deny\"\npriority = 1\ninteractive = true\n\n" +
			"[[rule]]\ntoolName = \"write_file\"\ndecision = \"deny\"\npriority = 1\ninteractive = false\n"},
			hidden: []string{"read_file", "write_file"},
			calls:  []call{{"glob", args(), Allow}, {"read_file", args(), Deny}, {"list_directory", args(), Allow}, {"write_file", args(), Deny}}},
		"mcp": {files: map[string]string{"p.toml": "[[rule]]\nmcpName = \"hk\"\ntoolName = \"hook\"\ndecision = \"deny\"\npriority = 1\n\n" +
			"[[rule]]\nmcpName = \"db\"\ntoolName = \"*\"\ndecision = \"deny\"\npriority = 1\n\n[[rule]]\ntoolName = \"mcp_*\"\ndecision = \"ask_user\"\npriority = 0\n"},
			hidden: []string{"mcp_hk_hook", "mcp_db_query"},
			calls:  []call{{"mcp_hk_hook", args(), Deny}, {"mcp_db_query", args(), Deny}, {"mcp_hk_other", args(), Ask}, {"glob", args(), Allow}}},
		"ask": {files: map[string]string{"p.toml": "[[rule]]\ntoolName = \"run_shell_command\"\ncommandPrefix = \"touch\"\ndecision = \"ask_user\"\npriority = 1\n"},
			calls: []call{{sh, args("command", "touch a"), Ask}, {sh, args("command", "echo a && touch b"), Ask}, {sh, args("command", "echo a"), Allow}}},
	} {
		t.Run(name, func(t *testing.T) {
			k := ranked(t, tc.settings, tc.files)
			for _, c := range tc.calls {
				if v := k.Check(c.tool, c.args); v.Decision != c.want {
					t.Errorf("%s %s: %s (%+v), want %s", c.tool, c.args, v.Decision, v.Rule, c.want)
				}
			}
			for _, tool := range []string{"glob", "read_file", "list_directory", "write_file", sh, "mcp_hk_hook", "mcp_db_query", "mcp_hk_other"} {
				if ok, _ := k.Offered(tool); ok == slices.Contains(tc.hidden, tool) {
					t.Errorf("%s offered: %v", tool, ok)
				}
			}
		})
	}
}

// The model reads the engine's words: a denial, with the rule's message when it has one,
// and an ask no one answers with the tool's display name.
func TestTexts(t *testing.T) {
	k := ranked(t, Settings{}, map[string]string{"p.toml": "[[rule]]\ntoolName = \"read_file\"\ndecision = \"deny\"\npriority = 1\ndenyMessage = \"No secrets.\"\n\n" +
		"[[rule]]\ntoolName = [\"list_directory\", \"mcp_hk_hook\"]\ndecision = \"ask_user\"\npriority = 1\n\n[[rule]]\ntoolName = \"glob\"\ndecision = \"deny\"\npriority = 1\n"})
	for tool, want := range map[string]string{
		"read_file":      "Tool execution denied by policy. No secrets.",
		"glob":           "Tool execution denied by policy.",
		"list_directory": `Tool execution for "ReadFolder" requires user confirmation, which is not supported in non-interactive mode.`,
		"mcp_hk_hook":    `Tool execution for "mcp_hk_hook" requires user confirmation, which is not supported in non-interactive mode.`,
	} {
		if got := k.Text(tool, k.Check(tool, args())); got != want {
			t.Errorf("%s: %q, want %q", tool, got, want)
		}
	}
}

// An ask no one answers is refused at the gate with the engine's words, and recorded.
func TestGateAsk(t *testing.T) {
	pol, err := LoadPolicies(table, userPolicies(t, map[string]string{"p.toml": "[[rule]]\ntoolName = \"list_directory\"\ndecision = \"ask_user\"\npriority = 1\n"}), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var recs []dsh.DecisionRecorded
	p := &Plugin{Table: table, Policies: pol.Rules, Record: func(_ context.Context, r dsh.DecisionRecorded) { recs = append(recs, r) }}
	pl := &dsh.PreToolPayload{Exec: dsh.ToolExecution{CallID: "c1", Name: "list_directory", Arguments: args("dir_path", ".")}}
	d, err := p.preTool(context.Background(), pl, dsh.WaterfallNextFunc(func(context.Context) (dsh.PreToolDecision, error) { return dsh.PreToolAllow{}, nil }))
	if err != nil {
		t.Fatal(err)
	}
	if deny, ok := d.(dsh.PreToolDeny); !ok || !strings.HasPrefix(deny.Reason, `Tool execution for "ReadFolder" requires user confirmation`) {
		t.Errorf("decision %+v", d)
	}
	if len(recs) != 1 || !strings.Contains(*recs[0].Reason, "asks for confirmation (User: p.toml)") {
		t.Errorf("records %+v", recs)
	}
	req := &dsh.RequestPayload{Request: dsh.ModelRequest{Tools: []dsh.ModelTool{{Name: "list_directory"}}}}
	if d, _ := p.request(context.Background(), req); d.Kind() != dsh.RequestPassKind {
		t.Errorf("an ask_user rule hid the tool: %s", d.Kind())
	}
}

// The arguments as the engine writes them for a pattern: keys sorted, JavaScript's
// escapes, top-level pairs between NUL bytes.
func TestStableArgs(t *testing.T) {
	got, err := StableArgs(json.RawMessage(`{"b":1.0,"a":"x\ny\u00e9<&>","c":{"z":1e2,"y":[true,null,"\u2028"]}}`))
	if err != nil {
		t.Fatal(err)
	}
	want := "{\x00\"a\":\"x\\nyé<&>\"\x00,\x00\"b\":1\x00,\x00\"c\":{\"y\":[true,null,\"\u2028\"],\"z\":100}\x00}"
	if got != want {
		t.Errorf("%q, want %q", got, want)
	}
}
