package permrule

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
)

// claude is Claude Code's table as spec/bridges/claudecode.cue states it (ruleTools).
var claude = Table{
	"Bash":         {Field: "command", Kind: KindCommand},
	"Read":         {Field: "file_path", Kind: KindPath},
	"Write":        {Field: "file_path", Kind: KindPath},
	"Edit":         {Field: "file_path", Kind: KindPath},
	"NotebookEdit": {Field: "notebook_path", Kind: KindPath},
	"Glob":         {Field: "pattern", Kind: KindGlob},
	"Grep":         {Field: "pattern", Kind: KindGlob},
	"WebFetch":     {Field: "url", Kind: KindDomain},
	"Agent":        {Field: "subagent_type", Kind: KindExact},
}

var env = Env{Tools: claude, Dir: "/work/proj", Home: "/home/alice", Root: "/work/proj"}

func call(tool, field, value string) Call {
	in, _ := json.Marshal(map[string]string{field: value})
	return Call{Tool: tool, Input: in}
}

func bash(cmd string) Call { return call("Bash", "command", cmd) }

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		text, tool, spec string
	}{
		{"Bash", "Bash", ""},
		{"Bash()", "Bash", ""},
		{"Bash(*)", "Bash", ""},
		{"Bash(git *)", "Bash", "git *"},
		{"Bash(npm run test:*)", "Bash", "npm run test:*"},
		{`Bash(echo \(hi\))`, "Bash", "echo (hi)"},
		{`Bash(printf a\\b)`, "Bash", `printf a\b`},
		{"Read(./secrets/**)", "Read", "./secrets/**"},
		{"WebFetch(domain:example.com)", "WebFetch", "domain:example.com"},
		{"mcp__server__*", "mcp__server__*", ""},
		{"mcp__puppeteer__puppeteer_navigate", "mcp__puppeteer__puppeteer_navigate", ""},
	} {
		r, err := Parse(tc.text)
		if err != nil {
			t.Errorf("Parse(%q): %v", tc.text, err)
			continue
		}
		if r.Tool != tc.tool || r.Specifier != tc.spec || r.Text != tc.text || r.Whole() != (tc.spec == "") {
			t.Errorf("Parse(%q) = %+v, want tool %q specifier %q", tc.text, r, tc.tool, tc.spec)
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct {
		text string
		pos  int
		msg  string
	}{
		{"Bash(git *", 4, "never closes"},
		{"Bash git *)", 10, "without an opening"},
		{"Bash(a)b", 7, "text after"},
		{"(git status)", 0, "no tool name"},
		{"", 0, "empty"},
		{" Bash", 0, "white space"},
		{"Ba sh(x)", 2, "tool name"},
		{"Bash(a(b)", 6, `unescaped "("`},
		{"Bash(a)b)", 6, `unescaped ")"`},
		{`Bash\(x`, 5, "escaped parenthesis"},
	} {
		_, err := Parse(tc.text)
		var pe *ParseError
		if !errors.As(err, &pe) {
			t.Errorf("Parse(%q): err %v, want a *ParseError", tc.text, err)
			continue
		}
		if pe.Rule != tc.text || pe.Pos != tc.pos || !strings.Contains(pe.Msg, tc.msg) || !strings.Contains(err.Error(), strconv.Quote(tc.text)) {
			t.Errorf("Parse(%q): %v (pos %d), want pos %d and %q", tc.text, err, pe.Pos, tc.pos, tc.msg)
		}
	}
}

func TestMustParsePanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("MustParse of a bad rule did not panic")
		}
	}()
	MustParse("Bash(")
}

// check runs rule against c and wants outcome.
func check(t *testing.T, rule string, c Call, e Env, want Outcome) {
	t.Helper()
	got := MustParse(rule).Match(c, e)
	if got.Outcome != want {
		t.Errorf("%s on %s %s: %v (%s), want %v", rule, c.Tool, c.Input, got.Outcome, got.Reason, want)
	}
	if (got.Outcome == Undecided) != (got.Reason != "") {
		t.Errorf("%s on %s: reason %q with outcome %v", rule, c.Input, got.Reason, got.Outcome)
	}
}

