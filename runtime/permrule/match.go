package permrule

import (
	"encoding/json"
	"net/url"
	"strings"
)

// Kind is how a tool's specifier is matched against the tool's input.
type Kind string

const (
	// KindCommand: a shell command, split into its subcommands (`&&`, `||`, `;`, `|`,
	// `&`, newlines, subshells, `$(...)` and backticks; leading VAR=x assignments and
	// redirections left out); the rule matches when it matches one of them, as a legacy
	// prefix (`npm run test:*`) or a wildcard pattern (`git *`). A command that cannot be
	// split is undecided.
	KindCommand Kind = "command"
	// KindPath: a file path, against a gitignore-style pattern: `//abs/...` from the
	// filesystem root, `~/...` from the home directory, `/...` from the rules' root,
	// `./...` or a bare pattern from the working directory.
	KindPath Kind = "path"
	// KindGlob: the field's text against a wildcard pattern (`*` any text).
	KindGlob Kind = "glob"
	// KindDomain: `domain:HOST` against the host of the URL in the field (HOST itself,
	// or a subdomain when it is written `*.HOST`).
	KindDomain Kind = "domain"
	// KindExact: the field's text equals the specifier.
	KindExact Kind = "exact"
)

// Tool says where a rule's specifier is read in one tool's input, and how.
type Tool struct {
	// Field is the top-level key of the tool's input the specifier is matched against.
	Field string
	// Kind is how it is matched.
	Kind Kind
}

// Table gives, per tool name, where its rules' specifiers are read. A tool it does not
// list matches rules that name it whole and no rule with a specifier.
type Table map[string]Tool

// Call is one tool call a rule is tested against.
type Call struct {
	// Tool is the tool's name as the engine calls it ("Bash", "mcp__server__tool").
	Tool string
	// Input is the tool's input, a JSON object.
	Input json.RawMessage
}

// Env is what a rule's match depends on besides the call.
type Env struct {
	// Tools says where each tool's specifier is read.
	Tools Table
	// Dir is the working directory: relative paths in the input and `./` patterns are
	// resolved from it.
	Dir string
	// Home is the home directory, for `~/` patterns.
	Home string
	// Root is the directory `/path` patterns are relative to (the settings file's
	// project); empty: Dir.
	Root string
	// Every makes a command rule match only when it matches every subcommand (how an
	// allow rule reads a compound command); by default one subcommand is enough (the
	// hook "if", a deny rule).
	Every bool
}

// Outcome is the answer of a match.
type Outcome int

const (
	// NoMatch: the rule does not match the call.
	NoMatch Outcome = iota
	// Matched: the rule matches the call.
	Matched
	// Undecided: whether it matches cannot be told (a command dsh cannot split, an input
	// without the field). The caller decides what that means where it stands: the hook
	// "if" runs the hook, as Claude Code does; a deny rule would deny.
	Undecided
)

// String names the outcome.
func (o Outcome) String() string {
	switch o {
	case Matched:
		return "matched"
	case Undecided:
		return "undecided"
	}
	return "no match"
}

// Result is the outcome of one match, with why when it is Undecided.
type Result struct {
	// Outcome is the answer.
	Outcome Outcome
	// Reason says why the match is undecided; empty otherwise.
	Reason string
}

// Match tests the rule against call. The tool name must be the rule's (an MCP rule
// "mcp__server" or "mcp__server__*" takes every tool of the server); a rule without a
// specifier then matches, and one with a specifier is matched against the input field
// env.Tools names for the tool, by its kind.
func (r Rule) Match(call Call, env Env) Result {
	if r.Tool == "" || !toolMatches(r.Tool, call.Tool) {
		return Result{}
	}
	if r.Whole() {
		return Result{Outcome: Matched}
	}
	tool, ok := env.Tools[call.Tool]
	if !ok {
		return Result{} // the engine has no matcher for the tool's specifiers
	}
	var input map[string]json.RawMessage
	if err := json.Unmarshal(call.Input, &input); err != nil {
		return Result{Outcome: Undecided, Reason: "the tool input is not a JSON object"}
	}
	var value string
	if raw, ok := input[tool.Field]; !ok || json.Unmarshal(raw, &value) != nil {
		return Result{Outcome: Undecided, Reason: "the tool input has no string " + tool.Field}
	}
	switch tool.Kind {
	case KindCommand:
		return matchCommand(r.Specifier, value, env.Every)
	case KindPath:
		return outcome(matchPath(r.Specifier, value, env))
	case KindGlob:
		return outcome(wildcard(r.Specifier, value, false))
	case KindDomain:
		return outcome(matchDomain(r.Specifier, value))
	case KindExact:
		return outcome(r.Specifier == value)
	}
	return Result{Outcome: Undecided, Reason: "unknown specifier kind " + string(tool.Kind)}
}

func outcome(ok bool) Result {
	if ok {
		return Result{Outcome: Matched}
	}
	return Result{}
}

// toolMatches: the rule's tool is the call's, or an MCP server rule takes its tools.
func toolMatches(rule, tool string) bool {
	if rule == tool {
		return true
	}
	if !strings.HasPrefix(rule, "mcp__") || !strings.HasPrefix(tool, "mcp__") {
		return false
	}
	server := strings.TrimSuffix(rule, "__*")
	if strings.Contains(strings.TrimPrefix(server, "mcp__"), "__") {
		return false // a tool of its own, not a server
	}
	return strings.HasPrefix(tool, server+"__")
}

// matchDomain matches "domain:HOST" (or "domain:*.HOST") against the URL's host.
func matchDomain(spec, raw string) bool {
	want, ok := strings.CutPrefix(spec, "domain:")
	if !ok {
		return false
	}
	u, err := url.Parse(raw)
	if err != nil || u.Hostname() == "" {
		return false
	}
	host := strings.ToLower(u.Hostname())
	want = strings.ToLower(want)
	if sub, ok := strings.CutPrefix(want, "*."); ok {
		return strings.HasSuffix(host, "."+sub)
	}
	return host == want
}

// matchCommand matches a Bash specifier against the subcommands of the command (one
// of them, or with every all of them): a legacy prefix ("npm run test:*": the
// subcommand is the prefix or starts with it and a space) or a wildcard pattern;
// "xargs " before either takes the command xargs runs.
func matchCommand(spec, command string, every bool) Result {
	subs, err := splitCommand(command)
	if err != nil {
		return Result{Outcome: Undecided, Reason: err.Error()}
	}
	matched := 0
	for _, sub := range subs {
		if matchSub(spec, sub) {
			matched++
		}
	}
	if matched > 0 && (!every || matched == len(subs)) {
		return Result{Outcome: Matched}
	}
	return Result{}
}

// matchSub matches a Bash specifier against one simple command: a legacy prefix or a
// wildcard pattern, "xargs " before either taking the command xargs runs.
func matchSub(spec, sub string) bool {
	if prefix, legacy := strings.CutSuffix(spec, ":*"); legacy && prefix != "" {
		return sub == prefix || strings.HasPrefix(sub, prefix+" ") || sub == "xargs "+prefix || strings.HasPrefix(sub, "xargs "+prefix+" ")
	}
	return wildcard(spec, sub, true) || wildcard("xargs "+spec, sub, true)
}
