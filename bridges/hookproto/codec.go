package hookproto

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"unicode/utf8"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/generated/hookmap"
)

// Verdict is what one hook run came to at its event, decoded through the dialect's table
// (generated/hookmap): an outcome, the reason of a decision, the contexts and notices it
// contributes, and diagnostics explaining anything dropped or failed.
type Verdict struct {
	// Outcome is one of the nine dsh.HookOutcome values. error, timeout and failed carry
	// no decision; halt means continue:false at an event that halts (the reason is the
	// stopReason).
	Outcome Outcome
	// Reason is the reason of a deny, ask, block or halt, after the event's fallback
	// (blocks and denies) was applied; may be empty for ask, allow and pass.
	Reason string
	// Contexts are the context strings the hook contributed, in table order (plain
	// stdout last, where it counts), empty ones left out, not yet capped.
	Contexts []string
	// Notices are the user-facing notices (systemMessage and recorded-but-not-applied
	// fields), never model-visible.
	Notices []string
	// Diagnostics explain what the codec dropped or why the hook failed: a process
	// failure, invalid output, an ignored hookSpecificOutput, invalid UTF-8.
	Diagnostics []string
	// Rewrite is the hook's new arguments for the call (the event's Rewrite input, e.g.
	// updatedInput), JSON; nil when it rewrites nothing. A failed hook rewrites nothing.
	Rewrite json.RawMessage
	// RewriteMerge makes Rewrite a JSON merge patch over the current arguments instead of
	// a replacement.
	RewriteMerge bool
	// HaltBefore says a halt ends the turn before the call it stands before, which never
	// runs: a halt of a rule of the event's table (Claude Code's PreToolUse "defer"), or
	// continue:false together with a block or deny (in the same JSON, or with exit 2), where
	// continue:false alone may let the call run (Render.PreHaltRunsTool).
	HaltBefore bool
	// AsExit2 says a failure counts as exit 2 (a handler's onFailure "block"), its Reason
	// standing for the stderr the engine shows.
	AsExit2 bool
}

// HasDecision reports whether the verdict carries a decision (allow, deny, ask, block or
// halt).
func (v Verdict) HasDecision() bool { return rank(v.Outcome) > 0 || v.Outcome == dsh.HookOutcomeHalt }

