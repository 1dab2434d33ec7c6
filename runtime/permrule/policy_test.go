package permrule

import (
	"errors"
	"strings"
	"testing"
)

// policy parses allow, ask and deny lists into a policy under mode.
func policy(t *testing.T, mode Mode, allow, ask, deny []string) Policy {
	t.Helper()
	var p Policy
	for _, l := range []struct {
		rules []string
		b     Behavior
	}{{allow, Allow}, {ask, Ask}, {deny, Deny}} {
		es, err := Entries(l.rules, l.b, "settings.json: permissions."+string(l.b))
		if err != nil {
			t.Fatal(err)
		}
		p.Rules = append(p.Rules, es...)
	}
	p.Mode = mode
	return p
}

// Claude Code's modes as spec/bridges/claudecode.cue states them (bridges/permissions
// reads them from the generated table; these are the rules as rules).
var (
	modeDefault = Mode{Name: "default", Allow: []Rule{MustParse("Read"), MustParse("Glob"), MustParse("Grep")}, Otherwise: Ask}
	modeBypass  = Mode{Name: "bypassPermissions", Otherwise: Allow}
	modePlan    = Mode{Name: "plan", Allow: modeDefault.Allow, Refuse: []Rule{MustParse("Write"), MustParse("Edit")}, Otherwise: Ask}
	modeAccept  = Mode{Name: "acceptEdits", Allow: append(append([]Rule(nil), modeDefault.Allow...), MustParse("Write"), MustParse("Edit")), Otherwise: Ask}
)

func decide(t *testing.T, p Policy, c Call, want Behavior, by By) Decision {
	t.Helper()
	d := p.Decide(c, env)
	if d.Behavior != want || d.By != by {
		t.Errorf("%s %s: got %s by %s (%+v), want %s by %s", c.Tool, c.Input, d.Behavior, d.By, d.Entry, want, by)
	}
	return d
}

// The example settings file of Claude Code's settings documentation
// (code.claude.com/docs/en/settings): npm lint and tests allowed, curl and the secrets
// denied, under the default mode.
func TestPolicySettingsExample(t *testing.T) {
	p := policy(t, modeDefault,
		[]string{"Bash(npm run lint)", "Bash(npm run test:*)", "Read(~/.zshrc)"}, nil,
		[]string{"Bash(curl:*)", "Read(./.env)", "Read(./.env.*)", "Read(./secrets/**)"})
	decide(t, p, bash("npm run lint"), Allow, ByRule)
	decide(t, p, bash("npm run test -- --watch"), Allow, ByRule)
	decide(t, p, bash("npm run build"), Ask, ByMode)
	decide(t, p, bash("curl https://example.com"), Deny, ByRule)
	// A deny rule matches one subcommand: a compound command hiding curl is denied.
	decide(t, p, bash("npm run lint && curl https://example.com"), Deny, ByRule)
	// An allow rule must match every subcommand.
	decide(t, p, bash("npm run lint && rm -rf build"), Ask, ByMode)
	decide(t, p, call("Read", "file_path", "/work/proj/.env"), Deny, ByRule)
	decide(t, p, call("Read", "file_path", "/work/proj/.env.local"), Deny, ByRule)
	decide(t, p, call("Read", "file_path", "/work/proj/secrets/key.pem"), Deny, ByRule)
	decide(t, p, call("Read", "file_path", "/home/alice/.zshrc"), Allow, ByRule)
	// Read is one of the default mode's own.
	decide(t, p, call("Read", "file_path", "/work/proj/main.go"), Allow, ByModeAllow)
	decide(t, p, call("Edit", "file_path", "/work/proj/main.go"), Ask, ByMode)
}

// The permission documentation's precedence: deny, then ask, then allow, whatever their
// order or specificity ("a broad deny such as Bash(aws *) blocks aws s3 ls even with an
// allow rule for exactly that command"; "a matching ask rule prompts even when a more
// specific allow rule matches").
func TestPolicyPrecedence(t *testing.T) {
	p := policy(t, modeBypass, []string{"Bash(aws s3 ls)", "Bash(git push origin main)"}, []string{"Bash(git push *)"}, []string{"Bash(aws *)"})
	d := decide(t, p, bash("aws s3 ls"), Deny, ByRule)
	if d.Entry.Rule.Text != "Bash(aws *)" || d.Entry.Source != "settings.json: permissions.deny[0]" {
		t.Errorf("deciding entry %+v", d.Entry)
	}
	decide(t, p, bash("git push origin main"), Ask, ByRule)
	decide(t, p, bash("git status"), Allow, ByMode)

	// The same rule in allow and deny: deny wins.
	p = policy(t, modeDefault, []string{"Edit(src/**)"}, nil, []string{"Edit(src/**)"})
	decide(t, p, call("Edit", "file_path", "/work/proj/src/a.go"), Deny, ByRule)
	// An ask rule beats the mode's own allow.
	p = policy(t, modeAccept, nil, []string{"Edit"}, nil)
	decide(t, p, call("Edit", "file_path", "/work/proj/a.go"), Ask, ByRule)
	decide(t, p, call("Write", "file_path", "/work/proj/a.go"), Allow, ByModeAllow)
}

