package differential

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// WrapScript is the hook wrapper: `sh wrap.sh LOGDIR NAME SCRIPT [ARG...]` records the
// hook's stdin, environment, start time and exit status under LOGDIR, then runs SCRIPT
// with the same stdin and the ARGs and exits as it did.
const WrapScript = `#!/bin/sh
log=$1; name=$2; script=$3
shift 3
d=$(mktemp -d "$log/run.XXXXXXXX")
date +%s%N > "$d/start"
echo "$name" > "$d/name"
cat > "$d/stdin"
env > "$d/env"
sh "$script" "$@" < "$d/stdin"
rc=$?
echo $rc > "$d/exit"
exit $rc
`

// HookRun is one recorded hook run.
type HookRun struct {
	Name  string         // the hook's name in the case (event-index)
	Start int64          // start time, ns
	Stdin map[string]any // the decoded stdin (nil when it was not a JSON object)
	Raw   string         // the raw stdin
	Env   map[string]string
	Exit  string // the exit status ("" when the wrapper was killed); an http hook's: the answer's status ("" when the client gave up)
	// Headers are an http hook's request headers (HookServer); nil for a command hook.
	Headers map[string]string
}

// ReadHookRuns reads the runs recorded under dir, in start order.
func ReadHookRuns(dir string) ([]HookRun, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		if os.IsNotExist(err) {
			return nil, nil
		}
		return nil, err
	}
	var runs []HookRun
	for _, e := range ents {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), "run.") {
			continue
		}
		d := filepath.Join(dir, e.Name())
		read := func(n string) string { b, _ := os.ReadFile(filepath.Join(d, n)); return string(b) }
		r := HookRun{Name: strings.TrimSpace(read("name")), Raw: read("stdin"), Exit: strings.TrimSpace(read("exit")), Env: map[string]string{}}
		if r.Name == "" {
			// The wrapper was killed before it recorded the hook's name (a timeout of 0 or
			// less expires at once): the hook's script never ran.
			continue
		}
		r.Start, _ = strconv.ParseInt(strings.TrimSpace(read("start")), 10, 64)
		var m map[string]any
		if json.Unmarshal([]byte(r.Raw), &m) == nil {
			r.Stdin = m
		}
		for _, line := range strings.Split(read("env"), "\n") {
			if k, v, ok := strings.Cut(line, "="); ok {
				r.Env[k] = v
			}
		}
		if hdr := read("headers"); hdr != "" {
			r.Headers = map[string]string{}
			for _, line := range strings.Split(hdr, "\n") {
				if k, v, ok := strings.Cut(line, ": "); ok {
					r.Headers[k] = v
				}
			}
		}
		runs = append(runs, r)
	}
	sort.SliceStable(runs, func(i, j int) bool {
		if runs[i].Start != runs[j].Start {
			return runs[i].Start < runs[j].Start
		}
		return runs[i].Name < runs[j].Name
	})
	return runs, nil
}

// Unordered moves the runs of the hooks named in names (hooks an engine starts
// concurrently, so that their start order says nothing) after every other run, sorted by
// their stdin, so that both sides compare them in the same order.
func Unordered(runs []HookRun, names []string) []HookRun {
	if len(names) == 0 {
		return runs
	}
	var kept, moved []HookRun
	for _, r := range runs {
		if slices.Contains(names, r.Name) {
			moved = append(moved, r)
		} else {
			kept = append(kept, r)
		}
	}
	sort.SliceStable(moved, func(i, j int) bool { return moved[i].Raw < moved[j].Raw })
	return append(kept, moved...)
}