// Decode turns one run's Result into a Verdict at event ev under the table b, following
// dsh bridge decisions 1, 2, 4 and 7:
//
//   - a process outcome (timeout, cancellation, spawn or I/O failure, signal) is timeout
//     or error, with a diagnostic;
//   - output over the runner's cap may lose its text, never a block: exit 2 blocks
//     whatever the size of stderr (the reason is the kept stderr with a truncation
//     note); white space past the cap loses nothing (a JSON decision followed by a
//     megabyte of spaces still counts); exit-0 stdout whose text past the cap was lost
//     and that may be JSON (it looks like JSON, or its kept part is blank) cannot be
//     read, so it is the event's blocking outcome where exit 2 blocks (fail closed) and
//     error elsewhere; plain stdout keeps its kept part with a note;
//   - exit 2 blocks with the trimmed stderr as reason (the event's blocking outcome:
//     deny where the table denies, else block; error where the table says exit 2 is not
//     honoured); blank stderr does what
//     b.Exit2EmptyStderr says (block with the fallback reason, or failed); stdout is
//     ignored;
//   - any other non-zero exit code is error;
//   - under b.ReadAnyExit (Gemini CLI) a death by signal reads as exit 0, and the exit code
//     does not gate the output: stdout, or
//     stderr when stdout is blank, is read as JSON whatever the exit code, and text that
//     is not JSON decides by the exit code (see decodeAnyExit);
//   - exit 0: empty stdout is pass; stdout starting with one of b.JSONPrefixes is
//     decoded strictly with ev.DecodeOutput (a failure is b.InvalidJSON) and the
//     event's rules, halt, contexts and notices are evaluated over it; other stdout is
//     a context when ev.PlainStdoutContext, else ignored.
//
// Decode never panics; every Outcome it returns is valid.
func Decode(b *hookmap.Bridge, ev *hookmap.Event, r Result) Verdict {
	var v Verdict
	if b.ReadAnyExit && r.Signal != nil && r.ExitCode == nil && !r.TimedOut && !r.Cancelled && r.SpawnErr == nil && r.Err == nil {
		// Gemini CLI reads a death by signal as exit 0 (its exit code is null) and decodes
		// the output.
		zero := 0
		r.ExitCode = &zero
		v.Diagnostics = append(v.Diagnostics, "killed by signal "+r.Signal.String()+": read as exit 0")
	}
	if o, ok := ProcessOutcome(r); ok {
		v.Outcome = o
		v.Diagnostics = append(v.Diagnostics, processDiagnostic(r))
		return v
	}
	if r.Orphaned {
		v.Diagnostics = append(v.Diagnostics, "a background process kept the hook's output open after it exited; later output was lost")
	}
	if !utf8.Valid(r.Stderr) {
		v.Diagnostics = append(v.Diagnostics, "stderr is not valid UTF-8; invalid bytes replaced")
	}
	stderr := strings.TrimSpace(strings.ToValidUTF8(string(r.Stderr), "\uFFFD"))
	if r.StderrLost {
		v.Diagnostics = append(v.Diagnostics, fmt.Sprintf("stderr exceeded its cap; only its first %d bytes were kept", len(r.Stderr)))
	}
	if b.ReadAnyExit {
		return decodeAnyExit(v, b, ev, r, stderr)
	}
	switch code := *r.ExitCode; code {
	case 0:
	case 2:
		if ev.Exit2 == string(dsh.HookOutcomeError) {
			v.Outcome = dsh.HookOutcomeError
			v.Diagnostics = append(v.Diagnostics, "exit 2 does not block at "+ev.Name+" in "+b.Dialect+" (non-blocking)")
			return v
		}
		if stderr == "" && !r.StderrLost {
			if b.Exit2EmptyStderr == string(dsh.HookOutcomeFailed) {
				v.Outcome = dsh.HookOutcomeFailed
				v.Diagnostics = append(v.Diagnostics, "exit 2 with empty stderr does not block in "+b.Dialect)
				return v
			}
			stderr = ev.FallbackReason
		}
		if r.StderrLost {
			if stderr == "" {
				stderr = ev.FallbackReason
			}
			stderr += fmt.Sprintf("\n[truncated: the hook wrote more than %d bytes to stderr; the rest was discarded]", len(r.Stderr))
		}
		v.Outcome, v.Reason = blockingOutcome(ev), stderr
		if b.Exit2ReadsJSON && !r.StdoutLost {
			exit2JSON(&v, b, ev, r.Stdout)
		}
		return v
	default:
		v.Outcome = dsh.HookOutcomeError
		msg := fmt.Sprintf("exit status %d (non-blocking)", code)
		if line, _, _ := strings.Cut(stderr, "\n"); line != "" {
			msg += ": " + line
		}
		v.Diagnostics = append(v.Diagnostics, msg)
		return v
	}

	if !utf8.Valid(r.Stdout) {
		v.Diagnostics = append(v.Diagnostics, "stdout is not valid UTF-8; invalid bytes replaced")
	}
	out := strings.TrimSpace(strings.ToValidUTF8(string(r.Stdout), "\uFFFD"))
	if r.StdoutLost {
		return overCapStdout(v, ev, b, out, len(r.Stdout), "stdout")
	}
	if out == "" {
		v.Outcome = dsh.HookOutcomePass
		return v
	}
	invalid := Outcome(b.InvalidJSON)
	if b.InvalidJSON == "plain" {
		invalid = dsh.HookOutcomeError
	}
	if r.Orphaned && b.SuspectCapture == suspectHarmlessOnly && looksJSON(out, b.JSONPrefixes) && !json.Valid([]byte(out)) {
		return refuseSuspect(v, "hook output opens a JSON document that a process it left running cut short; refusing to read the partial capture as a verdict")
	}
	if !looksJSON(out, b.JSONPrefixes) || (b.InvalidJSON == "plain" && !json.Valid([]byte(out))) {
		v.Outcome = dsh.HookOutcomePass
		if looksJSON(out, b.JSONPrefixes) {
			v.Diagnostics = append(v.Diagnostics, "stdout is not valid JSON: taken as plain output")
		}
		if ev.PlainStdoutContext {
			v.Contexts = append(v.Contexts, out)
		} else {
			v.Diagnostics = append(v.Diagnostics, "plain stdout ignored at "+ev.Name)
		}
		return v
	}
	if ev.DecodeOutput == nil {
		v.Outcome = invalid
		v.Diagnostics = append(v.Diagnostics, "no output decoder for "+ev.Name)
		return v
	}
	if obj, _, ok := jsonObject(out); ok && nonObjectRewrite(&v, ev, obj) {
		return v
	}
	if _, err := ev.DecodeOutput([]byte(out)); err != nil {
		v.Outcome = invalid
		v.Diagnostics = append(v.Diagnostics, "invalid "+ev.Output+": "+err.Error())
		return v
	}
	var obj map[string]any
	dec := json.NewDecoder(strings.NewReader(out))
	dec.UseNumber()
	if err := dec.Decode(&obj); err != nil || obj == nil {
		// DecodeOutput accepted it, so this cannot happen for a decoder over a record.
		v.Outcome = invalid
		v.Diagnostics = append(v.Diagnostics, fmt.Sprintf("stdout is not a JSON object: %v", err))
		return v
	}
	evaluate(&v, ev, obj)
	if r.Orphaned && b.SuspectCapture == suspectHarmlessOnly && !harmless(v, ev) {
		return refuseSuspect(v, "hook output parsed as a document that grants, rewrites or adds to the turn, but a process it left running kept its output open, and a lost later document could have changed it; refusing to honour the suspect capture")
	}
	return v
}

