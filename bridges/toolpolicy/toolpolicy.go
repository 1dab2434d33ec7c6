// Package toolpolicy is an engine's settings and policy files that narrow its toolset,
// as a native plugin: Gemini CLI's tools.exclude (tools not offered), tools.core (the only
// tools offered, a shell entry "run_shell_command(PREFIX)" narrowing the commands run) and
// its policy rules (the TOML [[rule]] tables of its policy directories: allow, deny or
// ask_user a tool, an MCP server's tools, a command prefix or an arguments pattern, at a
// priority). The lists and the rules make one list ranked as the engine ranks it (Rank);
// what the keys are called, how the lists rank, where the files are, which tool is the
// shell and what the model reads of a refusal are the dialect's table
// (dialect.ToolPolicy, spec/bridges). At agent/request the plugin leaves the tools the
// rules do not offer out of the request; at the tool gate it denies a call they deny, or
// ask for (no one answers in a headless run), after the hooks before the call have run
// (as the engine runs its BeforeTool hooks first).
package toolpolicy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/dshkit/dsh/bridges/dialect"
	"github.com/dshkit/dsh/bridges/permissions"
	"github.com/dshkit/dsh/generated/dsh"
)

// Entry is one entry of a core or exclude list.
type Entry struct {
	// Tool is the tool's name.
	Tool string
	// Prefix is the command prefix of a "TOOL(PREFIX)" entry.
	Prefix string
	// Narrow says the entry has a prefix.
	Narrow bool
	// Source is where the entry was written ("FILE: tools.core").
	Source string
}

// Settings are the lists the settings files set.
type Settings struct {
	// Core is the core list of the last file that sets one; nil: none is set (every
	// tool is offered).
	Core []Entry
	// CoreSource is where Core was set ("FILE: tools.core").
	CoreSource string
	// Exclude are the exclude lists of every file, in file order.
	Exclude []Entry
	// Ignored says which untrusted project file's core list was not loaded, for a notice.
	Ignored []string
}

// Source is one settings file to read the lists from.
type Source struct {
	// Path is the file.
	Path string
	// Project marks a file dsh found in the project (not one the user named): its core
	// list, which may widen what another file's allows, loads only when the project is
	// trusted (the engine reads an untrusted folder's settings not at all); its exclude
	// list restricts, and loads whatever the trust.
	Project bool
}

// ErrSettings is wrapped by every error of Load.
var ErrSettings = errors.New("tool settings")

// entryRE is an entry with arguments, as the engine reads one.
var entryRE = regexp.MustCompile(`^([a-zA-Z0-9_-]+)\((.*)\)$`)

// Load reads the lists of each file that exists, in order. A file that does not parse, a
// block that is not an object, or a list that is not one of strings is an error naming the
// file and the field: dsh never runs with an entry the user wrote left out. A missing file
// is skipped.
func Load(t *dialect.ToolPolicy, files []Source, trusted bool) (Settings, error) {
	var (
		s    Settings
		errs []error
	)
	for _, src := range files {
		path := src.Path
		data, err := os.ReadFile(path)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%w: %v", ErrSettings, err))
			continue
		}
		if err := s.read(t, path, data, src.Project && !trusted); err != nil {
			errs = append(errs, err)
		}
	}
	return s, errors.Join(errs...)
}

