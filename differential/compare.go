package differential

import (
	"bufio"
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// Normalizer rewrites run-specific values (paths, ids, times) to placeholders.
type Normalizer struct {
	Paths map[string]string // path prefix → placeholder, longest first when applied
	// NoErrorFlag drops the error flag of tool results (the Responses API has none).
	NoErrorFlag bool
	// CallerPath, when set, is the PATH the run was started with: Compare checks that
	// hooks keep it (env.PATH), the engine's run's under the engine's normalizer, dsh's
	// under dsh's (that of the engine's when dsh's has none).
	CallerPath string
}

var (
	uuidRE   = regexp.MustCompile(`\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b`)
	callIDRE = regexp.MustCompile(`\b(toolu|call)_\d{3}_\d+\b`)
	hookIDRE = regexp.MustCompile(`hook_run_id="[^"]*"`)
	// A subagent's id (Claude Code's shape, which dsh mints too) and the transcript path
	// made of it; and the child's run time in the Agent tool's result.
	agentIDRE         = regexp.MustCompile(`\ba[0-9a-f]{16}\b`)
	agentTranscriptRE = regexp.MustCompile(`/subagents/agent-a[0-9a-f]{16}\.jsonl$`)
	durationRE        = regexp.MustCompile(`duration_ms: \d+|<duration_ms>\d+</duration_ms>`)
	// totalDurationRE is the child's run time in the Agent tool's value (tool_response),
	// raw or inside JSON: wall time, which varies from run to run on both sides.
	totalDurationRE = regexp.MustCompile(`(\\?"totalDurationMs\\?":)\d+`)
	// outputFileRE is where a child in the background writes (the launch text's
	// output_file, the notification's <output-file>): Claude Code names a link under its
	// temporary directory to the child's transcript, dsh the transcript itself, which is
	// beside the session's as transcript_path is (a path compared by its form only).
	outputFileRE     = regexp.MustCompile(`[^\s<>"]*/(?:claude-\d+/[^\s<>"]+/tasks/a[0-9a-f]{16}\.output|subagents/agent-a[0-9a-f]{16}\.jsonl)\b`)
	timestampRE      = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$`)
	sessionContextRE = regexp.MustCompile(`\\u003csession_context\\u003e.*?\\u003c/session_context\\u003e`) // as json.Marshal escapes it
	// wallRE is the wall time of a Codex result with an exit code (apply_patch's
	// "Exit code: 0\nWall time: 0.1 seconds"), raw or inside JSON.
	wallRE = regexp.MustCompile(`(Exit code: \d+(?:\n|\\n)Wall time: )\d+(?:\.\d+)? seconds`)
	// abortedWallRE is the wall time of a Codex shell call its turn's interruption
	// aborted ("Wall time: 0.1 seconds\naborted by user"): how long the command had run,
	// which varies from run to run on both sides (0.1 and 0.2 seconds measured under the
	// engine, codex/subagent-send-interrupt).
	abortedWallRE = regexp.MustCompile(`(Wall time: )\d+(?:\.\d+)? seconds((?:\n|\\n)aborted by user)`)
	// nicknameRE is the nickname Codex's spawn_agent gives a child, at random from a list
	// (raw, or inside JSON).
	nicknameRE = regexp.MustCompile(`(\\?"nickname\\?":\\?")[A-Za-z]+`)
	// codexRolloutRE is a Codex thread's rollout file (a child's agent_transcript_path):
	// rollout-<time>-<thread id>.jsonl in Codex's sessions directory, rollout-<id>.jsonl
	// beside the session's log under dsh.
	codexRolloutRE = regexp.MustCompile(`/rollout-(?:[0-9T-]+-)?[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.jsonl$`)
	// pgidRE is the process group of a Gemini shell result.
	pgidRE = regexp.MustCompile(`Process Group PGID: \d+`)
	// suiteBinaryRE is the suite's own test binary, the command of the MCP hook server
	// (Gemini CLI's mcp_context names it): go test builds it afresh for each run, so a
	// recorded run names another one.
	suiteBinaryRE = regexp.MustCompile(`[^\s"']*/differential\.test\b`)
)

// Text normalizes a string.
func (n Normalizer) Text(s string) string {
	s = outputFileRE.ReplaceAllString(s, "<output-file>") // before the paths it starts with
	s = suiteBinaryRE.ReplaceAllString(s, "<suite-binary>")
	keys := make([]string, 0, len(n.Paths))
	for k := range n.Paths {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return len(keys[i]) > len(keys[j]) })
	for _, k := range keys {
		s = strings.ReplaceAll(s, k, n.Paths[k])
	}
	s = uuidRE.ReplaceAllString(s, "<uuid>")
	s = callIDRE.ReplaceAllString(s, "<call>")
	s = hookIDRE.ReplaceAllString(s, `hook_run_id="<id>"`)
	s = agentIDRE.ReplaceAllString(s, "<agent>")
	s = durationRE.ReplaceAllStringFunc(s, func(m string) string {
		if strings.HasPrefix(m, "<") {
			return "<duration_ms><ms></duration_ms>"
		}
		return "duration_ms: <ms>"
	})
	s = totalDurationRE.ReplaceAllString(s, `${1}"<ms>"`)
	s = pgidRE.ReplaceAllString(s, "Process Group PGID: <pgid>")
	s = nicknameRE.ReplaceAllString(s, "${1}<nickname>")
	s = wallRE.ReplaceAllString(s, "${1}<s>")
	s = abortedWallRE.ReplaceAllString(s, "${1}<s>${2}")
	return s
}

// Value normalizes a decoded stdin field.
func (n Normalizer) Value(field string, v any) string {
	switch field {
	case "transcript_path":
		// The format is checked separately; here only that it is a path.
		if s, ok := v.(string); ok && s != "" {
			return "<path>"
		}
	case "duration_ms":
		if _, ok := v.(float64); ok {
			return "<ms>"
		}
	case "seconds_since_last_response":
		// Wall time between two runs: compared as a whole number of seconds.
		if f, ok := v.(float64); ok && f >= 0 && f == float64(int64(f)) {
			return "<seconds>"
		}
	case "timestamp":
		// When the hook ran (Gemini CLI: ISO 8601 in UTC, to the millisecond).
		if s, ok := v.(string); ok && timestampRE.MatchString(s) {
			return "<timestamp>"
		}
	case "llm_request", "llm_response":
		// Gemini CLI's model events: the engine's environment preamble (<session_context>,
		// with the date and a directory listing) is left out of the messages, as from what
		// the model was sent.
		data, _ := json.Marshal(v)
		return n.Text(sessionContextRE.ReplaceAllString(string(data), ""))
	case "agent_id":
		// A subagent's id: random on both sides, compared by its shape ("a" and 16 hex
		// digits, Claude Code's).
		if s, ok := v.(string); ok && agentIDRE.MatchString(s) && len(s) == 17 {
			return "<agent>"
		}
	case "agent_transcript_path":
		// <session>/subagents/agent-<id>.jsonl beside the session's transcript.
		if s, ok := v.(string); ok && agentTranscriptRE.MatchString(s) {
			return "<session>/subagents/agent-<agent>.jsonl"
		}
		if s, ok := v.(string); ok && codexRolloutRE.MatchString(s) {
			return "<codex rollout of the child>"
		}
	case "session_id", "turn_id", "prompt_id":
		if s, ok := v.(string); ok {
			if uuidRE.MatchString(s) && len(s) == 36 {
				return "<uuid>"
			}
			return "<id:" + s + ">"
		}
	}
	data, _ := json.Marshal(v)
	return n.Text(string(data))
}

// TrackedEnv are the environment variables whose presence the suite compares.
var TrackedEnv = []string{"CLAUDE_PROJECT_DIR", "CLAUDECODE", "CLAUDE_CODE_SESSION_ID", "CLAUDE_PLUGIN_ROOT", "CLAUDE_ENV_FILE", "CLAUDE_CODE_ENTRYPOINT", "CLAUDE_EFFORT",
	"GEMINI_PROJECT_DIR", "GEMINI_CWD", "GEMINI_SESSION_ID", "GEMINI_PLANS_DIR"}

// ValuedEnv are the tracked variables whose values the suite compares too, normalized
// (Gemini CLI's: the project directory, the cwd, the plans directory under the session).
// GEMINI_SESSION_ID is compared as being the session_id of the hook's stdin or not.
var ValuedEnv = []string{"GEMINI_PROJECT_DIR", "GEMINI_CWD", "GEMINI_PLANS_DIR"}

// Diff is one difference: an aspect (effects, calls, models, sent, tools, runs, exit, stdin.FIELD,
// bytes.order, bytes.escaping, bytes.spacing, bytes.newline, env.VAR) and what differed.
type Diff struct {
	Aspect, Detail string
}

func (d Diff) String() string { return d.Aspect + ": " + d.Detail }

// Compare returns the differences between the engine's observation and dsh's.
func Compare(engine, dsh Observation, ne, nd Normalizer) []Diff {
	var out []Diff
	if fmt.Sprint(engine.Effects) != fmt.Sprint(dsh.Effects) {
		out = append(out, Diff{"effects", fmt.Sprintf("engine ran %v, dsh ran %v", engine.Effects, dsh.Effects)})
	}
	if fmt.Sprint(engine.Placed) != fmt.Sprint(dsh.Placed) {
		out = append(out, Diff{"placement", fmt.Sprintf("the probe words are placed %v under the engine, %v under dsh", engine.Placed, dsh.Placed)})
	}
	if engine.Calls != dsh.Calls {
		out = append(out, Diff{"calls", fmt.Sprintf("engine made %d model calls, dsh %d", engine.Calls, dsh.Calls)})
	}
	if len(engine.Summaries) != len(dsh.Summaries) {
		out = append(out, Diff{"summaries", fmt.Sprintf("engine made %d summarization requests, dsh %d", len(engine.Summaries), len(dsh.Summaries))})
	} else if fmt.Sprint(engine.Summaries) != fmt.Sprint(dsh.Summaries) {
		out = append(out, Diff{"directive", fmt.Sprintf("the summarization directives hold %q under the engine, %q under dsh", engine.Summaries, dsh.Summaries)})
	}
	out = append(out, toolsDiffs(engine, dsh)...)
	out = append(out, childToolsDiffs(engine, dsh)...)
	if fmt.Sprint(engine.ChildModels) != fmt.Sprint(dsh.ChildModels) {
		out = append(out, Diff{"models", fmt.Sprintf("the subagents' requests named the models %v under the engine, %v under dsh", engine.ChildModels, dsh.ChildModels)})
	}
	for i := 0; i < len(engine.Sent) && i < len(dsh.Sent); i++ {
		a, b := normItems(engine.Sent[i], ne), normItems(dsh.Sent[i], nd)
		if a != b {
			out = append(out, Diff{"sent", fmt.Sprintf("call %d: engine sent %s; dsh sent %s", i+1, a, b)})
		}
	}
	if d, ok := orderDiff(engine.Hooks, dsh.Hooks); ok {
		out = append(out, d)
	}
	if d, ok := continuityDiff(engine.Hooks, dsh.Hooks); ok {
		out = append(out, d)
	}
	// Hook runs, paired by hook name and order.
	er, dr := byName(engine.Hooks), byName(dsh.Hooks)
	names := map[string]bool{}
	for k := range er {
		names[k] = true
	}
	for k := range dr {
		names[k] = true
	}
	sorted := make([]string, 0, len(names))
	for k := range names {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	fieldDiffs := map[string][]string{}
	var fieldOrder []string
	addField := func(aspect, detail string) {
		if _, ok := fieldDiffs[aspect]; !ok {
			fieldOrder = append(fieldOrder, aspect)
		}
		fieldDiffs[aspect] = append(fieldDiffs[aspect], detail)
	}
	for _, name := range sorted {
		a, b := er[name], dr[name]
		if len(a) != len(b) {
			out = append(out, Diff{"runs", fmt.Sprintf("%s ran %d times under the engine, %d under dsh", name, len(a), len(b))})
		}
		for i := 0; i < len(a) && i < len(b); i++ {
			if a[i].Exit != b[i].Exit {
				out = append(out, Diff{"exit", fmt.Sprintf("%s run %d: exit %q under the engine, %q under dsh", name, i+1, a[i].Exit, b[i].Exit)})
			}
			if unread(a[i]) || unread(b[i]) {
				continue
			}
			keys := map[string]bool{}
			for k := range a[i].Stdin {
				keys[k] = true
			}
			for k := range b[i].Stdin {
				keys[k] = true
			}
			for k := range keys {
				va, oka := a[i].Stdin[k]
				vb, okb := b[i].Stdin[k]
				switch {
				case !okb:
					addField("stdin."+k, fmt.Sprintf("%s: only the engine sends it (%s)", name, ne.Value(k, va)))
				case !oka:
					addField("stdin."+k, fmt.Sprintf("%s: only dsh sends it (%s)", name, nd.Value(k, vb)))
				default:
					if x, y := ne.Value(k, va), nd.Value(k, vb); x != y {
						addField("stdin."+k, fmt.Sprintf("%s: engine %s, dsh %s", name, x, y))
					}
				}
			}
			for _, d := range bytesDiffs(name, a[i], b[i]) {
				addField(d[0], d[1])
			}
			for _, v := range TrackedEnv {
				_, oka := a[i].Env[v]
				_, okb := b[i].Env[v]
				if oka != okb {
					addField("env."+v, fmt.Sprintf("%s: set by the engine %v, by dsh %v", name, oka, okb))
				}
			}
			for _, v := range ValuedEnv {
				va, oka := a[i].Env[v]
				vb, okb := b[i].Env[v]
				if oka && okb && ne.Text(va) != nd.Text(vb) {
					addField("env."+v, fmt.Sprintf("%s: engine %s, dsh %s", name, ne.Text(va), nd.Text(vb)))
				}
			}
			if va, vb := a[i].Env["GEMINI_SESSION_ID"], b[i].Env["GEMINI_SESSION_ID"]; va != "" && vb != "" {
				if x, y := va == a[i].Stdin["session_id"], vb == b[i].Stdin["session_id"]; x != y {
					addField("env.GEMINI_SESSION_ID", fmt.Sprintf("%s: the stdin's session_id under the engine %v, under dsh %v", name, x, y))
				}
			}
			for _, k := range TrackedHeaders(merge(a[i].Headers, b[i].Headers)) {
				va, oka := a[i].Headers[k]
				vb, okb := b[i].Headers[k]
				if oka != okb || ne.Text(va) != nd.Text(vb) {
					addField("header."+k, fmt.Sprintf("%s: the server got %q (%v) from the engine, %q (%v) from dsh", name, ne.Text(va), oka, nd.Text(vb), okb))
				}
			}
			if pe := ne.CallerPath; pe != "" {
				pd := cmp.Or(nd.CallerPath, pe) // a recorded engine run had a PATH of its own
				oka, okb := strings.Contains(a[i].Env["PATH"], pe), strings.Contains(b[i].Env["PATH"], pd)
				if oka != okb {
					addField("env.PATH", fmt.Sprintf("%s: the hook's PATH keeps the caller's under the engine %v, under dsh %v", name, oka, okb))
				}
			}
		}
	}
	sort.Strings(fieldOrder)
	for _, f := range fieldOrder {
		out = append(out, Diff{f, fieldDiffs[f][0]})
	}
	return out
}

// continuityFields are the stdin fields that name the session: the normalization hides
// their values, so continuityDiff compares how many each side gave across a case's runs.
var continuityFields = []string{"session_id", "transcript_path"}

// continuityDiff compares how many distinct session_id and transcript_path values the
// hooks saw on each side across all the runs of a case (a resumed run keeps both).
func continuityDiff(engine, dsh []HookRun) (Diff, bool) {
	var details []string
	for _, f := range continuityFields {
		if a, b := distinctValues(engine, f), distinctValues(dsh, f); a != b {
			details = append(details, fmt.Sprintf("the hooks saw %d %s values under the engine, %d under dsh", a, f, b))
		}
	}
	if len(details) == 0 {
		return Diff{}, false
	}
	return Diff{"continuity", strings.Join(details, "; ")}, true
}

// distinctValues is the number of distinct non-empty string values of field in runs.
func distinctValues(runs []HookRun, field string) int {
	seen := map[string]bool{}
	for _, r := range runs {
		if s, ok := r.Stdin[field].(string); ok && s != "" {
			seen[s] = true
		}
	}
	return len(seen)
}

// EventOrder is the order in which the hook events of runs ran: the event of each run
// (its hook name without the "-N" suffix), in start order, with consecutive runs of one
// event merged (the hooks of one event run concurrently, in any order, and the runs for
// parallel tool calls too).
func EventOrder(runs []HookRun) []string {
	var out []string
	for _, r := range runs {
		ev := r.Name
		if i := strings.LastIndex(ev, "-"); i > 0 {
			ev = ev[:i]
		}
		if len(out) == 0 || out[len(out)-1] != ev {
			out = append(out, ev)
		}
	}
	return out
}

// orderDiff is the "order" difference: the hook events ran in another order (see
// EventOrder).
func orderDiff(engine, dsh []HookRun) (Diff, bool) {
	a, b := EventOrder(engine), EventOrder(dsh)
	if slices.Equal(a, b) {
		return Diff{}, false
	}
	return Diff{"order", fmt.Sprintf("hook events ran as %s under the engine, %s under dsh", strings.Join(a, ", "), strings.Join(b, ", "))}, true
}

func normItems(items Next, n Normalizer) string {
	parts := make([]string, len(items))
	for i, it := range items {
		it.Text = n.Text(it.Text)
		if n.NoErrorFlag {
			it.Error = false
		}
		parts[i] = it.String()
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// byName groups runs by hook name, in start order, except that runs for parallel tool
// calls are ordered by the call's position in its turn (engines start them in any
// order), or, without call ids (Gemini CLI), by their tool and input; and that the runs
// inside a subagent (their stdin names an agent_id) follow the parent's, since a child
// that runs in the background races its parent.
func byName(runs []HookRun) map[string][]HookRun {
	out := map[string][]HookRun{}
	for _, r := range runs {
		out[r.Name] = append(out[r.Name], r)
	}
	for _, rs := range out {
		sort.SliceStable(rs, func(i, j int) bool {
			if ui, uj := unread(rs[i]), unread(rs[j]); ui != uj {
				return uj
			}
			if ci, cj := inChild(rs[i]), inChild(rs[j]); ci != cj {
				return cj
			}
			a, b := callKey(rs[i]), callKey(rs[j])
			return a != "" && b != "" && a < b
		})
	}
	return out
}

// unread says whether a run's hook was killed before it read its stdin (no stdin, no
// exit: an interruption that aborted the call as its hook started,
// codex/subagent-send-interrupt): nothing of it but its name can be compared, so it pairs
// last, with the run the other side may have made in its place, and only its exit is
// compared.
func unread(r HookRun) bool { return r.Raw == "" && r.Exit == "" }

// inChild says whether a tool event's run is a subagent's (its stdin names the child's
// agent_id); the subagent events themselves (SubagentStart, SubagentStop) are not.
func inChild(r HookRun) bool {
	_, ok := r.Stdin["agent_id"]
	_, tool := r.Stdin["tool_name"]
	return ok && tool
}

// callKey is the "<turn>_<index>" suffix of a run's tool_use_id, or, for a tool event
// without a call id (Gemini CLI's), its tool name and input; "" when it has neither.
func callKey(r HookRun) string {
	id, ok := r.Stdin["tool_use_id"].(string)
	if m := callIDRE.FindString(id); m != "" {
		_, k, _ := strings.Cut(m, "_")
		return k
	}
	if in, has := r.Stdin["tool_input"]; has && !ok {
		data, _ := json.Marshal([]any{r.Stdin["tool_name"], in})
		return "input:" + string(data)
	}
	return ""
}

// Listed is one row of the table of allowed differences, differential/testdata/differences.md.
type Listed struct {
	Case, Engine, Aspect, Kind, Reason string
	Line                               int
}

// Matches says whether the row covers a difference of a case under an engine.
func (l Listed) Matches(caseName, engine, aspect string) bool {
	return (l.Case == "*" || l.Case == caseName || (strings.HasSuffix(l.Case, "*") && strings.HasPrefix(caseName, strings.TrimSuffix(l.Case, "*")))) &&
		(l.Engine == "*" || l.Engine == engine) && l.Aspect == aspect
}

// ReadListed reads the table between the markers <!-- differential:begin --> and
// <!-- differential:end --> of a Markdown file: rows | case | engine | aspect | kind |
// reason |, kind being "deliberate", "varies" (deliberate, and the engine's own output
// varies from run to run, so the row may match nothing) or "pending".
func ReadListed(path string) ([]Listed, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []Listed
	in := false
	sc := bufio.NewScanner(f)
	line := 0
	for sc.Scan() {
		line++
		t := strings.TrimSpace(sc.Text())
		switch {
		case strings.Contains(t, "<!-- differential:begin -->"):
			in = true
			continue
		case strings.Contains(t, "<!-- differential:end -->"):
			return out, nil
		}
		if !in || !strings.HasPrefix(t, "|") {
			continue
		}
		cells := strings.Split(strings.Trim(t, "|"), "|")
		if len(cells) != 5 {
			return nil, fmt.Errorf("%s:%d: want 5 cells (case | engine | aspect | kind | reason), got %d", path, line, len(cells))
		}
		for i := range cells {
			cells[i] = strings.Trim(strings.TrimSpace(cells[i]), "`")
		}
		if cells[0] == "case" || strings.HasPrefix(cells[0], "---") {
			continue
		}
		l := Listed{Case: cells[0], Engine: cells[1], Aspect: cells[2], Kind: cells[3], Reason: cells[4], Line: line}
		if l.Kind != "deliberate" && l.Kind != "pending" && l.Kind != "varies" {
			return nil, fmt.Errorf("%s:%d: kind %q: want deliberate, varies or pending", path, line, l.Kind)
		}
		if l.Engine != "*" && l.Engine != "claude" && l.Engine != "codex" && l.Engine != "gemini" {
			return nil, fmt.Errorf("%s:%d: engine %q: want claude, codex, gemini or *", path, line, l.Engine)
		}
		if l.Reason == "" {
			return nil, fmt.Errorf("%s:%d: a listed difference needs a reason", path, line)
		}
		out = append(out, l)
	}
	if !in {
		return nil, fmt.Errorf("%s: no <!-- differential:begin --> table", path)
	}
	return out, fmt.Errorf("%s: the differential table has no <!-- differential:end -->", path)
}

// merge is the union of two header maps (b's values win; only the keys matter here).
func merge(a, b map[string]string) map[string]string {
	out := make(map[string]string, len(a)+len(b))
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}
