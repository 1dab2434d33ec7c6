package permrule

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
)

// Behavior is what a permission rule, or a mode, does with a call it decides.
type Behavior string

const (
	// Allow runs the call without asking.
	Allow Behavior = "allow"
	// Ask asks for approval first (headless, no one answers: the call is denied).
	Ask Behavior = "ask"
	// Deny refuses the call.
	Deny Behavior = "deny"
)

// ParseBehavior reads "allow", "ask" or "deny".
func ParseBehavior(s string) (Behavior, error) {
	switch b := Behavior(s); b {
	case Allow, Ask, Deny:
		return b, nil
	}
	return "", fmt.Errorf("%q is not a permission behaviour (want allow, ask or deny)", s)
}

// Entry is one rule of a policy: the rule, what it does, and where it was written.
type Entry struct {
	// Rule is the parsed rule.
	Rule Rule
	// Behavior is what the rule does with a call it matches.
	Behavior Behavior
	// Source says where the rule was written: a settings file and the JSON path of the
	// rule in it ("/p/.claude/settings.json: permissions.deny[0]"), or a flag
	// ("--disallowedTools").
	Source string
}

// RuleError is a rule that does not parse, with where it was written.
type RuleError struct {
	// Source is where the rule was written (Entry.Source).
	Source string
	// Err is the parse error, naming the rule and the position of the fault.
	Err *ParseError
}

// Error formats the error as `SOURCE: permission rule "TEXT": at position N: MSG`.
func (e *RuleError) Error() string { return e.Source + ": " + e.Err.Error() }

// Unwrap returns the *ParseError.
func (e *RuleError) Unwrap() error { return e.Err }

// Entries parses rules, each written at source with its index ("SOURCE[i]"), as
// entries of behavior b. Every rule that does not parse is a *[RuleError]; they are
// joined (errors.Join), and the rules that parse are returned with them.
func Entries(rules []string, b Behavior, source string) ([]Entry, error) {
	var (
		out  []Entry
		errs []error
	)
	for i, text := range rules {
		src := fmt.Sprintf("%s[%d]", source, i)
		r, err := Parse(text)
		if err != nil {
			var pe *ParseError
			if errors.As(err, &pe) {
				errs = append(errs, &RuleError{Source: src, Err: pe})
				continue
			}
			errs = append(errs, fmt.Errorf("%s: %w", src, err))
			continue
		}
		out = append(out, Entry{Rule: r, Behavior: b, Source: src})
	}
	return out, errors.Join(errs...)
}

// Mode is what a permission mode does with a call no rule of the policy decides.
type Mode struct {
	// Name is the mode's name ("default", "acceptEdits", ...).
	Name string
	// Allow are rules whose calls the mode runs without asking.
	Allow []Rule
	// Refuse are rules whose calls the mode refuses (plan mode's edits).
	Refuse []Rule
	// Otherwise is what the mode does with any other call ("": Allow).
	Otherwise Behavior
}

// Policy is a set of permission rules under a mode.
type Policy struct {
	// Rules are the allow, ask and deny rules, in any order: a deny rule wins over an ask
	// rule, which wins over an allow rule, wherever each was written.
	Rules []Entry
	// Mode decides the calls the rules leave.
	Mode Mode
	// As names, per tool, the tool whose rules with a specifier decide the tool's calls
	// (the specifier matched against the call's own input); a rule naming the tool itself
	// with a specifier then decides nothing, and one naming it whole still counts.
	As map[string]string
}

// match tests rule r against call: a rule naming a tool whole as the call's, one with a
// specifier as the call of the tool As names.
func (p Policy) match(r Rule, call Call, env Env) Outcome {
	if as := p.As[call.Tool]; as != "" && !r.Whole() {
		call.Tool = as
	}
	return r.Match(call, env).Outcome
}

// By says what decided a call.
type By string

const (
	// ByRule: a rule of the policy (Decision.Entry).
	ByRule By = "rule"
	// ByModeRefuse: one of the mode's Refuse rules.
	ByModeRefuse By = "mode-refuse"
	// ByModeAllow: one of the mode's Allow rules.
	ByModeAllow By = "mode-allow"
	// ByMode: the mode's Otherwise.
	ByMode By = "mode"
)