// suspectHarmlessOnly is the SuspectCapture rule that honours a suspect capture only when
// it is harmless (Claude Code's).
const suspectHarmlessOnly = "harmlessOnly"

// harmless reports whether a verdict grants, rewrites and adds nothing at ev: no allow, no
// rewrite, no context unless ev.HarmlessContexts, no block or deny where ev.BlockInjects
// (there it continues the turn or feeds back). A deny, an ask, a halt or a plain pass is
// harmless.
func harmless(v Verdict, ev *hookmap.Event) bool {
	switch {
	case len(v.Rewrite) > 0, v.Outcome == dsh.HookOutcomeAllow:
		return false
	case len(v.Contexts) > 0 && !ev.HarmlessContexts:
		return false
	case (v.Outcome == dsh.HookOutcomeBlock || v.Outcome == dsh.HookOutcomeDeny) && ev.BlockInjects:
		return false
	}
	return true
}

// refuseSuspect turns a verdict read from a suspect capture into a non-blocking error that
// keeps only its diagnostics (with why).
func refuseSuspect(v Verdict, why string) Verdict {
	return Verdict{Outcome: dsh.HookOutcomeError, Diagnostics: append(v.Diagnostics, why)}
}

// evaluate applies the event's table to a decoded output object.
func evaluate(v *Verdict, ev *hookmap.Event, obj map[string]any) {
	o := output{obj: obj}
	if ev.Scope != "" {
		parent := parentPath(ev.Scope)
		if pv, ok := lookup(obj, parent); ok && pv != nil {
			name, _ := lookup(obj, ev.Scope)
			if s, isStr := name.(string); !isStr || s != ev.Name {
				o.gated = parent + "."
				claimed := "no hookEventName"
				if name != nil {
					claimed = "hookEventName " + jsonText(name)
				}
				v.Diagnostics = append(v.Diagnostics, fmt.Sprintf("%s ignored: %s, want %q", parent, claimed, ev.Name))
			}
		}
	}

	v.Outcome = dsh.HookOutcomePass
	for _, r := range ev.Rules {
		val, ok := o.get(r.When)
		if !ok || !ruleHolds(val, r.Is) {
			continue
		}
		if r.Unless != "" {
			if u, set := o.get(r.Unless); set && nonEmpty(u) {
				continue
			}
		}
		then := Outcome(r.Then)
		if then == dsh.HookOutcomeFailed {
			v.Outcome = dsh.HookOutcomeFailed
			v.Diagnostics = append(v.Diagnostics, fmt.Sprintf("%s %s is not valid at %s", r.When, describe(val, r.Is), ev.Name))
			return
		}
		reason := ""
		if r.Reason != "" {
			if rv, ok := o.get(r.Reason); ok {
				reason, _ = rv.(string)
			}
		}
		if strings.TrimSpace(reason) == "" {
			if r.NeedsReason {
				v.Outcome = dsh.HookOutcomeFailed
				v.Diagnostics = append(v.Diagnostics, fmt.Sprintf("%s %s needs a non-empty %s", r.When, describe(val, r.Is), orField(r.Reason)))
				return
			}
			reason = ""
			if then == dsh.HookOutcomeDeny || then == dsh.HookOutcomeBlock || then == dsh.HookOutcomeHalt {
				reason = ev.FallbackReason
			}
		}
		v.Outcome, v.Reason = then, reason
		v.HaltBefore = then == dsh.HookOutcomeHalt
		break
	}
	if ev.Halt {
		if c, ok := o.get("continue"); ok && c == false {
			stop := ""
			if s, ok := o.get("stopReason"); ok {
				stop, _ = s.(string)
			}
			if strings.TrimSpace(stop) == "" {
				stop = ev.HaltReason
			}
			blocked := v.Outcome == dsh.HookOutcomeBlock || v.Outcome == dsh.HookOutcomeDeny
			v.Outcome, v.Reason, v.HaltBefore = dsh.HookOutcomeHalt, stop, blocked
		}
	}
	for _, p := range ev.Contexts {
		if c, ok := o.get(p); ok {
			if s, _ := c.(string); s != "" {
				v.Contexts = append(v.Contexts, s)
			}
		}
	}
	if rw := ev.Rewrite; rw != nil && v.Outcome != dsh.HookOutcomeFailed {
		if val, ok := o.get(rw.Input); ok && val != nil {
			req := true
			if rw.Requires != "" {
				got, set := o.get(rw.Requires)
				s, _ := got.(string)
				req = set && s == rw.RequiresIs
			}
			if data, err := json.Marshal(val); req && err == nil {
				v.Rewrite = data
				if rw.Mode != "" {
					m, _ := o.get(rw.Mode)
					v.RewriteMerge = m == "merge"
				}
			}
		}
	}
	for _, n := range ev.Notices {
		val, ok := o.get(n.When)
		if !ok || !nonEmpty(val) {
			continue
		}
		text := n.Text
		if strings.Contains(text, "{value}") {
			s, isStr := val.(string)
			if !isStr {
				s = jsonText(val)
			}
			text = strings.ReplaceAll(text, "{value}", s)
		}
		v.Notices = append(v.Notices, text)
	}
}