// read adds the lists of one file's data.
func (s *Settings) read(t *dialect.ToolPolicy, path string, data []byte, untrusted bool) error {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return fmt.Errorf("%w: %s: not a JSON object: %v", ErrSettings, path, err)
	}
	if err := unsupported(t, path, top); err != nil {
		return err
	}
	raw, ok := top[t.Key]
	if !ok || string(raw) == "null" {
		return nil
	}
	var block map[string]json.RawMessage
	if err := json.Unmarshal(raw, &block); err != nil {
		return fmt.Errorf("%w: %s: %s: not an object", ErrSettings, path, t.Key)
	}
	var errs []error
	list := func(name string) ([]Entry, bool) {
		raw, ok := block[name]
		if !ok || string(raw) == "null" {
			return nil, false
		}
		field := t.Key + "." + name
		var items []string
		var strict []*string // a null item is not a string
		if err := json.Unmarshal(raw, &strict); err != nil || slices.Contains(strict, nil) {
			errs = append(errs, fmt.Errorf("%w: %s: %s: not a list of strings", ErrSettings, path, field))
			return nil, false
		}
		out := make([]Entry, 0, len(strict))
		for _, it := range strict {
			items = append(items, *it)
		}
		for _, it := range items {
			e := Entry{Tool: it, Source: path + ": " + field}
			if m := entryRE.FindStringSubmatch(it); m != nil {
				e.Tool, e.Prefix, e.Narrow = m[1], m[2], true
			}
			out = append(out, e)
		}
		return out, true
	}
	if core, ok := list(t.Core); ok && untrusted {
		s.Ignored = append(s.Ignored, fmt.Sprintf("%s: %s.%s", path, t.Key, t.Core))
	} else if ok {
		s.Core, s.CoreSource = core, path+": "+t.Key+"."+t.Core // a later file's replaces an earlier one's
	}
	if ex, ok := list(t.Exclude); ok {
		s.Exclude = append(s.Exclude, ex...)
	}
	return errors.Join(errs...)
}

// unsupported refuses a settings file that sets one of the table's unsupported keys (a
// dotted path from the top level): dsh would run what the setting stops.
func unsupported(t *dialect.ToolPolicy, path string, top map[string]json.RawMessage) error {
	keys := slices.Sorted(maps.Keys(t.Unsupported))
	var errs []error
	for _, key := range keys {
		parts := strings.Split(key, ".")
		cur := top
		for i, p := range parts {
			raw, ok := cur[p]
			if !ok || string(raw) == "null" {
				break
			}
			if i == len(parts)-1 {
				errs = append(errs, fmt.Errorf("%w: %s: %s is set, and %s", ErrSettings, path, key, t.Unsupported[key]))
				break
			}
			next := map[string]json.RawMessage{}
			if json.Unmarshal(raw, &next) != nil {
				break // not an object: the engine's own schema check refuses it
			}
			cur = next
		}
	}
	return errors.Join(errs...)
}

// Empty says the settings narrow nothing.
func (s Settings) Empty() bool { return s.Core == nil && len(s.Exclude) == 0 }

// Plugin is the tool settings and policy rules at agent/request and at the tool gate.
// Each decision it makes is recorded.
type Plugin struct {
	// Table is the dialect's (the keys, the shell tool, the ranks, the texts).
	Table *dialect.ToolPolicy
	// Settings are the lists.
	Settings Settings
	// Policies are the policy files' rules (LoadPolicies), in load order.
	Policies []Rule
	// Record, when set, receives a decision/recorded for each decision the plugin makes
	// (listener "tool-settings").
	Record func(ctx context.Context, rec dsh.DecisionRecorded)

	once   sync.Once
	ranked *Ranked
	denied sync.Map // call id -> the text of the plugin's refusal
}

// Name is the plugin's registered name.
func (p *Plugin) Name() string { return "tool-settings" }

// Register registers the plugin's agent/request, tools/pre-execute, tools/guard and
// tools/post-execute listeners.
func (p *Plugin) Register(r *dsh.Registrar) (unregister func()) {
	a := r.OnRequest(p.request)
	b := r.OnPreTool(p.preTool)
	c := r.Guard(p.guard)
	d := r.OnPostTool(p.postTool)
	return func() { a(); b(); c(); d() }
}

// rules are the ranked rules.
func (p *Plugin) rules() *Ranked {
	p.once.Do(func() { p.ranked = Rank(p.Table, p.Settings, p.Policies) })
	return p.ranked
}

// offered says whether the rules offer the tool, and if not, why.
func (p *Plugin) offered(tool string) (bool, string) {
	ok, r := p.rules().Offered(tool)
	if ok {
		return true, ""
	}
	if r == nil {
		return false, "no rule offers it"
	}
	return false, p.denial(r)
}

// denial is why a deny rule denies.
func (p *Plugin) denial(r *Rule) string {
	if strings.HasSuffix(r.Source, "."+p.Table.Exclude) {
		return "excluded by " + r.Source
	}
	if src, ok := strings.CutSuffix(r.Source, notNamed); ok {
		return "not in " + src
	}
	return "denied by " + r.Source
}

