// Package permissions is an engine's permission settings as a native plugin at the tool
// gate: the allow, ask and deny rules of its settings files and flags (Claude Code's
// `permissions.allow/ask/deny`, `--allowedTools`, `--disallowedTools`) under a
// permission mode (`--permission-mode`, `defaultMode`). The rules are runtime/permrule's
// (the hook "if" reads the same ones); what an engine's settings key is called, which
// lists an untrusted project may not set, what each mode does and what the model reads
// of a refusal are the engine's table (hookmap.Bridge.Permissions, from the spec). The
// design is docs/decisions/0023-permission-settings.md.
package permissions

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/generated/hookmap"
	"github.com/dshkit/dsh/runtime/permrule"
)

// Source is one settings file to read permissions from.
type Source struct {
	// Path is the file.
	Path string
	// Project marks a file dsh found in the project (not one the user named): the lists
	// the table calls untrusted load from it only when the project is trusted.
	Project bool
}

// Settings are the permissions the settings files hold.
type Settings struct {
	// Rules are their allow, ask and deny rules, in file order.
	Rules []permrule.Entry
	// DefaultMode is the last defaultMode set ("" for none), and DefaultModeSource where.
	DefaultMode, DefaultModeSource string
	// Ignored says, per file, what an untrusted project's file set that was not loaded
	// ("2 permissions.allow entries"), for a notice.
	Ignored []string
}

// ErrSettings is wrapped by every error of Load: a settings file whose permissions
// cannot be read as the engine writes them.
var ErrSettings = errors.New("permission settings")

// Load reads the permissions of each source that exists, in order. A file that does not
// parse, a permissions block that is not an object, a list that is not one of strings,
// a rule that does not parse ([permrule.RuleError]) or a defaultMode the table has no
// mode of is an error naming the file and the JSON path: dsh never runs with a rule the
// user wrote left out. A missing file is skipped.
func Load(t *hookmap.Permissions, srcs []Source, trusted bool) (Settings, error) {
	var (
		s    Settings
		errs []error
	)
	for _, src := range srcs {
		data, err := os.ReadFile(src.Path)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%w: %v", ErrSettings, err))
			continue
		}
		if err := s.read(t, src, data, trusted); err != nil {
			errs = append(errs, err)
		}
	}
	return s, errors.Join(errs...)
}