// A deny or an ask rule whose match cannot be told counts; an allow rule then does not.
func TestPolicyUndecided(t *testing.T) {
	loop := bash("for f in *; do rm $f; done")
	p := policy(t, modeBypass, nil, nil, []string{"Bash(rm *)"})
	if d := decide(t, p, loop, Deny, ByRule); d.Undecided == "" {
		t.Error("an undecided deny says nothing of why")
	}
	p = policy(t, modeDefault, []string{"Bash(for *)"}, nil, nil)
	decide(t, p, loop, Ask, ByMode)
}

func TestPolicyModes(t *testing.T) {
	write := call("Write", "file_path", "/work/proj/a.txt")
	for _, tc := range []struct {
		mode Mode
		c    Call
		want Behavior
		by   By
	}{
		{modeDefault, bash("echo hi"), Ask, ByMode},
		{modeDefault, call("Grep", "pattern", "x"), Allow, ByModeAllow},
		{modeAccept, write, Allow, ByModeAllow},
		{modeAccept, bash("touch a"), Ask, ByMode},
		{modePlan, write, Deny, ByModeRefuse},
		{modePlan, call("Read", "file_path", "/work/proj/a.txt"), Allow, ByModeAllow},
		{modeBypass, write, Allow, ByMode},
		{Mode{}, write, Allow, ByMode}, // no mode: allow
	} {
		t.Run(tc.mode.Name+"/"+tc.c.Tool, func(t *testing.T) {
			decide(t, Policy{Mode: tc.mode}, tc.c, tc.want, tc.by)
		})
	}
	// A mode's refusal comes after the deny and ask rules, before the allow rules: an
	// allow rule does not undo plan mode.
	p := policy(t, modePlan, []string{"Write"}, nil, nil)
	decide(t, p, write, Deny, ByModeRefuse)
	p = policy(t, modePlan, nil, []string{"Write"}, nil)
	decide(t, p, write, Ask, ByRule)
}

// Rules that do not parse are errors naming where each was written and the fault; the
// rules that parse are kept beside them, never silently in their place.
func TestEntriesErrors(t *testing.T) {
	es, err := Entries([]string{"Bash(git *)", "Bash(touch *", "Edit(", " Read"}, Deny, "/p/.claude/settings.json: permissions.deny")
	if len(es) != 1 || es[0].Rule.Text != "Bash(git *)" || es[0].Source != "/p/.claude/settings.json: permissions.deny[0]" {
		t.Errorf("entries %+v", es)
	}
	var re *RuleError
	if !errors.As(err, &re) {
		t.Fatalf("error %v is not a *RuleError", err)
	}
	msg := err.Error()
	for _, want := range []string{
		`/p/.claude/settings.json: permissions.deny[1]: permission rule "Bash(touch *": at position 4: an opening parenthesis that never closes`,
		`permissions.deny[2]: permission rule "Edit("`,
		`permissions.deny[3]: permission rule " Read": at position 0: the rule has leading or trailing white space`,
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q lacks %q", msg, want)
		}
	}
	var pe *ParseError
	if !errors.As(err, &pe) || pe.Rule != "Bash(touch *" {
		t.Errorf("the first *ParseError is %+v", pe)
	}
	if _, err := ParseBehavior("prompt"); err == nil {
		t.Error("ParseBehavior took an unknown behaviour")
	}
}

// Allow rules together allow a compound command when each subcommand is matched by one
// of them; one subcommand no rule matches leaves the call to the mode.
func TestPolicyCoversCommand(t *testing.T) {
	p := policy(t, modeDefault, []string{"Bash(git add *)", "Bash(git commit:*)"}, nil, nil)
	if d := decide(t, p, bash("git add . && git commit -m x"), Allow, ByRule); d.Entry != nil {
		t.Errorf("a covering decision names one rule: %+v", d.Entry)
	}
	decide(t, p, bash("git add . && git push"), Ask, ByMode)
	decide(t, p, bash("git add . && $(curl x)"), Ask, ByMode)
}

// With As, a Write is decided by the Edit rules with a specifier: "Write(path)" decides
// nothing, "Edit(path)" decides it, a rule naming Write whole still counts.
func TestPolicyAs(t *testing.T) {
	w := call("Write", "file_path", "/work/proj/src/a.go")
	as := map[string]string{"Write": "Edit"}
	p := policy(t, modeDefault, []string{"Write(src/**)"}, nil, nil)
	p.As = as
	decide(t, p, w, Ask, ByMode)
	p = policy(t, modeDefault, []string{"Edit(src/**)"}, nil, nil)
	p.As = as
	decide(t, p, w, Allow, ByRule)
	p = policy(t, modeDefault, nil, nil, []string{"Edit(src/**)", "Write"})
	p.As = as
	if d := decide(t, p, w, Deny, ByRule); d.Entry.Rule.Text != "Edit(src/**)" {
		t.Errorf("decided by %s", d.Entry.Rule.Text)
	}
	p = policy(t, modeBypass, nil, nil, []string{"Write"})
	p.As = as
	decide(t, p, w, Deny, ByRule)
}
