package hookproto

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/generated/hookmap"
	"github.com/dshkit/dsh/runtime/permrule"
)

// ErrHandlerIf: a handler's "if" does not parse, or stands at an event where the engine
// never tests it, so the hook would never run: it is skipped with a diagnostic (a hooks
// file named on the command line fails to load), never left to be silently dead.
var ErrHandlerIf = errors.New(`hook "if" that never runs`)

// HandlerOptions are the handler fields of Claude Code's that condition a run or decide
// what a failure does; each applies only where the dialect's table has it.
type HandlerOptions struct {
	// If is the handler's "if" rule (Bridge.IfEvents): the hook runs only when it matches
	// the tool call, or when that cannot be told (as Claude Code: fail safe); nil: always.
	If *permrule.Rule
	// OnFailure is "block" when a failure of the hook (it could not start, timed out,
	// exited other than 0 or 2, printed output that does not decode) gets the event's
	// exit-2 outcome (Bridge.OnFailure); "" or "continue": a non-blocking error.
	OnFailure string
	// AsyncRewake says the hook is awaited and only its exit 2 counts (Bridge.AsyncRewake).
	AsyncRewake bool
}

// handlerOptions reads "if", "onFailure" and "asyncRewake" into h, where the dialect's
// table has them (elsewhere they are unknown fields, tolerated). A value of the wrong
// type, an "if" that does not parse or stands at an event where it is never tested skips
// the handler with a diagnostic naming the file and JSON path.
func (l *loader) handlerOptions(h *Handler, obj map[string]json.RawMessage) bool {
	t := l.opts.Table
	if t == nil {
		return true
	}
	path, ev := h.Path, h.Event
	if raw := obj["if"]; len(t.IfEvents) > 0 && kindOf(raw) != "null" {
		text, ok := optString(raw)
		if !ok {
			l.malformed(path+".if", ev, "handler", `"if" must be a permission rule string, such as "Bash(git *)"`, raw)
			return false
		}
		rule, err := permrule.Parse(text)
		if err != nil {
			l.diag(path+".if", ev, "handler", fmt.Errorf("%w: %w (the engine reads it as a tool name no call has)", ErrHandlerIf, err))
			return false
		}
		if !slices.Contains(t.IfEvents, ev) {
			l.diag(path+".if", ev, "handler", fmt.Errorf(`%w: "if" is tested at %s only; at %s the engine never runs this hook`,
				ErrHandlerIf, strings.Join(t.IfEvents, ", "), ev))
			return false
		}
		h.Options.If = &rule
	}
	if raw := obj["onFailure"]; t.OnFailure != nil && h.MCP == nil && kindOf(raw) != "null" {
		// (An mcp_tool handler reads its own: any value but "continue" blocks.)
		s, ok := optString(raw)
		if !ok || (s != "continue" && s != "block") {
			l.malformed(path+".onFailure", ev, "handler", `onFailure must be "continue" or "block"`, raw)
			return false
		}
		h.Options.OnFailure = s
	}
	if raw := obj["asyncRewake"]; t.AsyncRewake && kindOf(raw) != "null" {
		if kindOf(raw) != "boolean" {
			l.malformed(path+".asyncRewake", ev, "handler", "asyncRewake must be a boolean", raw)
			return false
		}
		_ = json.Unmarshal(raw, &h.Options.AsyncRewake)
		if h.Options.AsyncRewake {
			h.Async = false // awaited, as the engine does
		}
	}
	return true
}

// runs says whether h runs at f: its "if" rule, if any, matches the call or cannot be
// told (a command dsh cannot split, an event without a call).
func (e *Engine) runs(h Handler, f Fire) bool {
	rule := h.Options.If
	if rule == nil {
		return true
	}
	if !slices.Contains(e.Table.IfEvents, f.Event) {
		return false // loading refused it already; never reached from a loaded Config
	}
	if f.Call == nil {
		return true
	}
	env := permrule.Env{Tools: ruleTable(e.Table), Dir: f.Dir, Home: e.home()}
	if env.Dir == "" {
		env.Dir = e.Dir
	}
	res := rule.Match(*f.Call, env)
	if res.Outcome == permrule.Undecided {
		e.logger().Info(`hook "if" cannot be told: the hook runs`, "rule", rule.Text, "event", f.Event, "source", h.Source, "why", res.Reason)
	}
	return res.Outcome != permrule.NoMatch
}

// ruleTable is the table's ruleTools as permrule reads them.
func ruleTable(t *hookmap.Bridge) permrule.Table {
	out := make(permrule.Table, len(t.RuleTools))
	for name, rt := range t.RuleTools {
		out[name] = permrule.Tool{Field: rt.Field, Kind: permrule.Kind(rt.Kind)}
	}
	return out
}

// home is the home directory of `~/` rules: HOME in the hooks' base environment, else
// the process's.
func (e *Engine) home() string {
	for _, kv := range e.BaseEnv {
		if v, ok := strings.CutPrefix(kv, "HOME="); ok {
			return v
		}
	}
	h, _ := os.UserHomeDir()
	return h
}

// failureOutput is what a failed run of h said, as the engine quotes it after an
// onFailure block: a process's stderr; an in-process handler's error (for an mcp_tool
// whose server is not mounted, the engine's "MCP server 'NAME' not connected").
func failureOutput(h Handler, res Result) string {
	switch {
	case len(res.Stderr) > 0 || res.Err == nil:
		return string(res.Stderr)
	case h.MCP != nil && errors.Is(res.Err, ErrMCPUnavailable):
		return fmt.Sprintf("MCP server '%s' not connected", h.MCP.Server)
	}
	return res.Err.Error()
}

// afterRun applies h's options to the verdict of its run: an asyncRewake hook counts
// only on exit 2; with onFailure "block", a failure gets the event's exit-2 outcome, its
// reason saying so (Bridge.OnFailure), where the option is not ignored.
func (e *Engine) afterRun(ev *hookmap.Event, h Handler, res Result, v Verdict) Verdict {
	exit2 := res.ExitCode != nil && *res.ExitCode == 2
	if h.Options.AsyncRewake {
		if !exit2 {
			kept := Verdict{Outcome: dsh.HookOutcomePass, Diagnostics: v.Diagnostics}
			if v.Outcome == dsh.HookOutcomeError || v.Outcome == dsh.HookOutcomeTimeout {
				kept.Outcome = v.Outcome
			}
			return kept
		}
		return v
	}
	of := e.Table.OnFailure
	if h.Options.OnFailure != "block" || of == nil || slices.Contains(of.IgnoredOn, ev.Name) {
		return v
	}
	switch v.Outcome {
	case dsh.HookOutcomeError, dsh.HookOutcomeTimeout, dsh.HookOutcomeFailed:
	default:
		return v
	}
	because := of.Because
	if ht, ok := e.Table.Handlers[h.Type()]; ok && ht.OnFailureBecause != "" {
		because = ht.OnFailureBecause
	}
	reason := of.Failed + "; " + because
	if res.TimedOut {
		reason = of.TimedOut + "; " + because
	} else if s := strings.TrimSpace(failureOutput(h, res)); s != "" {
		reason += "\n" + s
	}
	two := 2
	blocked := Decode(e.Table, ev, Result{ExitCode: &two, Stderr: []byte(reason)})
	blocked.AsExit2 = true
	blocked.Diagnostics = append(append([]string{}, v.Diagnostics...), fmt.Sprintf("onFailure %q: the hook's %s counts as exit 2", "block", v.Outcome))
	return blocked
}