// The examples of Claude Code's permission documentation (code.claude.com/docs/en/permissions),
// as the engine's matcher reads them (2.1.328's wildcard and legacy-prefix rules).
func TestDocumentedBashRules(t *testing.T) {
	for _, tc := range []struct {
		rule, cmd string
		want      Outcome
	}{
		{"Bash", "rm -rf /", Matched},
		{"Bash(*)", "anything at all", Matched},
		{"Bash(npm run build)", "npm run build", Matched},
		{"Bash(npm run build)", "npm run build --prod", NoMatch},
		{"Bash(npm run test:*)", "npm run test", Matched},
		{"Bash(npm run test:*)", "npm run test -- --watch", Matched},
		{"Bash(npm run test:*)", "npm run testing", NoMatch},
		{"Bash(curl http://site.com/:*)", "curl http://site.com/page", NoMatch}, // the prefix is followed by a space or nothing
		{"Bash(curl http://site.com/:*)", "curl http://site.com/ -o x", Matched},
		{"Bash(curl http://github.com/:*)", "curl -X GET http://github.com/", NoMatch},
		{"Bash(ls *)", "ls -la", Matched},
		{"Bash(ls *)", "ls", Matched},
		{"Bash(ls *)", "lsof", NoMatch},
		{"Bash(ls*)", "lsof", Matched},
		{"Bash(ls*)", "ls -la", Matched},
		{"Bash(* --version)", "node --version", Matched},
		{"Bash(* --version)", "node --help", NoMatch},
		{"Bash(git * main)", "git push origin main", Matched},
		{"Bash(git * main)", "git checkout main", Matched},
		{"Bash(git * main)", "git checkout dev", NoMatch},
		{"Bash(git *)", "git", Matched},
		{"Bash(git *)", "gitk", NoMatch},
		{"Bash(git commit *)", "git commit -m \"a; b\"", Matched},
		{`Bash(echo \*)`, "echo *", Matched},
		{`Bash(echo \*)`, "echo hi", NoMatch},
		{"Bash(safe-cmd:*)", "safe-cmd && other-cmd", Matched}, // one subcommand is enough for a hook "if"
		{"Bash(git push *)", "ls && git push origin main", Matched},
		{"Bash(git push *)", "FOO=bar git push", Matched},
		{"Bash(rm *)", "xargs rm -rf", Matched},
		{"Bash(npm *)", "npm install\nnpm test", Matched},
	} {
		check(t, tc.rule, bash(tc.cmd), env, tc.want)
	}
}

// What Claude Code 2.1.328 did with a hook "if" on each of these commands (differential
// case if/probe: rules `Bash(touch *)`, `Bash(git *)`, `Bash(touch:*)`): the hook ran
// when one subcommand matched, and ran for every rule on a command its splitter gave up
// on (a for loop, a brace group, an unterminated quote).
func TestMeasuredCommandSplitting(t *testing.T) {
	M, N, U := Matched, NoMatch, Undecided
	for _, tc := range []struct {
		cmd  string
		want [3]Outcome // touch *, git *, touch:*
	}{
		{"touch ran_1", [3]Outcome{M, N, M}},
		{"echo a && touch ran_2", [3]Outcome{M, N, M}},
		{"echo $(touch ran_3)", [3]Outcome{M, N, M}},
		{"FOO=1 touch ran_4", [3]Outcome{M, N, M}},
		{"echo `touch ran_5`", [3]Outcome{M, N, M}},
		{"echo hi | touch ran_6", [3]Outcome{M, N, M}},
		{"for f in ran_7; do touch $f; done", [3]Outcome{U, U, U}},
		{"echo plain", [3]Outcome{N, N, N}},
		{"echo $((1+2))", [3]Outcome{N, N, N}},
		{"touch    ran_11", [3]Outcome{M, N, M}},
		{"bash -c 'touch ran_12'", [3]Outcome{N, N, N}},
		{"echo x; touch ran_13 # note", [3]Outcome{M, N, M}},
		{"(touch ran_14)", [3]Outcome{M, N, M}},
		{"{ touch ran_15; }", [3]Outcome{U, U, U}},
		{"echo ran_16 | xargs touch", [3]Outcome{M, N, M}},
		{`echo "unterminated`, [3]Outcome{U, U, U}},
		{"git status", [3]Outcome{N, M, N}},
	} {
		for i, rule := range []string{"Bash(touch *)", "Bash(git *)", "Bash(touch:*)"} {
			check(t, rule, bash(tc.cmd), env, tc.want[i])
		}
	}
}