// output reads dotted paths of a decoded output object; paths under gated (the scope's
// parent when the event name does not match) read as absent.
type output struct {
	obj   map[string]any
	gated string
}

func (o output) get(path string) (any, bool) {
	if o.gated != "" && strings.HasPrefix(path+".", o.gated) {
		return nil, false
	}
	return lookup(o.obj, path)
}

// lookup follows a dotted path through nested objects. A present null reads as (nil,
// true).
// nonObjectRewrite blocks the call, under the event's Rewrite.NonObjectBlocks, when the
// output's rewrite input is present but not a JSON object (a string, an array, a number,
// null): the hook meant to change the arguments and said nothing usable, so the original
// ones must not run (fail closed). It reports whether it decided v.
func nonObjectRewrite(v *Verdict, ev *hookmap.Event, obj map[string]any) bool {
	rw := ev.Rewrite
	if rw == nil || !rw.NonObjectBlocks {
		return false
	}
	val, ok := lookup(obj, rw.Input)
	if !ok {
		return false
	}
	if _, isObj := val.(map[string]any); isObj {
		return false
	}
	kind := "null"
	switch val.(type) {
	case string:
		kind = "a string"
	case []any:
		kind = "an array"
	case json.Number:
		kind = "a number"
	case bool:
		kind = "a boolean"
	}
	v.Outcome = blockingOutcome(ev)
	v.Reason = fmt.Sprintf("the hook's %s is %s, not an object of arguments: the call is blocked rather than run with its original arguments", rw.Input, kind)
	v.Diagnostics = append(v.Diagnostics, fmt.Sprintf("%s is %s, not an object: blocked (fail closed)", rw.Input, kind))
	return true
}

