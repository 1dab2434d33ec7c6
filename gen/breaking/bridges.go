package breaking

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/dshkit/dsh/gen"
	"github.com/dshkit/dsh/gen/ir"
)

// bridges compares the bridge tables (spec/bridges): a configured hook of a dialect must
// keep running at the same point, on the same calls, with its exit code and output read
// the same way.
func (c *comparer) bridges(old, new []*ir.Bridge) {
	dir := gen.BridgesDir
	find := func(bs []*ir.Bridge, d string) *ir.Bridge {
		for _, b := range bs {
			if b.Dialect == d {
				return b
			}
		}
		return nil
	}
	for _, ob := range old {
		nb := find(new, ob.Dialect)
		if nb == nil {
			c.report(HookDialectRemoved, dir, ob.Pos, "dialect %q was removed: its configured hooks no longer run", ob.Dialect)
			continue
		}
		at := nb.Pos
		if ob.DefaultTimeoutSec != nb.DefaultTimeoutSec {
			c.report(HookTimeoutChanged, dir, at, "%s: default timeout %ds is now %ds", ob.Dialect, ob.DefaultTimeoutSec, nb.DefaultTimeoutSec)
		}
		if ob.Exit2EmptyStderr != nb.Exit2EmptyStderr {
			c.report(HookExitCodeChanged, dir, at, "%s: exit 2 with blank stderr was %s and is now %s", ob.Dialect, ob.Exit2EmptyStderr, nb.Exit2EmptyStderr)
		}
		if ob.Exit2ReadsJSON != nb.Exit2ReadsJSON {
			c.report(HookExitCodeChanged, dir, at, "%s: JSON stdout on exit 2 %s and now %s", ob.Dialect, counts(ob.Exit2ReadsJSON), counts(nb.Exit2ReadsJSON))
		}
		if ob.Wire != nb.Wire {
			c.report(HookIOChanged, dir, at, "%s: wire package %s is now %s", ob.Dialect, ob.Wire, nb.Wire)
		}
		if !slices.Equal(ob.JSONPrefixes, nb.JSONPrefixes) {
			c.report(HookIOChanged, dir, at, "%s: stdout counts as JSON when it starts with %q, was %q", ob.Dialect, nb.JSONPrefixes, ob.JSONPrefixes)
		}
		if ob.InvalidJSON != nb.InvalidJSON {
			c.report(HookIOChanged, dir, at, "%s: invalid JSON stdout was %s and is now %s", ob.Dialect, ob.InvalidJSON, nb.InvalidJSON)
		}
		if ob.StdinNewline != nb.StdinNewline {
			c.report(HookIOChanged, dir, at, "%s: stdin newline %v is now %v", ob.Dialect, ob.StdinNewline, nb.StdinNewline)
		}
		c.bridgeFields(ob, nb)
		for _, oe := range ob.Events {
			ne := findBridgeEvent(nb.Events, oe.Event)
			if ne == nil {
				c.report(HookEventRemoved, dir, nb.Pos, "%s: event %s is no longer mapped: hooks configured for it stop running", ob.Dialect, oe.Event)
				continue
			}
			c.bridgeEvent(ob.Dialect, oe, ne)
		}
		for _, ne := range nb.Events {
			if findBridgeEvent(ob.Events, ne.Event) == nil {
				c.note(dir, ne.Pos, "%s: new event %s: compatible (no configuration names it yet)", ob.Dialect, ne.Event)
			}
		}
		c.handlerTypes(ob, nb)
		for _, ev := range slices.Sorted(maps.Keys(ob.Unfired)) {
			if _, ok := nb.Unfired[ev]; !ok && findBridgeEvent(nb.Events, ev) == nil {
				c.report(HookEventRemoved, dir, nb.Pos, "%s: event %s, which dsh never fired, is no longer known: a hooks file naming it no longer loads", ob.Dialect, ev)
			}
		}
	}
	for _, nb := range new {
		if find(old, nb.Dialect) == nil {
			c.note(dir, nb.Pos, "new dialect %q: compatible", nb.Dialect)
		}
	}
}

