package toolpolicy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/dshkit/dsh/bridges/dialect"
	"github.com/dshkit/dsh/runtime/permrule"
)

// notNamed ends the source of a core list's rule for the tools it does not name.
const notNamed = " (not named)"

// Verdict is what the rules make of a call.
type Verdict struct {
	// Decision is Allow, Deny or Ask.
	Decision string
	// Rule is the deciding rule (nil when none).
	Rule *Rule
}

// Ranked is the rules of a session ranked as the engine ranks them: by priority, the
// highest first; of equal ones, the first loaded first.
type Ranked struct {
	table *dialect.ToolPolicy
	rules []Rule
	// out are the rules of the settings' lists that take a tool out whatever the other
	// rules say (the engine leaves it out of its registry): an exclude entry's, and the
	// core list's for the tools it does not name.
	out []Rule
	// core names the tools of the core list (nil: none is set).
	core map[string]bool
}

// Rank ranks the policy files' rules, the settings' lists (as the table says they rank)
// and the table's catch-all, in the engine's load order: the files' rules, the exclude
// entries, the core entries and the core list's rule for every other tool.
func Rank(t *dialect.ToolPolicy, s Settings, files []Rule) *Ranked {
	rules := slices.Clone(files)
	k := &Ranked{table: t}
	for _, e := range s.Exclude {
		r := Rule{Tool: e.Tool, Decision: Deny, Priority: t.ExcludePriority, Source: e.Source}
		rules = append(rules, r)
		k.out = append(k.out, r)
	}
	if s.Core != nil {
		k.core = map[string]bool{}
		for _, e := range s.Core {
			k.core[e.Tool] = true
			r := Rule{Tool: e.Tool, Decision: Allow, Priority: t.CorePriority, Source: e.Source}
			if e.Narrow && slices.Contains(t.Shell, e.Tool) {
				r.Args = regexp.MustCompile(prefixPattern(e.Prefix))
			}
			rules = append(rules, r)
		}
		others := Rule{Tool: "*", Decision: Deny, Priority: t.CoreOthersPriority, Source: s.CoreSource + notNamed}
		rules = append(rules, others)
		k.out = append(k.out, others)
	}
	rules = append(rules, Rule{Tool: "*", Decision: t.CatchAll.Decision, Priority: t.CatchAll.Priority, Source: "the engine's catch-all (" + t.Mode + ")"})
	sort.SliceStable(rules, func(i, j int) bool { return rules[i].Priority > rules[j].Priority })
	k.rules = rules
	return k
}

// takenOut is the list rule that takes the tool out whatever the other rules say, or nil.
func (k *Ranked) takenOut(tool string) *Rule {
	for i := range k.out {
		r := &k.out[i]
		if r.Tool == tool || (r.Tool == "*" && k.core != nil && !k.core[tool]) {
			return r
		}
	}
	return nil
}

// server is the MCP server of a tool named <prefix><server>_<tool>, "" for another.
func (k *Ranked) server(tool string) string {
	rest, ok := strings.CutPrefix(tool, k.table.MCPPrefix)
	if !ok || k.table.MCPPrefix == "" {
		return ""
	}
	srv, _, ok := strings.Cut(rest, "_")
	if !ok || srv == "" {
		return ""
	}
	return srv
}

// matches says whether r holds for a call of tool (args: its arguments as StableArgs
// writes them; nil: none, which a rule with a pattern never matches).
func (k *Ranked) matches(r *Rule, tool, server string, args *string) bool {
	if len(r.Modes) > 0 && !slices.Contains(r.Modes, k.table.Mode) {
		return false
	}
	if r.Server != "" && (server == "" || (r.Server != "*" && r.Server != server)) {
		return false
	}
	if !k.toolMatches(r, tool, server) {
		return false
	}
	if r.Args != nil && (args == nil || !r.Args.MatchString(*args)) {
		return false
	}
	if r.Interactive != nil && *r.Interactive { // dsh's runs are headless
		return false
	}
	return true
}