func lookup(obj map[string]any, path string) (any, bool) {
	var cur any = obj
	for _, part := range strings.Split(path, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[part]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// parentPath is the dotted path p without its last element ("" for a single element).
func parentPath(p string) string {
	return p[:max(strings.LastIndexByte(p, '.'), 0)]
}

// ruleHolds: with a literal, the value equals it; without, the value is set and not
// empty.
func ruleHolds(val any, is string) bool {
	if is == "" {
		return nonEmpty(val)
	}
	var want any
	dec := json.NewDecoder(strings.NewReader(is))
	dec.UseNumber()
	if err := dec.Decode(&want); err != nil {
		return false
	}
	return jsonEqual(val, want)
}

// nonEmpty: not null, not "", not an empty object or array. false and 0 count as set.
func nonEmpty(val any) bool {
	switch x := val.(type) {
	case nil:
		return false
	case string:
		return x != ""
	case map[string]any:
		return len(x) > 0
	case []any:
		return len(x) > 0
	}
	return true
}

func jsonEqual(a, b any) bool {
	an, aok := a.(json.Number)
	bn, bok := b.(json.Number)
	if aok && bok {
		af, err1 := an.Float64()
		bf, err2 := bn.Float64()
		return err1 == nil && err2 == nil && af == bf
	}
	return reflect.DeepEqual(a, b)
}

func jsonText(v any) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Sprint(v)
	}
	return strings.TrimSpace(buf.String())
}

func describe(val any, is string) string {
	if is != "" {
		return is
	}
	if s, ok := val.(string); ok && utf8.RuneCountInString(s) <= 40 {
		return jsonText(s)
	}
	return "(set)"
}

func orField(p string) string {
	if p == "" {
		return "reason"
	}
	return p
}