// Decision is what a policy does with one call, and why.
type Decision struct {
	// Behavior is allow, ask or deny.
	Behavior Behavior
	// By says what decided.
	By By
	// Entry is the rule that decided, when By is ByRule; nil when several allow rules
	// together cover the subcommands of a shell command.
	Entry *Entry
	// Undecided, when set, is why the deciding deny or ask rule's match could not be told:
	// the rule counted, as a rule that restricts must when in doubt.
	Undecided string
}

// Hidden reports the deny rule that names the whole of tool (no specifier; an MCP
// server's rule names each of its tools), or nil: an engine that hides such a tool does
// not offer it to the model at all.
func (p Policy) Hidden(tool string) *Entry {
	for i := range p.Rules {
		e := &p.Rules[i]
		if e.Behavior == Deny && e.Rule.Whole() && toolMatches(e.Rule.Tool, tool) {
			return e
		}
	}
	return nil
}

// Decide decides call under env: a deny rule that matches it, or whose match cannot
// be told, denies; then an ask rule likewise asks; then the mode's Refuse rules deny;
// then an allow rule, or the mode's Allow rules, allow when they match (every
// subcommand of a shell command; one that cannot be told never allows); else the
// mode's Otherwise decides.
func (p Policy) Decide(call Call, env Env) Decision {
	restrict := env
	restrict.Every = false
	for _, b := range []Behavior{Deny, Ask} {
		for i := range p.Rules {
			e := &p.Rules[i]
			if e.Behavior != b {
				continue
			}
			switch p.match(e.Rule, call, restrict) {
			case Matched:
				return Decision{Behavior: b, By: ByRule, Entry: e}
			case Undecided:
				c := call
				if as := p.As[c.Tool]; as != "" && !e.Rule.Whole() {
					c.Tool = as
				}
				return Decision{Behavior: b, By: ByRule, Entry: e, Undecided: e.Rule.Match(c, restrict).Reason}
			}
		}
	}
	for _, r := range p.Mode.Refuse {
		if r.Match(call, restrict).Outcome != NoMatch {
			return Decision{Behavior: Deny, By: ByModeRefuse}
		}
	}
	allow := env
	allow.Every = true
	var allowRules []Rule
	for i := range p.Rules {
		e := &p.Rules[i]
		if e.Behavior != Allow {
			continue
		}
		if p.match(e.Rule, call, allow) == Matched {
			return Decision{Behavior: Allow, By: ByRule, Entry: e}
		}
		allowRules = append(allowRules, e.Rule)
	}
	for _, r := range p.Mode.Allow {
		if r.Match(call, allow).Outcome == Matched {
			return Decision{Behavior: Allow, By: ByModeAllow}
		}
	}
	if coversCommand(allowRules, call, env) {
		// No one rule matches every subcommand, but each is matched by one of them.
		return Decision{Behavior: Allow, By: ByRule}
	}
	b := p.Mode.Otherwise
	if b == "" {
		b = Allow
	}
	return Decision{Behavior: b, By: ByMode}
}

// coversCommand reports whether every subcommand of a shell command call is matched by
// one of the rules (each may match another): how allow rules together allow
// `git add . && git commit`. A command that cannot be split is not covered.
func coversCommand(rules []Rule, call Call, env Env) bool {
	tool, ok := env.Tools[call.Tool]
	if !ok || tool.Kind != KindCommand || len(rules) == 0 {
		return false
	}
	var input map[string]json.RawMessage
	var command string
	if json.Unmarshal(call.Input, &input) != nil || json.Unmarshal(input[tool.Field], &command) != nil {
		return false
	}
	subs, err := splitCommand(command)
	if err != nil || len(subs) == 0 {
		return false
	}
	for _, sub := range subs {
		if !slices.ContainsFunc(rules, func(r Rule) bool {
			return toolMatches(r.Tool, call.Tool) && !r.Whole() && matchSub(r.Specifier, sub)
		}) {
			return false
		}
	}
	return true
}