// toolMatches is the engine's test of a rule's tool name.
func (k *Ranked) toolMatches(r *Rule, tool, server string) bool {
	p := k.table.MCPPrefix
	switch {
	case r.Tool == "*":
		return true
	case strings.Contains(r.Tool, "*"):
		if r.Tool == p+"*" {
			return server != ""
		}
		if strings.HasPrefix(r.Tool, p) && strings.HasSuffix(r.Tool, "_*") {
			want := strings.TrimSuffix(strings.TrimPrefix(r.Tool, p), "_*")
			return server == want && strings.HasPrefix(tool, p+want+"_")
		}
		return tool == r.Tool
	case tool == r.Tool:
		return true
	}
	return server != "" && strings.HasPrefix(r.Tool, p) && r.Tool == p+server+"_"+tool
}

// Check decides a call of tool with args (a JSON object), as the engine's policy does
// before the call runs.
// A tool the settings' lists take out is denied whatever the other rules say (the engine
// does not find it).
func (k *Ranked) Check(tool string, args json.RawMessage) Verdict {
	if r := k.takenOut(tool); r != nil {
		return Verdict{Decision: Deny, Rule: r}
	}
	return k.check(tool, args, false)
}

func (k *Ranked) check(tool string, args json.RawMessage, sub bool) Verdict {
	server := k.server(tool)
	var str *string
	if s, err := StableArgs(args); err == nil {
		str = &s
	}
	shell := slices.Contains(k.table.Shell, tool)
	for i := range k.rules {
		r := &k.rules[i]
		if !k.matches(r, tool, server, str) {
			continue
		}
		if shell {
			return k.checkShell(tool, args, r)
		}
		return Verdict{Decision: r.Decision, Rule: r}
	}
	return Verdict{Decision: Deny} // no catch-all matched: nothing allows it
}

// checkShell decides a shell call the rule r matched: a denial stands; otherwise each
// simple command of a compound command is decided again, a denial of one denying the
// call and an ask asking. A command that cannot be split is denied when the rule has a
// pattern, else the catch-all's decision (the engine's in its mode).
func (k *Ranked) checkShell(tool string, args json.RawMessage, r *Rule) Verdict {
	var in map[string]json.RawMessage
	_ = json.Unmarshal(args, &in)
	var command string
	if raw, ok := in["command"]; ok {
		_ = json.Unmarshal(raw, &command)
	}
	if command == "" || r.Decision == Deny {
		return Verdict{Decision: r.Decision, Rule: r}
	}
	subs, err := permrule.SplitCommand(command)
	if err != nil || len(subs) == 0 {
		if r.Args != nil {
			return Verdict{Decision: Deny, Rule: r}
		}
		return Verdict{Decision: k.table.CatchAll.Decision, Rule: r}
	}
	v := Verdict{Decision: r.Decision, Rule: r}
	if len(subs) == 1 {
		return v // the command is one simple command: decided whole
	}
	for _, s := range subs {
		next := map[string]json.RawMessage{}
		for key, val := range in {
			next[key] = val
		}
		next["command"], _ = json.Marshal(s)
		nargs, _ := json.Marshal(next)
		sv := k.check(tool, nargs, true)
		switch sv.Decision {
		case Deny:
			return sv
		case Ask:
			if v.Decision != Ask {
				v = sv
			}
		}
	}
	return v
}

// Offered says whether the tool is offered to the model, and if not, the rule that
// takes it out: a rule of the settings' lists that takes it out whatever the others say;
// else the first rule matching the tool (its arguments aside) decides, a rule with a
// pattern that denies being passed over and one that does not deny offering it.
func (k *Ranked) Offered(tool string) (bool, *Rule) {
	if r := k.takenOut(tool); r != nil {
		return false, r
	}
	server := k.server(tool)
	for i := range k.rules {
		r := &k.rules[i]
		plain := *r
		plain.Args = nil
		if !k.matches(&plain, tool, server, nil) {
			continue
		}
		if r.Args != nil {
			if r.Decision != Deny {
				return true, nil
			}
			continue
		}
		if r.Decision == Deny {
			return false, r
		}
		return true, nil
	}
	return false, nil
}