func looksJSON(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if p != "" && strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// blockingOutcome is what exit 2 becomes at ev (the table's Exit2).
func blockingOutcome(ev *hookmap.Event) Outcome {
	return Outcome(ev.Exit2)
}

// processDiagnostic explains a process outcome.
func processDiagnostic(r Result) string {
	var he *HTTPError
	if errors.As(r.Err, &he) {
		// An http hook: what became of its request, in the engine's words.
		return he.Error() + " (non-blocking)"
	}
	switch {
	case r.TimedOut:
		return "timed out; the process group was killed"
	case r.Cancelled:
		return "cancelled; the process group was killed"
	case r.SpawnErr != nil:
		return "could not start: " + r.SpawnErr.Error()
	case r.Err != nil:
		return "I/O failure: " + r.Err.Error()
	case r.Signal != nil:
		return "killed by signal " + r.Signal.String()
	}
	return "no exit status"
}

// overCapStdout decides exit-0 stdout whose text past the cap was lost (kept bytes in out,
// trimmed): a decision that may be in it cannot be read, so stdout that may be JSON (it
// looks like JSON, or its kept part is blank) is the event's blocking outcome where exit 2
// blocks, and error where nothing can block; plain stdout is plain stdout, its kept part
// with a truncation note.
func overCapStdout(v Verdict, ev *hookmap.Event, b *hookmap.Bridge, out string, kept int, stream string) Verdict {
	if out == "" || looksJSON(out, b.JSONPrefixes) {
		if ev.Exit2 == string(dsh.HookOutcomeError) {
			v.Outcome = dsh.HookOutcomeError
			v.Diagnostics = append(v.Diagnostics, fmt.Sprintf("%s exceeded its cap of %d bytes; output discarded", stream, kept))
			return v
		}
		v.Outcome = blockingOutcome(ev)
		v.Reason = fmt.Sprintf("%s: the hook wrote more than %d bytes to %s, so its decision could not be read", ev.FallbackReason, kept, stream)
		v.Diagnostics = append(v.Diagnostics, fmt.Sprintf("%s exceeded its cap of %d bytes; its decision could not be read, so it blocks (fail closed)", stream, kept))
		return v
	}
	v.Outcome = dsh.HookOutcomePass
	v.Diagnostics = append(v.Diagnostics, fmt.Sprintf("%s exceeded its cap of %d bytes; the rest was discarded", stream, kept))
	if ev.PlainStdoutContext {
		v.Contexts = append(v.Contexts, out+"\n[truncated: the hook's output exceeded its cap; the rest was discarded]")
	} else {
		v.Diagnostics = append(v.Diagnostics, "plain stdout ignored at "+ev.Name)
	}
	return v
}

// decodeAnyExit decodes a run under Bridge.ReadAnyExit (Gemini CLI): the text is stdout,
// or stderr when stdout is blank; JSON (or a JSON string holding JSON) is the output
// whatever the exit code; other text is plain output on exit 0, a notice prefixed with
// WarningPrefix on exit 1, and the event's exit-2 outcome with the text as the reason on
// any other exit; no text is pass on exit 0 and failed otherwise (the action proceeds).
// Text cut by the output cap that may be JSON blocks where the event can block (fail
// closed), as in Decode.
func decodeAnyExit(v Verdict, b *hookmap.Bridge, ev *hookmap.Event, r Result, stderr string) Verdict {
	code := *r.ExitCode
	if !utf8.Valid(r.Stdout) {
		v.Diagnostics = append(v.Diagnostics, "stdout is not valid UTF-8; invalid bytes replaced")
	}
	text, lost, kept, stream := strings.TrimSpace(strings.ToValidUTF8(string(r.Stdout), "\uFFFD")), r.StdoutLost, len(r.Stdout), "stdout"
	if text == "" && !lost {
		text, lost, kept, stream = stderr, r.StderrLost, len(r.Stderr), "stderr"
	}
	if lost {
		return overCapStdout(v, ev, b, text, kept, stream)
	}
	if text == "" {
		if code == 0 {
			v.Outcome = dsh.HookOutcomePass
			return v
		}
		v.Outcome = dsh.HookOutcomeFailed
		v.Diagnostics = append(v.Diagnostics, fmt.Sprintf("exit status %d with no output (non-blocking)", code))
		return v
	}
	if obj, data, ok := jsonObject(text); ok {
		if nonObjectRewrite(&v, ev, obj) {
			return v
		}
		if ev.DecodeOutput == nil {
			v.Outcome = Outcome(b.InvalidJSON)
			v.Diagnostics = append(v.Diagnostics, "no output decoder for "+ev.Name)
			return v
		}
		if _, err := ev.DecodeOutput(data); err != nil {
			v.Outcome = Outcome(b.InvalidJSON)
			v.Diagnostics = append(v.Diagnostics, "invalid "+ev.Output+": "+err.Error())
			return v
		}
		if code != 0 {
			v.Diagnostics = append(v.Diagnostics, fmt.Sprintf("exit status %d: its JSON output still counts", code))
		}
		evaluate(&v, ev, obj)
		return v
	}
	switch code {
	case 0:
		v.Outcome = dsh.HookOutcomeAllow
		if ev.PlainStdoutContext {
			v.Contexts = append(v.Contexts, text)
		} else if b.PlainNotice {
			v.Notices = append(v.Notices, text)
		}
	case 1:
		v.Outcome = dsh.HookOutcomeAllow
		v.Notices = append(v.Notices, b.WarningPrefix+text)
		v.Diagnostics = append(v.Diagnostics, "exit status 1 (non-blocking)")
	default:
		if ev.Exit2 == string(dsh.HookOutcomeError) {
			v.Outcome = dsh.HookOutcomeError
			v.Diagnostics = append(v.Diagnostics, fmt.Sprintf("exit status %d does not block at %s", code, ev.Name))
			return v
		}
		v.Outcome, v.Reason = blockingOutcome(ev), text
	}
	return v
}

// jsonObject parses text as a JSON object, or as a JSON string that holds one (Gemini
// CLI parses such a string again); ok is false for anything else.
func jsonObject(text string) (obj map[string]any, data []byte, ok bool) {
	data = []byte(text)
	var s string
	if json.Unmarshal(data, &s) == nil {
		data = []byte(strings.TrimSpace(s))
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if dec.Decode(&obj) != nil || obj == nil || dec.More() {
		return nil, nil, false
	}
	return obj, data, true
}

// Output returns the JSON object a finished run printed, read as Decode reads it (stdout;
// under ReadAnyExit stdout or else stderr, a JSON string holding JSON included), or nil
// when it printed none (a dialect reads the fields its table cannot state, such as
// Gemini CLI's llm_request).
func Output(b *hookmap.Bridge, r Result) map[string]any {
	if r.ExitCode == nil || r.StdoutLost {
		return nil
	}
	text := strings.TrimSpace(strings.ToValidUTF8(string(r.Stdout), "\uFFFD"))
	if text == "" && b.ReadAnyExit && !r.StderrLost {
		text = strings.TrimSpace(strings.ToValidUTF8(string(r.Stderr), "\uFFFD"))
	}
	if !b.ReadAnyExit && *r.ExitCode != 0 {
		return nil
	}
	obj, _, _ := jsonObject(text)
	return obj
}

// TailCall reads the tail call the hooks of ev asked for (ev.Tail, Gemini CLI's
// tailToolCallRequest): the value at ev.Tail.Output of the last run whose output has one
// (the engine merges its hooks' outputs shallowly, the last winning), when it is an
// object. Its name field is the tool ("" when it is not a string, which names no tool),
// its arguments field the arguments (null when absent). ok is false when the event reads
// no tail call or no run asked for one.
func TailCall(b *hookmap.Bridge, ev *hookmap.Event, rep *Report) (name string, args json.RawMessage, ok bool) {
	if ev == nil || ev.Tail == nil || rep == nil {
		return "", nil, false
	}
	var last any
	found := false
	for _, h := range rep.Hooks {
		if v, has := lookup(Output(b, h.Result), ev.Tail.Output); has {
			last, found = v, true
		}
	}
	req, isObject := last.(map[string]any)
	if !found || !isObject {
		return "", nil, false
	}
	name, _ = req[ev.Tail.Name].(string)
	args = json.RawMessage("null")
	if v, has := req[ev.Tail.Arguments]; has {
		data, err := json.Marshal(v)
		if err != nil { // unreachable: the value was decoded from JSON
			return "", nil, false
		}
		args = data
	}
	return name, args, true
}