func TestCommandSplitting(t *testing.T) {
	for _, tc := range []struct {
		cmd  string
		subs []string
	}{
		{"git status", []string{"git status"}},
		{`git commit -m "a; b" && git push`, []string{"git commit -m a; b", "git push"}},
		{"a || b; c | d |& e & f\ng", []string{"a", "b", "c", "d", "e", "f", "g"}},
		{"FOO=1 BAR+=2 X[0]=y cmd FOO=3", []string{"cmd FOO=3"}},
		{"ls > out 2>&1 < in &>> log", []string{"ls"}},
		{"cat <<< word", []string{"cat"}},
		{"echo 'it''s' \"q\\\"x\" a\\ b", []string{`echo its q"x a b`}},
		{"echo $(git log $(date)) `id`", []string{"date", "git log $(date)", "id", "echo $(git log $(date)) `id`"}},
		{"(cd x && make) > log", []string{"cd x", "make"}},
		{"echo $ # a comment", []string{"echo $"}},
		{"long \\\n  line", []string{"long line"}},
		{"X=1", nil},
	} {
		subs, err := splitCommand(tc.cmd)
		if err != nil {
			t.Errorf("splitCommand(%q): %v", tc.cmd, err)
			continue
		}
		if strings.Join(subs, "|") != strings.Join(tc.subs, "|") || len(subs) != len(tc.subs) {
			t.Errorf("splitCommand(%q) = %q, want %q", tc.cmd, subs, tc.subs)
		}
	}
	for _, cmd := range []string{
		"if true; then x; fi", "while :; do x; done", "{ a; }", "cat <<EOF\nx\nEOF", "echo $HOME", "echo \"${X}\"",
		"echo $'a'", "f() { x; }", "case a in a) b;; esac", "((x++))", "echo 'open", "echo (", "a )", "echo `open", "echo $(open",
		"! false", "ls >", "echo $((1+2", "echo \"open",
	} {
		if subs, err := splitCommand(cmd); err == nil {
			t.Errorf("splitCommand(%q) = %q, want an error", cmd, subs)
		}
	}
}

func TestEveryForAllowRules(t *testing.T) {
	every := env
	every.Every = true
	check(t, "Bash(safe-cmd:*)", bash("safe-cmd && other-cmd"), every, NoMatch)
	check(t, "Bash(git *)", bash("git add . && git commit"), every, Matched)
	check(t, "Bash(git *)", bash("for x in y; do git z; done"), every, Undecided)
}