// Text is what the model reads of a call the verdict refuses (Deny or Ask).
func (k *Ranked) Text(tool string, v Verdict) string {
	if v.Decision == Ask {
		name := tool
		if d, ok := k.table.DisplayNames[tool]; ok {
			name = d
		}
		return strings.ReplaceAll(k.table.Unanswered, "{tool}", name)
	}
	if v.Rule != nil && v.Rule.Message != "" {
		return strings.ReplaceAll(k.table.DeniedWith, "{message}", v.Rule.Message)
	}
	return k.table.Denied
}

// StableArgs writes a call's arguments as the engine does before matching a rule's
// pattern: keys sorted, no blanks, strings and numbers as JavaScript writes them, and
// each top-level "key":value pair between NUL bytes.
func StableArgs(args json.RawMessage) (string, error) {
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return "", err
	}
	var b strings.Builder
	stable(&b, v, true)
	return b.String(), nil
}

func stable(b *strings.Builder, v any, top bool) {
	switch v := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		b.WriteString(strconv.FormatBool(v))
	case json.Number:
		b.WriteString(jsNumber(v))
	case string:
		b.WriteString(jsString(v))
	case []any:
		b.WriteByte('[')
		for i, it := range v {
			if i > 0 {
				b.WriteByte(',')
			}
			stable(b, it, false)
		}
		b.WriteByte(']')
	case map[string]any:
		keys := make([]string, 0, len(v))
		for key := range v {
			keys = append(keys, key)
		}
		// The engine's sort() of the keys: by UTF-16 code units.
		sort.Slice(keys, func(i, j int) bool { return utf16Less(keys[i], keys[j]) })
		b.WriteByte('{')
		for i, key := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			if top {
				b.WriteByte(0)
			}
			b.WriteString(jsString(key))
			b.WriteByte(':')
			stable(b, v[key], false)
			if top {
				b.WriteByte(0)
			}
		}
		b.WriteByte('}')
	default:
		fmt.Fprint(b, v)
	}
}

// utf16Less orders strings by UTF-16 code units, as JavaScript's sort does.
func utf16Less(a, b string) bool {
	for a != "" && b != "" {
		ra, na := utf8.DecodeRuneInString(a)
		rb, nb := utf8.DecodeRuneInString(b)
		if ra != rb {
			ua, ub := utf16Unit(ra), utf16Unit(rb)
			if ua != ub {
				return ua < ub
			}
			return ra < rb
		}
		a, b = a[na:], b[nb:]
	}
	return len(a) < len(b)
}

func utf16Unit(r rune) rune {
	if r >= 0x10000 {
		return 0xD800 + (r-0x10000)>>10
	}
	return r
}

// jsString is JSON.stringify of a string: quotes, backslashes and control characters
// escaped, nothing else.
func jsString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if r < 0x20 {
				fmt.Fprintf(&b, `\u%04x`, r)
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}

// jsNumber is JSON.stringify of a number.
func jsNumber(n json.Number) string {
	f, err := n.Float64()
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return "null"
	}
	if f == math.Trunc(f) && math.Abs(f) < 1e21 {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	if a := math.Abs(f); a >= 1e-6 && a < 1e21 {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	s := strconv.FormatFloat(f, 'e', -1, 64) // 1e+21, 1.5e-7
	mant, exp, _ := strings.Cut(s, "e")
	if e, err := strconv.Atoi(exp); err == nil {
		sign := "+"
		if e < 0 {
			sign = "-"
		}
		return mant + "e" + sign + strconv.Itoa(int(math.Abs(float64(e))))
	}
	return s
}