// Observation is what one run of a case showed.
type Observation struct {
	Effects []string // marker files the tool calls created, sorted
	Calls   int      // main model requests
	// Summaries are the compaction summarization requests: for each, the probe words
	// (CompactWords) its directive holds.
	Summaries []string
	Sent      []Next // what each main request sent after the model's previous response
	Hooks     []HookRun
	// Placed says where each probe word of the case (Case.Probes) is in the first main
	// request: "system end" (the system prompt ends with it), "system", "messages" or
	// "absent".
	Placed map[string]string
	// Tools are the tools the main requests offered the model, by name (OfferedTools), for
	// the dialects whose toolset dsh records; nil otherwise.
	Tools map[string]string
	// MayDefer are the tools dsh may offer that the engine's requests need not show (the
	// engine defers them behind its tool search: ToolsetRows).
	MayDefer []string
	// ChildModels are the models the subagents' requests named, by the Match of the
	// child's script ("?" for a child no script matches): ChildModelsOf.
	ChildModels map[string]string `json:",omitempty"`
	// ChildTools are the names of the tools the subagents' requests offered, by the Match
	// of the child's script: ChildToolsOf.
	ChildTools map[string][]string `json:",omitempty"`
}

// ChildToolsOf are the names of the tools the subagents' requests among reqs offered (the
// union over each child's requests, as OfferedTools reads a request), sorted, by the
// Match of the child's script; nil when no child's request offered any.
func ChildToolsOf(reqs []Request) map[string][]string {
	var out map[string][]string
	for _, r := range reqs {
		if r.Child == "" {
			continue
		}
		for name := range OfferedTools([]Request{{Main: true, Body: r.Body}}, nil) {
			if out == nil {
				out = map[string][]string{}
			}
			if !slices.Contains(out[r.Child], name) {
				out[r.Child] = append(out[r.Child], name)
			}
		}
	}
	for _, names := range out {
		slices.Sort(names)
	}
	return out
}

// ChildModelsOf are the models the subagents' requests among reqs named (their body's
// model; none for a wire that names it elsewhere), by the Match of the child's script,
// each child's distinct models sorted and joined with ", ".
func ChildModelsOf(reqs []Request) map[string]string {
	models := map[string][]string{}
	for _, r := range reqs {
		if r.Child == "" {
			continue
		}
		var body struct {
			Model string `json:"model"`
		}
		if json.Unmarshal(r.Body, &body) != nil || body.Model == "" {
			continue
		}
		if !slices.Contains(models[r.Child], body.Model) {
			models[r.Child] = append(models[r.Child], body.Model)
		}
	}
	if len(models) == 0 {
		return nil
	}
	out := map[string]string{}
	for k, v := range models {
		slices.Sort(v)
		out[k] = strings.Join(v, ", ")
	}
	return out
}

// Placement says where each of words is in a request body: in its system prompt
// (Anthropic system, Responses instructions, Gemini systemInstruction), at its end, in
// the rest of the request, or nowhere.
func Placement(body []byte, words []string) map[string]string {
	if len(words) == 0 {
		return nil
	}
	var req map[string]json.RawMessage
	_ = json.Unmarshal(body, &req)
	var system string
	for _, k := range []string{"system", "instructions", "systemInstruction"} {
		if v, ok := req[k]; ok {
			system += strings.Join(texts(v), "\n")
			delete(req, k)
		}
	}
	rest, _ := json.Marshal(req)
	out := map[string]string{}
	for _, w := range words {
		switch {
		case strings.HasSuffix(strings.TrimSpace(system), w):
			out[w] = "system end"
		case strings.Contains(system, w):
			out[w] = "system"
		case strings.Contains(string(rest), w):
			out[w] = "messages"
		default:
			out[w] = "absent"
		}
	}
	return out
}

// texts are the strings of a JSON value ("text" fields and bare strings), in order.
func texts(v json.RawMessage) []string {
	var s string
	if json.Unmarshal(v, &s) == nil {
		return []string{s}
	}
	var list []json.RawMessage
	if json.Unmarshal(v, &list) == nil {
		var out []string
		for _, e := range list {
			out = append(out, texts(e)...)
		}
		return out
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(v, &obj) == nil {
		var out []string
		for _, k := range []string{"text", "parts"} {
			if e, ok := obj[k]; ok {
				out = append(out, texts(e)...)
			}
		}
		return out
	}
	return nil
}

// ReadEffects lists the ran_* marker files of a workspace.
func ReadEffects(ws string) []string {
	ents, _ := os.ReadDir(ws)
	var out []string
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "ran_") {
			out = append(out, e.Name())
		}
	}
	sort.Strings(out)
	return out
}