// request leaves out of the request's tools each tool the settings do not offer.
func (p *Plugin) request(ctx context.Context, pl *dsh.RequestPayload) (dsh.RequestDecision, error) {
	allow, hidden := []string{}, []string(nil)
	for _, t := range pl.Request.Tools {
		if ok, _ := p.offered(t.Name); ok {
			allow = append(allow, t.Name)
		} else {
			hidden = append(hidden, t.Name)
		}
	}
	if len(hidden) == 0 {
		return dsh.RequestPass{}, nil
	}
	reason := "not offered: " + strings.Join(hidden, ", ") + " (the " + p.Table.Key + " settings)"
	if p.Record != nil {
		p.Record(ctx, dsh.DecisionRecorded{Point: dsh.RequestEventName, Listener: p.Name(), Decision: "restrict", Reason: &reason})
	}
	return dsh.RequestRestrict{Allow: allow, Reason: &reason}, nil
}

// Decide says whether the rules allow a call of tool with input, and if not, why.
func (p *Plugin) Decide(tool string, input json.RawMessage) (bool, string) {
	v := p.rules().Check(tool, input)
	return v.Decision == Allow, p.why(v)
}

// why is a verdict's reason, for the record.
func (p *Plugin) why(v Verdict) string {
	switch {
	case v.Decision == Allow:
		return ""
	case v.Rule == nil:
		return "no rule allows it"
	case v.Decision == Ask:
		return "asks for confirmation (" + v.Rule.Source + "), which no one can give in a headless run"
	}
	return p.denial(v.Rule)
}

// preTool decides a call after the listeners registered after it (the hooks): a denial or
// a halt of theirs stands; otherwise a call the settings do not allow is denied.
func (p *Plugin) preTool(ctx context.Context, pl *dsh.PreToolPayload, next dsh.PreToolNext) (dsh.PreToolDecision, error) {
	d, err := next.Call(ctx)
	if err != nil {
		return d, err
	}
	switch d.(type) {
	case dsh.PreToolDeny, dsh.PreToolHalt:
		return d, nil
	default:
	}
	if !pl.Exec.Parent.IsZero() {
		return d, nil // a composite's inner call: its outer call was decided
	}
	if v := p.rules().Check(pl.Exec.Name, pl.Exec.Arguments); v.Decision != Allow {
		text := p.rules().Text(pl.Exec.Name, v)
		p.deny(ctx, "tools/pre-execute", pl.Exec.CallID, v, text)
		return dsh.PreToolDeny{Reason: text}, nil
	}
	return d, nil
}

// guard denies again a call the settings do not allow, whatever allowed it.
func (p *Plugin) guard(ctx context.Context, pl *dsh.GuardPayload) dsh.GuardVerdict {
	if !pl.Exec.Parent.IsZero() {
		return dsh.GuardAbstain{}
	}
	if v := p.rules().Check(pl.Exec.Name, pl.Exec.Arguments); v.Decision != Allow {
		text := p.rules().Text(pl.Exec.Name, v)
		p.deny(ctx, "tools/guard", pl.Exec.CallID, v, text)
		return dsh.GuardDeny{Reason: text}
	}
	return dsh.GuardAbstain{}
}

// deny records a refusal of the call and keeps its text for the result.
func (p *Plugin) deny(ctx context.Context, point, callID string, v Verdict, text string) {
	p.denied.Store(callID, text)
	if p.Record == nil {
		return
	}
	id, reason := callID, p.why(v)
	p.Record(ctx, dsh.DecisionRecorded{Point: point, Listener: p.Name(), Decision: "deny", Reason: &reason, CallID: &id})
}

// postTool gives the model the engine's text of a denial the plugin made as it is,
// without the runtime's "Error: " before it (the result stays an error).
func (p *Plugin) postTool(ctx context.Context, pl *dsh.PostToolPayload, next dsh.PostToolNext) (dsh.PostToolDecision, error) {
	text, ok := p.denied.LoadAndDelete(pl.Exec.CallID)
	d, err := next.Call(ctx)
	if err != nil || !ok {
		return d, err
	}
	return permissions.Unprefixed(pl.Result, d, text.(string)), nil
}
