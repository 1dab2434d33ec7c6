//go:build !race

// The column-edit tests load the spec with CUE (gen/load), which has no concurrency of
// its own: under -race they and this file are left out, so that the race run does not
// compile CUE with the race detector (docs/decisions/0015-ci.md, "The race run in CI").

package hooktest

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/dshkit/dsh/gen/ir"
	"github.com/dshkit/dsh/gen/load"
	"github.com/dshkit/dsh/generated/hookmap"
)

// SpecTable loads the table of gen's dialect from a temporary copy of spec/bridges (found
// at ../../spec/bridges, as from a bridge package's directory) in which edit (nil: none)
// rewrote file, e.g. "gemini.cue", as dshgen loads it (gen/load). The table has every
// column the copy says; its wire decoders, which the spec/wire packages define, stay
// gen's. An edit that changes nothing fails the test.
func SpecTable(t *testing.T, file string, gen *hookmap.Bridge, edit func(src string) string) *hookmap.Bridge {
	t.Helper()
	dir := t.TempDir()
	src := filepath.Join("..", "..", "spec", "bridges")
	names, err := filepath.Glob(filepath.Join(src, "*.cue"))
	if err != nil || len(names) == 0 {
		t.Fatalf("spec/bridges: %v (%d files)", err, len(names))
	}
	for _, n := range names {
		data, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		text := string(data)
		if filepath.Base(n) == file && edit != nil {
			edited := edit(text)
			if edited == text {
				t.Fatalf("the edit changed nothing in %s", file)
			}
			text = edited
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(n)), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bridges, err := load.Bridges(dir, "spec/bridges (edited copy)")
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bridges {
		if b.Dialect == gen.Dialect {
			return fromIR(t, b, gen)
		}
	}
	t.Fatalf("no %s table in the copy", gen.Dialect)
	return nil
}

// fromIR is the table b as generated/hookmap holds it, with gen's wire decoders.
func fromIR(t *testing.T, b *ir.Bridge, gen *hookmap.Bridge) *hookmap.Bridge {
	t.Helper()
	out := &hookmap.Bridge{Dialect: b.Dialect, Plugin: b.Plugin, DefaultTimeoutSec: b.DefaultTimeoutSec,
		Exit2EmptyStderr: b.Exit2EmptyStderr, JSONPrefixes: b.JSONPrefixes, InvalidJSON: b.InvalidJSON,
		StdinNewline: b.StdinNewline, Exit2ReadsJSON: b.Exit2ReadsJSON, Shell: b.Shell, TimeoutUnit: b.TimeoutUnit,
		NonPositiveTimeout: b.NonPositiveTimeout, ReadAnyExit: b.ReadAnyExit, WarningPrefix: b.WarningPrefix,
		PlainNotice: b.PlainNotice, SequentialGroups: b.SequentialGroups, DedupeByName: b.DedupeByName,
		InvalidRegexExact: b.InvalidRegexExact, SettingsBlock: b.SettingsBlock, RegexDialect: b.RegexDialect,
		SuspectCapture: b.SuspectCapture}
	if len(b.CommandVars) > 0 {
		out.CommandVars = b.CommandVars
	}
	if len(b.EventTimeoutSec) > 0 {
		out.EventTimeoutSec = b.EventTimeoutSec
	}
	if len(b.SystemContextModels) > 0 {
		out.SystemContextModels = b.SystemContextModels
	}
	if len(b.EffortModels) > 0 {
		out.EffortModels = b.EffortModels
	}
	if len(b.EffortEvents) > 0 {
		out.EffortEvents = b.EffortEvents
	}
	if len(b.Unfired) > 0 {
		out.Unfired = b.Unfired
	}
	if len(b.Pending) > 0 {
		out.Pending = b.Pending
	}
	for tool, ti := range b.ToolInputs {
		if out.ToolInputs == nil {
			out.ToolInputs = map[string]hookmap.ToolInput{}
		}
		t := hookmap.ToolInput{Keys: ti.Keys}
		for k, v := range ti.Defaults {
			if t.Defaults == nil {
				t.Defaults = map[string]string{}
			}
			t.Defaults[k] = string(v)
		}
		out.ToolInputs[tool] = t
	}
	for tool, rt := range b.RuleTools {
		if out.RuleTools == nil {
			out.RuleTools = map[string]hookmap.RuleTool{}
		}
		out.RuleTools[tool] = hookmap.RuleTool{Field: rt.Field, Kind: rt.Kind}
	}
	if len(b.IfEvents) > 0 {
		out.IfEvents = b.IfEvents
	}
	if o := b.OnFailure; o != nil {
		out.OnFailure = &hookmap.OnFailure{IgnoredOn: o.IgnoredOn, Failed: o.Failed, TimedOut: o.TimedOut, Because: o.Because}
	}
	out.AsyncRewake = b.AsyncRewake
	out.MCPToolName = b.MCPToolName
	if cl := b.ContextLimit; cl != nil {
		out.ContextLimit = &hookmap.ContextLimit{BytesPerToken: cl.BytesPerToken, Dir: cl.Dir, SessionField: cl.SessionField,
			Text: cl.Text, Marker: cl.Marker, Footer: cl.Footer}
	}
	for typ, h := range b.Handlers {
		if out.Handlers == nil {
			out.Handlers = map[string]hookmap.HandlerType{}
		}
		ht := hookmap.HandlerType{DefaultTimeoutSec: h.DefaultTimeoutSec, EventTimeoutSec: h.EventTimeoutSec, Refused: h.Refused,
			Placeholders: h.Placeholders, OnFailure: h.OnFailure, OnFailureBecause: h.OnFailureBecause, PlainAnswer: h.PlainAnswer, SystemPrompt: h.SystemPrompt, AnswerSchema: h.AnswerSchema}
		if len(h.RefusedAt) > 0 {
			ht.RefusedAt = h.RefusedAt
		}
		if c := h.Conversation; c != nil {
			ht.Conversation = &hookmap.ConversationPrompt{Events: c.Events, SystemPrompt: c.SystemPrompt, Condition: c.Condition}
		}
		if v := h.Verifier; v != nil {
			ht.Verifier = &hookmap.AgentVerifier{Intro: v.Intro, StopEvents: v.StopEvents, StopIntro: v.StopIntro, Transcript: v.Transcript,
				NoTranscript: v.NoTranscript, AnswerTool: v.AnswerTool, AnswerDescription: v.AnswerDescription, WithoutTools: v.WithoutTools,
				MaxTurns: v.MaxTurns, NotMet: v.NotMet, Enforce: v.Enforce, EnforceTimes: v.EnforceTimes, AgentID: v.AgentID}
		}
		if len(h.EventTimeoutSec) == 0 {
			ht.EventTimeoutSec = nil
		}
		out.Handlers[typ] = ht
	}
	if in := b.Instructions; in != nil {
		h := &hookmap.Instructions{Dirs: in.Dirs, ImportDepth: in.ImportDepth, MaxBytes: in.MaxBytes,
			Entry: in.Entry, Separator: in.Separator, Wrap: in.Wrap}
		for _, f := range in.Files {
			h.Files = append(h.Files, hookmap.InstructionFile{Path: f.Path, Base: f.Base, Kind: f.Kind, Label: f.Label})
		}
		out.Instructions = h
	}
	if c := b.Commands; c != nil {
		h := &hookmap.Commands{Separator: c.Separator, Texts: c.Texts, ArgsLine: c.ArgsLine, AppendArgs: c.AppendArgs}
		for _, d := range c.Dirs {
			h.Dirs = append(h.Dirs, hookmap.CommandDir{Path: d.Path, Base: d.Base, Source: d.Source, Trust: d.Trust})
		}
		out.Commands = h
	}
	if p := b.Permissions; p != nil {
		h := &hookmap.Permissions{Key: p.Key, Untrusted: p.Untrusted, Denied: p.Denied, WholeDenied: p.WholeDenied, WholeDeniedHidden: p.WholeDeniedHidden,
			Unanswered: p.Unanswered, RuleAsked: p.RuleAsked, RulesAs: p.RulesAs, Unsupported: p.Unsupported, Modes: map[string]hookmap.PermissionMode{}}
		for name, m := range p.Modes {
			hm := hookmap.PermissionMode{Refused: m.Refused, Otherwise: m.Otherwise, Unanswered: m.Unanswered}
			if len(m.Allow) > 0 {
				hm.Allow = m.Allow
			}
			if len(m.Refuse) > 0 {
				hm.Refuse = m.Refuse
			}
			h.Modes[name] = hm
		}
		out.Permissions = h
	}
	if p := b.ToolPolicy; p != nil {
		h := &hookmap.ToolPolicy{Key: p.Key, Core: p.Core, CorePriority: p.CorePriority, CoreOthersPriority: p.CoreOthersPriority,
			Exclude: p.Exclude, ExcludePriority: p.ExcludePriority, Shell: p.Shell, Denied: p.Denied, DeniedWith: p.DeniedWith,
			Unanswered: p.Unanswered, DisplayNames: p.DisplayNames, MaxPriority: p.MaxPriority, Mode: p.Mode,
			CatchAll: hookmap.PolicyRule{Decision: p.CatchAll.Decision, Priority: p.CatchAll.Priority}, MCPPrefix: p.MCPPrefix, Unsupported: p.Unsupported}
		for _, d := range p.Dirs {
			h.Dirs = append(h.Dirs, hookmap.PolicyDir{Path: d.Path, Base: d.Base, Tier: d.Tier, Name: d.Name, Secure: d.Secure})
		}
		out.ToolPolicy = h
	}
	for _, e := range b.Events {
		g, ok := gen.Lookup(e.Event)
		if !ok {
			t.Fatalf("event %s is not in the generated table", e.Event)
		}
		ev := hookmap.Event{Name: e.Event, Point: e.Point, Input: e.Input, Output: e.Output, Matcher: e.Matcher, MatcherKind: e.MatcherKind,
			PlainStdoutContext: e.PlainStdoutContext, FallbackReason: e.FallbackReason, Scope: e.Scope, Halt: e.Halt,
			BlockInjects: e.BlockInjects, HarmlessContexts: e.HarmlessContexts, CommandsOnly: e.CommandsOnly, Relayed: e.Relayed,
			HaltReason: e.HaltReason, Exit2: e.Exit2, Contexts: append([]string{}, e.Contexts...), JoinReasons: e.JoinReasons,
			Rules: []hookmap.Rule{}, Notices: []hookmap.Notice{}, DecodeOutput: g.DecodeOutput}
		for _, r := range e.Rules {
			ev.Rules = append(ev.Rules, hookmap.Rule{When: r.When, Is: r.Is, Then: r.Then, Reason: r.Reason, NeedsReason: r.NeedsReason, Unless: r.Unless})
		}
		for _, n := range e.Notices {
			ev.Notices = append(ev.Notices, hookmap.Notice{When: n.When, Text: n.Text})
		}
		ev.Subject, ev.Results = e.Subject, e.Results
		for _, a := range e.Also {
			ev.Also = append(ev.Also, hookmap.Also{Point: a.Point, Status: a.Status, Subject: a.Subject, Interactive: a.Interactive,
				Before: a.Before, Engine: a.Engine})
		}
		if tc := e.Tail; tc != nil {
			ev.Tail = &hookmap.TailCall{Output: tc.Output, Name: tc.Name, Arguments: tc.Arguments}
		}
		if po := e.PassOn; po != nil {
			ev.PassOn = &hookmap.PassOn{Output: po.Output, Stdin: po.Stdin, Join: po.Join}
		}
		if r := e.Rewrite; r != nil {
			ev.Rewrite = &hookmap.Rewrite{Input: r.Input, Mode: r.Mode, Requires: r.Requires, RequiresIs: r.RequiresIs, Stdin: r.Stdin, Note: r.Note, NonObjectBlocks: r.NonObjectBlocks}
		}
		out.Events = append(out.Events, ev)
	}
	return out
}

// WithoutDecoders is tb without its funcs, for comparison with reflect.DeepEqual.
func WithoutDecoders(tb *hookmap.Bridge) hookmap.Bridge {
	c := *tb
	c.Events = append([]hookmap.Event(nil), tb.Events...)
	for i := range c.Events {
		c.Events[i].DecodeOutput = nil
	}
	return c
}

// EditField returns an edit (for SpecTable) replacing old by new in the first
// `field: old` after the table entry of event ("" for the table's top level). It leaves a
// source without a match as it is.
func EditField(event, field, old, new string) func(string) string {
	return func(src string) string {
		start := 0
		if event != "" {
			if start = strings.Index(src, "\t"+event+": {"); start < 0 {
				return src
			}
		}
		re := regexp.MustCompile(`(\b` + regexp.QuoteMeta(field) + `:\s*)` + regexp.QuoteMeta(old))
		loc := re.FindStringSubmatchIndex(src[start:])
		if loc == nil {
			return src
		}
		return src[:start+loc[3]] + new + src[start+loc[1]:]
	}
}