// bridgeFields compares the table-wide fields of the Gemini CLI dialect (absent ones read
// as their defaults, so a table that does not set them compares equal).
func (c *comparer) bridgeFields(o, n *ir.Bridge) {
	dir, at, d := gen.BridgesDir, n.Pos, o.Dialect
	ou, nu := or(o.TimeoutUnit, "s"), or(n.TimeoutUnit, "s")
	onp, nnp := or(o.NonPositiveTimeout, "default"), or(n.NonPositiveTimeout, "default")
	if ou != nu || onp != nnp {
		c.report(HookTimeoutChanged, dir, at, "%s: timeouts in %s (0 or less: %s) are now in %s (%s)", d, ou, onp, nu, nnp)
	}
	if o.ReadAnyExit != n.ReadAnyExit || o.WarningPrefix != n.WarningPrefix || o.PlainNotice != n.PlainNotice {
		c.report(HookExitCodeChanged, dir, at, "%s: output on any exit %v (warning %q, plain notice %v) is now %v (%q, %v)", d, o.ReadAnyExit, o.WarningPrefix, o.PlainNotice, n.ReadAnyExit, n.WarningPrefix, n.PlainNotice)
	}
	if !slices.Equal(o.Shell, n.Shell) || !maps.Equal(o.CommandVars, n.CommandVars) {
		c.report(HookIOChanged, dir, at, "%s: shell %q and command variables %v are now %q and %v", d, o.Shell, o.CommandVars, n.Shell, n.CommandVars)
	}
	if o.SequentialGroups != n.SequentialGroups || o.DedupeByName != n.DedupeByName || o.SettingsBlock != n.SettingsBlock {
		c.report(HookIOChanged, dir, at, "%s: sequential groups %v, de-duplication by name %v, settings block %q are now %v, %v, %q", d, o.SequentialGroups, o.DedupeByName, o.SettingsBlock, n.SequentialGroups, n.DedupeByName, n.SettingsBlock)
	}
	if o.InvalidRegexExact != n.InvalidRegexExact {
		c.report(HookMatcherChanged, dir, at, "%s: an invalid regex matcher is an exact string: %v, now %v", d, o.InvalidRegexExact, n.InvalidRegexExact)
	}
}

// handlerTypes compares the handler types a dialect runs besides "command": a type that
// no longer runs stops its configured hooks, and another default timeout ends them at
// another time.
func (c *comparer) handlerTypes(o, n *ir.Bridge) {
	dir, at, d := gen.BridgesDir, n.Pos, o.Dialect
	for _, typ := range slices.Sorted(maps.Keys(o.Handlers)) {
		oh, nh := o.Handlers[typ], n.Handlers[typ]
		if nh == nil {
			c.report(HookIOChanged, dir, at, "%s: %s handlers no longer run: hooks configured with them are refused at load", d, typ)
			continue
		}
		if oh.DefaultTimeoutSec != nh.DefaultTimeoutSec || !maps.Equal(oh.EventTimeoutSec, nh.EventTimeoutSec) {
			c.report(HookTimeoutChanged, dir, at, "%s: %s handlers' default timeout %ds (by event %v) is now %ds (%v)", d, typ, oh.DefaultTimeoutSec, oh.EventTimeoutSec, nh.DefaultTimeoutSec, nh.EventTimeoutSec)
		}
	}
	for _, typ := range slices.Sorted(maps.Keys(n.Handlers)) {
		if o.Handlers[typ] == nil {
			c.note(dir, at, "%s: %s handlers now run: compatible (they were refused at load)", d, typ)
		}
	}
}

// matcher names the field an event's matchers test, and how when the table says.
func matcher(e *ir.BridgeEvent) string {
	if e.MatcherKind == "" {
		return orNone(e.Matcher)
	}
	return orNone(e.Matcher) + " (" + e.MatcherKind + ")"
}

// or is s, or def when s is empty (a field a spec before it did not have).
func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func counts(b bool) string {
	if b {
		return "counted"
	}
	return "was ignored"
}

func findBridgeEvent(es []*ir.BridgeEvent, n string) *ir.BridgeEvent {
	for _, e := range es {
		if e.Event == n {
			return e
		}
	}
	return nil
}