// Path rules, as the permission documentation gives them (gitignore patterns: `//` from
// the filesystem root, `~/` from home, `/` from the rules' root, else the working
// directory), and as measured in case if/file-tools.
func TestPathRules(t *testing.T) {
	for _, tc := range []struct {
		rule, tool, path string
		want             Outcome
	}{
		{"Read(./.env)", "Read", "/work/proj/.env", Matched},
		{"Read(./.env)", "Read", "/work/proj/sub/.env", NoMatch},
		{"Read(.env)", "Read", "/work/proj/sub/.env", Matched},
		{"Read(*.env)", "Read", "/work/proj/a/b/prod.env", Matched},
		{"Read(*.env)", "Read", "/work/proj/env.txt", NoMatch},
		{"Read(./secrets/**)", "Read", "/work/proj/secrets/a/key.pem", Matched},
		{"Read(./secrets/**)", "Read", "/work/proj/public/key.pem", NoMatch},
		{"Read(//Users/alice/secrets/**)", "Read", "/Users/alice/secrets/x", Matched},
		{"Read(//tmp/**)", "Read", "/tmp/a/notes.txt", Matched},
		{"Read(~/Documents/*.pdf)", "Read", "/home/alice/Documents/cv.pdf", Matched},
		{"Read(~/Documents/*.pdf)", "Read", "/home/alice/Documents/old/cv.pdf", NoMatch},
		{"Edit(/src/**/*.ts)", "Edit", "/work/proj/src/a/b/c.ts", Matched},
		{"Edit(/src/**/*.ts)", "Edit", "/work/proj/src/c.ts", Matched},
		{"Edit(/src/**/*.ts)", "Edit", "/work/proj/lib/c.ts", NoMatch},
		{"Edit(src/**)", "Edit", "/work/proj/src/main.go", Matched},
		{"Edit(src/**)", "Edit", "/work/proj/notes.txt", NoMatch},
		{"Edit(notes.txt)", "Edit", "/work/proj/notes.txt", Matched},
		{"Edit(notes.txt)", "Edit", "notes.txt", Matched}, // relative to the working directory
		{"Write(*.txt)", "Write", "/work/proj/notes.txt", Matched},
		{"Write(/notes.txt)", "Write", "/work/proj/notes.txt", Matched},
		{"Edit(notes.txt)", "Write", "/work/proj/notes.txt", NoMatch}, // another tool's rule
		{"Edit(src/**)", "Edit", "/elsewhere/src/main.go", NoMatch},
		{"NotebookEdit(*.ipynb)", "NotebookEdit", "/work/proj/a.ipynb", Matched},
	} {
		field := "file_path"
		if tc.tool == "NotebookEdit" {
			field = "notebook_path"
		}
		check(t, tc.rule, call(tc.tool, field, tc.path), env, tc.want)
	}
	noHome := env
	noHome.Home = ""
	check(t, "Read(~/x)", call("Read", "file_path", "/home/alice/x"), noHome, NoMatch)
}

func TestOtherKinds(t *testing.T) {
	check(t, "WebFetch(domain:example.com)", call("WebFetch", "url", "https://example.com/a"), env, Matched)
	check(t, "WebFetch(domain:example.com)", call("WebFetch", "url", "https://api.example.com/a"), env, NoMatch)
	check(t, "WebFetch(domain:*.example.com)", call("WebFetch", "url", "https://api.example.com/a"), env, Matched)
	check(t, "WebFetch(example.com)", call("WebFetch", "url", "https://example.com/a"), env, NoMatch)
	check(t, "Glob(*.go)", call("Glob", "pattern", "main.go"), env, Matched)
	check(t, "Grep(TODO*)", call("Grep", "pattern", "FIXME"), env, NoMatch)
	check(t, "Agent(Explore)", call("Agent", "subagent_type", "Explore"), env, Matched)
	check(t, "Agent(Explore)", call("Agent", "subagent_type", "Plan"), env, NoMatch)
}

