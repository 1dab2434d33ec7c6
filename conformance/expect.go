package conformance

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/google/go-cmp/cmp"

	sc "github.com/dshkit/dsh/generated/conformance"
	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/internal/blocktext"
)

// check compares the outcome of a run with the expectation; it returns one readable
// problem per mismatch.
func (r *run) check(x sc.Expect) []string {
	r.mu.Lock()
	problems := append([]string{}, r.errs...)
	trace := append([]string{}, r.trace...)
	results := append([]dsh.ToolExecutionResult{}, r.results...)
	r.mu.Unlock()
	diff := func(what string, want, got any) {
		if d := cmp.Diff(want, got); d != "" {
			problems = append(problems, fmt.Sprintf("%s (-want +got):\n%s", what, d))
		}
	}
	log := r.rt.Log()
	if x.Log != nil {
		diff("session log types", x.Log, logTypes(log, x.LogTypes))
	}
	for i, m := range x.Events {
		problems = append(problems, matchEvent(i, m, log)...)
	}
	if x.Compacts != nil {
		r.mu.Lock()
		compacts := append([]string{}, r.compacts...)
		r.mu.Unlock()
		diff("compact outcomes", x.Compacts, compacts)
	}
	if x.HookOutcomes != nil {
		diff("hook/result outcomes", x.HookOutcomes, hookOutcomes(log))
	}
	if x.Trace != nil {
		diff("trace", x.Trace, nilIfEmpty(trace))
	}
	if x.Results != nil {
		if len(results) != len(x.Results) {
			problems = append(problems, fmt.Sprintf("%d results, want %d", len(results), len(x.Results)))
		}
		for i := 0; i < len(results) && i < len(x.Results); i++ {
			problems = append(problems, matchResult(i, x.Results[i], results[i])...)
		}
	}
	reqs := r.rt.Requests()
	if x.Requests != nil && len(reqs) != *x.Requests {
		problems = append(problems, fmt.Sprintf("%d model requests, want %d", len(reqs), *x.Requests))
	}
	for i, texts := range x.RequestTexts {
		problems = append(problems, requestHas(i, reqs, texts, true)...)
	}
	for i, texts := range x.RequestAbsent {
		problems = append(problems, requestHas(i, reqs, texts, false)...)
	}
	if x.RequestTools != nil || x.RequestSystems != nil {
		info := r.rt.RequestInfo()
		for i, want := range x.RequestTools {
			if i >= len(info) {
				problems = append(problems, fmt.Sprintf("request %d: only %d requests were made", i+1, len(info)))
				continue
			}
			diff(fmt.Sprintf("request %d tools", i+1), nilIfEmpty(want), nilIfEmpty(info[i].Tools))
		}
		for i, want := range x.RequestSystems {
			if i >= len(info) {
				problems = append(problems, fmt.Sprintf("request %d: only %d requests were made", i+1, len(info)))
				continue
			}
			diff(fmt.Sprintf("request %d system", i+1), want, info[i].System)
		}
	}
	for i, want := range x.RequestMessages {
		if i >= len(reqs) {
			problems = append(problems, fmt.Sprintf("request %d: only %d requests were made", i+1, len(reqs)))
			continue
		}
		diff(fmt.Sprintf("request %d messages", i+1), nilIfEmpty(want), nilIfEmpty(reqs[i]))
	}
	if x.NextTurn != nil || x.NextStep != nil {
		var turn, step []dsh.UserMessage
		if a := r.existing(DefaultAgent); a != nil {
			turn, step = a.Inbox()
		}
		if x.NextTurn != nil {
			diff("next-turn inbox", x.NextTurn, texts(turn))
		}
		if x.NextStep != nil {
			diff("next-step inbox", x.NextStep, texts(step))
		}
	}
	return problems
}

func nilIfEmpty(s []string) []string {
	if len(s) == 0 {
		return []string{}
	}
	return s
}