// read adds the permissions of one file's data.
func (s *Settings) read(t *hookmap.Permissions, src Source, data []byte, trusted bool) error {
	fail := func(path, format string, args ...any) error {
		return fmt.Errorf("%w: %s: %s: %s", ErrSettings, src.Path, path, fmt.Sprintf(format, args...))
	}
	var top map[string]json.RawMessage
	if len(bytes.TrimSpace(data)) == 0 {
		return nil
	}
	if err := json.Unmarshal(data, &top); err != nil {
		return fmt.Errorf("%w: %s: not a JSON object: %v", ErrSettings, src.Path, err)
	}
	raw, ok := top[t.Key]
	if !ok || string(raw) == "null" {
		return nil
	}
	var block map[string]json.RawMessage
	if err := json.Unmarshal(raw, &block); err != nil {
		return fail(t.Key, "not an object")
	}
	gated := func(list string) bool { return src.Project && !trusted && slices.Contains(t.Untrusted, list) }
	var errs []error
	for _, b := range []permrule.Behavior{permrule.Allow, permrule.Ask, permrule.Deny} {
		raw, ok := block[string(b)]
		if !ok || string(raw) == "null" {
			continue
		}
		path := t.Key + "." + string(b)
		var rules []string
		if err := json.Unmarshal(raw, &rules); err != nil {
			errs = append(errs, fail(path, "not a list of strings"))
			continue
		}
		if gated(string(b)) {
			if len(rules) > 0 {
				s.Ignored = append(s.Ignored, fmt.Sprintf("%s: %d %s %s", src.Path, len(rules), path, plural(len(rules), "entry", "entries")))
			}
			continue
		}
		entries, err := permrule.Entries(rules, b, src.Path+": "+path)
		s.Rules = append(s.Rules, entries...)
		if err != nil {
			errs = append(errs, fmt.Errorf("%w: %w", ErrSettings, err))
		}
	}
	if raw, ok := block["defaultMode"]; ok && string(raw) != "null" {
		var mode string
		switch {
		case json.Unmarshal(raw, &mode) != nil:
			errs = append(errs, fail(t.Key+".defaultMode", "not a string"))
		case t.Unsupported[mode] != "":
			errs = append(errs, fail(t.Key+".defaultMode", "permission mode %q: dsh does not have it: %s (want %s)", mode, t.Unsupported[mode], strings.Join(ModeNames(t), ", ")))
		case t.Modes[mode].Otherwise == "":
			errs = append(errs, fail(t.Key+".defaultMode", "%q is not a permission mode (want %s)", mode, strings.Join(ModeNames(t), ", ")))
		case gated("defaultMode"):
			s.Ignored = append(s.Ignored, fmt.Sprintf("%s: %s.defaultMode %q", src.Path, t.Key, mode))
		default:
			s.DefaultMode, s.DefaultModeSource = mode, src.Path
		}
	}
	return errors.Join(errs...)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// ModeNames returns the table's mode names, sorted.
func ModeNames(t *hookmap.Permissions) []string {
	out := make([]string, 0, len(t.Modes))
	for n := range t.Modes {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// Mode returns the table's mode name as a permrule.Mode, its rules parsed; an unknown
// name is an error listing the modes.
func Mode(t *hookmap.Permissions, name string) (permrule.Mode, error) {
	m, ok := t.Modes[name]
	if why, no := t.Unsupported[name]; no {
		return permrule.Mode{}, fmt.Errorf("permission mode %q: dsh does not have it: %s (want %s)", name, why, strings.Join(ModeNames(t), ", "))
	}
	if !ok {
		return permrule.Mode{}, fmt.Errorf("%q is not a permission mode (want %s)", name, strings.Join(ModeNames(t), ", "))
	}
	out := permrule.Mode{Name: name, Otherwise: permrule.Behavior(m.Otherwise)}
	for _, text := range m.Allow {
		r, err := permrule.Parse(text)
		if err != nil {
			return permrule.Mode{}, fmt.Errorf("mode %s: %w", name, err)
		}
		out.Allow = append(out.Allow, r)
	}
	for _, text := range m.Refuse {
		r, err := permrule.Parse(text)
		if err != nil {
			return permrule.Mode{}, fmt.Errorf("mode %s: %w", name, err)
		}
		out.Refuse = append(out.Refuse, r)
	}
	return out, nil
}

// FlagRules parses the rules of a flag (--allowedTools, --disallowedTools): each value
// is one or more rules separated by commas or spaces outside parentheses, as claude
// takes them.
func FlagRules(flag string, values []string, b permrule.Behavior) ([]permrule.Entry, error) {
	var rules []string
	for _, v := range values {
		rules = append(rules, splitRules(v)...)
	}
	return permrule.Entries(rules, b, flag)
}

// splitRules splits a flag value at commas and white space outside parentheses.
func splitRules(v string) []string {
	var (
		out   []string
		depth int
		cur   strings.Builder
	)
	flush := func() {
		if cur.Len() > 0 {
			out = append(out, cur.String())
			cur.Reset()
		}
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c == '\\' && i+1 < len(v):
			cur.WriteByte(c)
			cur.WriteByte(v[i+1])
			i++
			continue
		case c == '(':
			depth++
		case c == ')' && depth > 0:
			depth--
		case (c == ',' || c == ' ' || c == '\t') && depth == 0:
			flush()
			continue
		}
		cur.WriteByte(c)
	}
	flush()
	return out
}

// Plugin is the permission layer at the tool gate: at tools/pre-execute it decides every
// top-level call by the policy (deny, ask, or leave the call to the other listeners),
// and as a guard it denies again any call a deny rule matches, so that no other
// listener's allow lets one through. Each decision it makes is recorded.
type Plugin struct {
	// Policy is the rules and the mode.
	Policy permrule.Policy
	// Env is what the rules' matches depend on (the tools' table, the directories).
	Env permrule.Env
	// Texts are the engine's texts for the model (hookmap.Permissions).
	Texts *hookmap.Permissions
	// Unanswered, when set, replaces Texts.Unanswered for every ask (the mode's).
	Unanswered string
	// Record, when set, receives a decision/recorded for each decision the plugin makes
	// (listener "permissions"): what it did, and the rule or mode that decided.
	Record func(ctx context.Context, rec dsh.DecisionRecorded)

	words sync.Map // call id -> the engine's text of a refusal the plugin made (string)
}

// Name is the plugin's registered name.
func (p *Plugin) Name() string { return "permissions" }

// Register registers the plugin's tools/pre-execute listener and guard, and, when
// Texts.WholeDeniedHidden, its agent/request listener.
func (p *Plugin) Register(r *dsh.Registrar) (unregister func()) {
	a := r.OnPreTool(p.preTool)
	b := r.Guard(p.guard)
	c := r.OnPostTool(p.postTool)
	d := func() {}
	if p.Texts != nil && p.Texts.WholeDeniedHidden {
		d = r.OnRequest(p.request)
	}
	return func() { a(); b(); c(); d() }
}

// request leaves out of the request's tools each tool a deny rule names whole, as the
// engine does (Texts.WholeDeniedHidden); a call the model makes to one all the same is
// denied at the tool gate.
func (p *Plugin) request(ctx context.Context, pl *dsh.RequestPayload) (dsh.RequestDecision, error) {
	var allow, hidden, by []string
	for _, t := range pl.Request.Tools {
		if e := p.Policy.Hidden(t.Name); e != nil {
			hidden, by = append(hidden, t.Name), append(by, e.Source+": "+e.Rule.Text)
			continue
		}
		allow = append(allow, t.Name)
	}
	if len(hidden) == 0 {
		return dsh.RequestPass{}, nil
	}
	reason := "not offered: " + strings.Join(hidden, ", ") + " (denied whole by " + strings.Join(by, "; ") + ")"
	if allow == nil {
		allow = []string{}
	}
	if p.Record != nil {
		p.Record(ctx, dsh.DecisionRecorded{Point: dsh.RequestEventName, Listener: p.Name(), Decision: "restrict", Reason: &reason})
	}
	return dsh.RequestRestrict{Allow: allow, Reason: &reason}, nil
}

// refuse remembers the engine's text of a refusal of call id, for postTool.
func (p *Plugin) refuse(id, text string) string {
	p.words.Store(id, text)
	return text
}

// postTool gives the model the engine's text of a refusal the plugin made as it is,
// without the runtime's "Error: " before it (the result stays an error): a denial, or
// an ask no one answered.
func (p *Plugin) postTool(ctx context.Context, pl *dsh.PostToolPayload, next dsh.PostToolNext) (dsh.PostToolDecision, error) {
	text, ok := p.words.LoadAndDelete(pl.Exec.CallID)
	d, err := next.Call(ctx)
	if err != nil || !ok {
		return d, err
	}
	return Unprefixed(pl.Result, d, text.(string)), nil
}

// Unprefixed is d with the content the model reads of a refusal as the engine words it:
// when result is a failure whose one text block is the runtime's "Error: " before text,
// and d accepts it as it is, the content becomes text alone (the result stays an error).
// Any other decision or result is d unchanged.
func Unprefixed(result dsh.ToolExecutionResult, d dsh.PostToolDecision, text string) dsh.PostToolDecision {
	f, failed := result.(dsh.ToolFailure)
	acc, accepted := d.(dsh.PostToolAccept)
	if !failed || !accepted || acc.Content != nil || len(f.Content) != 1 {
		return d
	}
	if t, isText := f.Content[0].(dsh.TextBlock); isText && t.Text == "Error: "+text {
		acc.Content = []dsh.ContentBlock{dsh.TextBlock{Text: text}}
		return acc
	}
	return d
}

// preTool decides a call after the listeners registered after it (the innermost): a
// denial or a halt of theirs stands; otherwise the policy's deny or ask replaces their
// decision, and its allow keeps it.
func (p *Plugin) preTool(ctx context.Context, pl *dsh.PreToolPayload, next dsh.PreToolNext) (dsh.PreToolDecision, error) {
	d, err := next.Call(ctx)
	if err != nil {
		return d, err
	}
	switch d.(type) {
	case dsh.PreToolDeny, dsh.PreToolHalt:
		return d, nil
	default: // an allow or an ask: the policy decides below
	}
	if !pl.Exec.Parent.IsZero() {
		return d, nil // a composite's inner call: its outer call was decided
	}
	call := permrule.Call{Tool: pl.Exec.Name, Input: pl.Exec.Arguments}
	dec := p.Policy.Decide(call, p.Env)
	switch dec.Behavior {
	case permrule.Deny:
		reason := p.refuse(pl.Exec.CallID, p.denial(call, dec))
		p.record(ctx, "tools/pre-execute", pl.Exec.CallID, "deny", p.why(dec))
		return dsh.PreToolDeny{Reason: reason}, nil
	case permrule.Ask:
		if p.Unanswered != "" {
			// The mode refuses what would ask, asking no one (dontAsk).
			p.record(ctx, "tools/pre-execute", pl.Exec.CallID, "deny", p.why(dec))
			return dsh.PreToolDeny{Reason: p.refuse(pl.Exec.CallID, fill(p.Unanswered, call))}, nil
		}
		reason := fill(textFor(p.Texts.Unanswered, call.Tool), call)
		if dec.By == permrule.ByRule {
			reason = fill(textFor(p.Texts.RuleAsked, call.Tool), call)
		}
		if a, ok := d.(dsh.PreToolAsk); ok && a.Reason != nil && *a.Reason != "" {
			reason = *a.Reason // a listener's own ask keeps its words
		}
		p.refuse(pl.Exec.CallID, reason)
		p.record(ctx, "tools/pre-execute", pl.Exec.CallID, "ask", p.why(dec))
		return dsh.PreToolAsk{Reason: &reason}, nil
	}
	if dec.By == permrule.ByRule {
		p.record(ctx, "tools/pre-execute", pl.Exec.CallID, "allow", p.why(dec))
	}
	return d, nil
}

// guard denies a call a deny rule matches (or may match), whatever allowed it.
func (p *Plugin) guard(ctx context.Context, pl *dsh.GuardPayload) dsh.GuardVerdict {
	if !pl.Exec.Parent.IsZero() {
		return dsh.GuardAbstain{}
	}
	call := permrule.Call{Tool: pl.Exec.Name, Input: pl.Exec.Arguments}
	deny := permrule.Policy{As: p.Policy.As, Rules: slices.DeleteFunc(slices.Clone(p.Policy.Rules), func(e permrule.Entry) bool { return e.Behavior != permrule.Deny })}
	if dec := deny.Decide(call, p.Env); dec.By == permrule.ByRule {
		p.record(ctx, "tools/guard", pl.Exec.CallID, "deny", p.why(dec))
		return dsh.GuardDeny{Reason: p.refuse(pl.Exec.CallID, p.denial(call, dec))}
	}
	return dsh.GuardAbstain{}
}

// denial is the text the model reads of a denied call.
func (p *Plugin) denial(call permrule.Call, dec permrule.Decision) string {
	switch {
	case dec.By == permrule.ByModeRefuse:
		return fill(p.Texts.Modes[p.Policy.Mode.Name].Refused, call)
	case dec.Entry != nil && dec.Entry.Rule.Whole():
		return fill(p.Texts.WholeDenied, call)
	}
	return fill(textFor(p.Texts.Denied, call.Tool), call)
}

// why says what decided, for the record: the rule and where it was written, or the mode.
func (p *Plugin) why(dec permrule.Decision) string {
	switch dec.By {
	case permrule.ByRule:
		if dec.Entry == nil {
			return "allow rules together cover every subcommand"
		}
		s := fmt.Sprintf("%s rule %s (%s)", dec.Entry.Behavior, dec.Entry.Rule.Text, dec.Entry.Source)
		if dec.Undecided != "" {
			s += "; its match could not be told, so it counts: " + dec.Undecided
		}
		return s
	case permrule.ByModeRefuse:
		return "permission mode " + p.Policy.Mode.Name + " refuses the call"
	case permrule.ByModeAllow:
		return "permission mode " + p.Policy.Mode.Name + " allows the call"
	}
	return fmt.Sprintf("permission mode %s: %s", p.Policy.Mode.Name, dec.Behavior)
}

func (p *Plugin) record(ctx context.Context, point, callID, decision, reason string) {
	if p.Record == nil {
		return
	}
	id := callID
	p.Record(ctx, dsh.DecisionRecorded{Point: point, Listener: p.Name(), Decision: decision, Reason: &reason, CallID: &id})
}

// textFor is the tool's text of a per-tool table ("*": any other tool).
func textFor(m map[string]string, tool string) string {
	if s, ok := m[tool]; ok {
		return s
	}
	return m["*"]
}

// fill replaces {tool} with the call's tool and each {FIELD} with the top-level string
// FIELD of its input (a missing one stays as written).
func fill(text string, call permrule.Call) string {
	if !strings.Contains(text, "{") {
		return text
	}
	pairs := []string{"{tool}", call.Tool}
	var input map[string]json.RawMessage
	_ = json.Unmarshal(call.Input, &input)
	for k, raw := range input {
		var v string
		if json.Unmarshal(raw, &v) == nil {
			pairs = append(pairs, "{"+k+"}", v)
		}
	}
	return strings.NewReplacer(pairs...).Replace(text)
}

// RuleTable is the table's ruleTools as permrule reads them.
func RuleTable(t *hookmap.Bridge) permrule.Table {
	out := make(permrule.Table, len(t.RuleTools))
	for name, rt := range t.RuleTools {
		out[name] = permrule.Tool{Field: rt.Field, Kind: permrule.Kind(rt.Kind)}
	}
	return out
}