func (c *comparer) bridgeEvent(dialect string, o, n *ir.BridgeEvent) {
	dir := gen.BridgesDir
	at := n.Pos
	ev := dialect + " " + o.Event
	if o.Point != n.Point {
		c.report(HookEventPointChanged, dir, at, "%s: maps onto %q, was %q", ev, n.Point, o.Point)
	}
	if o.Input != n.Input || o.Output != n.Output {
		c.report(HookIOChanged, dir, at, "%s: stdin/stdout records %s/%s are now %s/%s", ev, o.Input, o.Output, n.Input, n.Output)
	}
	if o.Matcher != n.Matcher || o.MatcherKind != n.MatcherKind {
		c.report(HookMatcherChanged, dir, at, "%s: matchers test %s, was %s", ev, matcher(n), matcher(o))
	}
	if o.Exit2 != n.Exit2 {
		c.report(HookExitCodeChanged, dir, at, "%s: exit 2 was %s and is now %s", ev, o.Exit2, n.Exit2)
	}
	if o.Halt != n.Halt || o.HaltReason != n.HaltReason {
		c.report(HookHaltChanged, dir, at, "%s: continue:false halt=%v (%q) is now halt=%v (%q)", ev, o.Halt, o.HaltReason, n.Halt, n.HaltReason)
	}
	if !slices.Equal(o.Contexts, n.Contexts) || o.PlainStdoutContext != n.PlainStdoutContext {
		c.report(HookContextsChanged, dir, at, "%s: context from %s (plain stdout %v) is now from %s (plain stdout %v)", ev, list(o.Contexts), o.PlainStdoutContext, list(n.Contexts), n.PlainStdoutContext)
	}
	if o.FallbackReason != n.FallbackReason || o.JoinReasons != n.JoinReasons || o.Scope != n.Scope {
		c.report(HookReasonsChanged, dir, at, "%s: reasons (fallback %q, join %s, scope %s) are now (fallback %q, join %s, scope %s)", ev, o.FallbackReason, o.JoinReasons, orNone(o.Scope), n.FallbackReason, n.JoinReasons, orNone(n.Scope))
	}
	if rewrite(o.Rewrite) != rewrite(n.Rewrite) {
		c.report(HookRewriteChanged, dir, at, "%s: rewrite %s is now %s", ev, rewrite(o.Rewrite), rewrite(n.Rewrite))
	}
	if notices(o.Notices) != notices(n.Notices) {
		c.report(HookNoticesChanged, dir, at, "%s: notices %s are now %s", ev, notices(o.Notices), notices(n.Notices))
	}
	c.rules(ev, o, n)
}

// rules compares an event's decision table: the first rule that holds wins, so a row
// that changes, goes away, or moves before another changes what an output means. Rows
// appended after every old row only decide outputs no old row matched, which an old
// configuration did not rely on, so they are a note.
func (c *comparer) rules(ev string, o, n *ir.BridgeEvent) {
	dir := gen.BridgesDir
	for i, or := range o.Rules {
		if i >= len(n.Rules) {
			c.report(HookRulesChanged, dir, n.Pos, "%s: rule %d (%s) was removed", ev, i+1, rule(or))
			return
		}
		if nr := n.Rules[i]; rule(or) != rule(nr) {
			c.report(HookRulesChanged, dir, n.Pos, "%s: rule %d was %s and is now %s", ev, i+1, rule(or), rule(nr))
			return
		}
	}
	for i := len(o.Rules); i < len(n.Rules); i++ {
		c.note(dir, n.Pos, "%s: new last rule %d (%s): compatible (it only decides outputs no earlier rule decided)", ev, i+1, rule(n.Rules[i]))
	}
}

func rule(r *ir.BridgeRule) string {
	var b strings.Builder
	fmt.Fprintf(&b, "when %s", r.When)
	if r.Is != "" {
		fmt.Fprintf(&b, " is %s", r.Is)
	}
	if r.Unless != "" {
		fmt.Fprintf(&b, " unless %s", r.Unless)
	}
	fmt.Fprintf(&b, " then %s", r.Then)
	if r.Reason != "" {
		fmt.Fprintf(&b, " reason %s", r.Reason)
	}
	if r.NeedsReason {
		b.WriteString(" (needs a reason)")
	}
	return b.String()
}

func rewrite(r *ir.BridgeRewrite) string {
	if r == nil {
		return "(none)"
	}
	extra := ""
	if r.Stdin != "" || r.Note != "" {
		extra = fmt.Sprintf(", stdin %s, note %q", orNone(r.Stdin), r.Note)
	}
	return fmt.Sprintf("{input %s, mode %s, requires %s=%s%s}", r.Input, orNone(r.Mode), orNone(r.Requires), r.RequiresIs, extra)
}

func notices(ns []*ir.BridgeNotice) string {
	var parts []string
	for _, n := range ns {
		parts = append(parts, fmt.Sprintf("%s:%q", n.When, n.Text))
	}
	return list(parts)
}

func list(s []string) string { return "[" + strings.Join(s, ", ") + "]" }

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}