// logTypes lists the types of log, keeping only keep when it is given.
func logTypes(log []LogEvent, keep []string) []string {
	out := []string{}
	for _, e := range log {
		if keep == nil || contains(keep, e.Type) {
			out = append(out, e.Type)
		}
	}
	return out
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// matchEvent checks that the nth event of a type has the data subset.
func matchEvent(i int, m sc.EventMatch, log []LogEvent) []string {
	nth := 0
	if m.Nth != nil {
		nth = *m.Nth
	}
	seen := 0
	for _, e := range log {
		if e.Type != m.Type {
			continue
		}
		if seen == nth {
			if msg := subset(m.Data, e.Data); msg != "" {
				return []string{fmt.Sprintf("events[%d]: %s #%d: %s\n  data: %s", i, m.Type, nth, msg, e.Data)}
			}
			if msg := absent(m.Absent, e.Data); msg != "" {
				return []string{fmt.Sprintf("events[%d]: %s #%d: %s\n  data: %s", i, m.Type, nth, msg, e.Data)}
			}
			return nil
		}
		seen++
	}
	return []string{fmt.Sprintf("events[%d]: no %s #%d in the log (%d of that type)", i, m.Type, nth, seen)}
}

// absent reports a key of keys that the object got (JSON) has.
func absent(keys []string, got json.RawMessage) string {
	if len(keys) == 0 {
		return ""
	}
	var g map[string]json.RawMessage
	if err := json.Unmarshal(got, &g); err != nil {
		return "bad event data: " + err.Error()
	}
	for _, k := range keys {
		if v, ok := g[k]; ok {
			return fmt.Sprintf(".%s: want absent, got %s", k, v)
		}
	}
	return ""
}

// hookOutcomes lists the outcomes of the hook/result events of log, in order.
func hookOutcomes(log []LogEvent) []string {
	out := []string{}
	for _, e := range log {
		if e.Type != "hook/result" {
			continue
		}
		var d struct {
			Outcome string `json:"outcome"`
		}
		if err := json.Unmarshal(e.Data, &d); err != nil {
			d.Outcome = "<" + err.Error() + ">"
		}
		out = append(out, d.Outcome)
	}
	return out
}

// subset reports how want (JSON) is not contained in got (JSON): objects by key, arrays
// element-wise with equal length, scalars by equality.
func subset(want, got json.RawMessage) string {
	var w, g any
	if err := json.Unmarshal(want, &w); err != nil {
		return "bad expected data: " + err.Error()
	}
	if err := json.Unmarshal(got, &g); err != nil {
		return "bad event data: " + err.Error()
	}
	return subsetOf("", w, g)
}

func subsetOf(path string, w, g any) string {
	switch wv := w.(type) {
	case map[string]any:
		gv, ok := g.(map[string]any)
		if !ok {
			return fmt.Sprintf("%s: want an object, got %v", path, g)
		}
		for k, v := range wv {
			gg, ok := gv[k]
			if !ok {
				return fmt.Sprintf("%s.%s: missing", path, k)
			}
			if msg := subsetOf(path+"."+k, v, gg); msg != "" {
				return msg
			}
		}
		return ""
	case []any:
		gv, ok := g.([]any)
		if !ok || len(gv) != len(wv) {
			return fmt.Sprintf("%s: want %d elements, got %v", path, len(wv), g)
		}
		for i := range wv {
			if msg := subsetOf(fmt.Sprintf("%s[%d]", path, i), wv[i], gv[i]); msg != "" {
				return msg
			}
		}
		return ""
	}
	if !reflect.DeepEqual(w, g) {
		return fmt.Sprintf("%s: want %v, got %v", path, w, g)
	}
	return ""
}

// matchResult checks one direct execution's result.
func matchResult(i int, m sc.ResultMatch, res dsh.ToolExecutionResult) []string {
	var out []string
	bad := func(format string, args ...any) {
		out = append(out, fmt.Sprintf("results[%d]: %s", i, fmt.Sprintf(format, args...)))
	}
	if res == nil {
		bad("no result")
		return out
	}
	var content []dsh.ContentBlock
	var contexts []dsh.UserMessage
	var info *dsh.ToolErrorInfo
	var value json.RawMessage
	failed := false
	switch v := res.(type) {
	case dsh.ToolSuccess:
		content, contexts, value = v.Content, v.AdditionalContexts, v.Value
	case dsh.ToolFailure:
		content, contexts, info, failed = v.Content, v.AdditionalContexts, v.Error.Info, true
	}
	if m.IsError != nil && *m.IsError != failed {
		bad("isError = %v, want %v (result %s)", failed, *m.IsError, show(res))
	}
	if m.Text != nil && blocktext.Text(content, "") != *m.Text {
		bad("text = %q, want %q", blocktext.Text(content, ""), *m.Text)
	}
	if m.ErrorCode != nil && (info == nil || info.Code != *m.ErrorCode) {
		bad("error code = %v, want %q (result %s)", info, *m.ErrorCode, show(res))
	}
	if m.ErrorName != nil && (info == nil || info.Name != *m.ErrorName) {
		bad("error name = %v, want %q", info, *m.ErrorName)
	}
	if m.Contexts != nil {
		if d := cmp.Diff(m.Contexts, texts(contexts)); d != "" {
			bad("contexts (-want +got):\n%s", d)
		}
	}
	if m.Value != nil && !jsonEqual(m.Value, value) {
		bad("value = %s, want %s", value, m.Value)
	}
	return out
}

func show(res dsh.ToolExecutionResult) string {
	b, _ := json.Marshal(res)
	return string(b)
}

func jsonEqual(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return bytes.Equal(a, b)
	}
	return reflect.DeepEqual(x, y)
}

// texts lists the text of each message.
func texts(msgs []dsh.UserMessage) []string {
	out := []string{}
	for _, m := range msgs {
		out = append(out, blocktext.Text(m.Content, ""))
	}
	return out
}

// requestHas checks that request i contains (or, with want false, lacks) every text.
func requestHas(i int, reqs [][]string, want []string, present bool) []string {
	if i >= len(reqs) {
		return []string{fmt.Sprintf("request %d: only %d requests were made", i+1, len(reqs))}
	}
	all := strings.Join(reqs[i], "\n")
	var out []string
	for _, w := range want {
		if strings.Contains(all, w) != present {
			verb := "lacks"
			if !present {
				verb = "contains"
			}
			out = append(out, fmt.Sprintf("request %d %s %q; its messages: %q", i+1, verb, w, reqs[i]))
		}
	}
	return out
}