func TestToolNamesAndInputs(t *testing.T) {
	mcp := Call{Tool: "mcp__puppeteer__puppeteer_navigate", Input: json.RawMessage(`{}`)}
	check(t, "mcp__puppeteer", mcp, env, Matched)
	check(t, "mcp__puppeteer__*", mcp, env, Matched)
	check(t, "mcp__puppeteer__puppeteer_navigate", mcp, env, Matched)
	check(t, "mcp__puppeteer__puppeteer_click", mcp, env, NoMatch)
	check(t, "mcp__pup", mcp, env, NoMatch)
	check(t, "Bash", call("BashOutput", "command", "x"), env, NoMatch)
	check(t, "Bash(git *)", call("Read", "file_path", "git x"), env, NoMatch)
	// A tool whose specifiers the table does not read matches whole rules only.
	check(t, "Unknown", call("Unknown", "x", "y"), env, Matched)
	check(t, "Unknown(y)", call("Unknown", "x", "y"), env, NoMatch)
	// An input the table's field is missing from, or that is not an object: undecided.
	check(t, "Bash(git *)", Call{Tool: "Bash", Input: json.RawMessage(`{"cmd":"git x"}`)}, env, Undecided)
	check(t, "Bash(git *)", Call{Tool: "Bash", Input: json.RawMessage(`"git x"`)}, env, Undecided)
	check(t, "Bash(git *)", Call{Tool: "Bash", Input: json.RawMessage(`{"command":7}`)}, env, Undecided)
	if (Rule{}).Match(bash("x"), env).Outcome != NoMatch {
		t.Error("the zero Rule matched")
	}
	for o, s := range map[Outcome]string{Matched: "matched", NoMatch: "no match", Undecided: "undecided"} {
		if o.String() != s {
			t.Errorf("%d.String() = %q", o, o.String())
		}
	}
}

func TestWildcard(t *testing.T) {
	for _, tc := range []struct {
		pattern, s string
		want       bool
	}{
		{"a*c", "abbc", true},
		{"a*c", "ab\nc", true},
		{"a*c", "abd", false},
		{"src/**/x", "src/x", true},
		{"src/**/x", "src/a/b/x", true},
		{"src/**/x", "srcx", false},
		{`a\\b`, `a\b`, true},
		{"x\x00", "x\x00", false},
		{"  git *  ", "git", true},
		{"* *", "a", false}, // two stars: the tail is not optional
	} {
		if got := wildcard(tc.pattern, tc.s, false); got != tc.want {
			t.Errorf("wildcard(%q, %q) = %v, want %v", tc.pattern, tc.s, got, tc.want)
		}
	}
}

func BenchmarkMatch(b *testing.B) {
	rules := []Rule{MustParse("Bash(git *)"), MustParse("Bash(npm run test:*)"), MustParse("Edit(/src/**/*.ts)")}
	calls := []Call{
		bash("cd repo && FOO=1 git commit -m \"a message; with text\" | tee log"),
		bash("npm run test -- --watch"),
		call("Edit", "file_path", "/work/proj/src/a/b/c.ts"),
	}
	b.ReportAllocs()
	for b.Loop() {
		for i, r := range rules {
			if r.Match(calls[i], env).Outcome != Matched {
				b.Fatal("no match")
			}
		}
	}
}

func BenchmarkParse(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(`Bash(echo \(x\) *)`); err != nil {
			b.Fatal(err)
		}
	}
}

// Hidden names the deny rule that takes a whole tool: not one with a specifier, not an
// allow or ask rule; an MCP server's rule takes each of its tools.
func TestHidden(t *testing.T) {
	deny, _ := Entries([]string{"Bash(rm *)", "WebFetch", "mcp__fs"}, Deny, "s.json")
	allow, _ := Entries([]string{"Write"}, Allow, "s.json")
	ask, _ := Entries([]string{"Read"}, Ask, "s.json")
	p := Policy{Rules: append(append(deny, allow...), ask...)}
	for tool, want := range map[string]string{"Bash": "", "WebFetch": "WebFetch", "mcp__fs__read": "mcp__fs", "mcp__fsx__read": "", "Write": "", "Read": ""} {
		got := ""
		if e := p.Hidden(tool); e != nil {
			got = e.Rule.Text
		}
		if got != want {
			t.Errorf("Hidden(%s) = %q, want %q", tool, got, want)
		}
	}
}
