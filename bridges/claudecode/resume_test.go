package claudecode

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/dshkit/dsh/bridges/hookproto"
	"github.com/dshkit/dsh/bridges/internal/hookbridge"
)

// TestCacheWriteUSD: the 5-minute cache-write list price per model, rounded to 4
// decimals as Claude Code 2.1.328 sent it (claude-sonnet-4-5: 15 tokens → 0.0001, 2695 →
// 0.0101); an unknown model gets the engine's default price.
func TestCacheWriteUSD(t *testing.T) {
	for _, c := range []struct {
		model  string
		tokens int
		want   float64
	}{
		{"claude-sonnet-4-5", 15, 0.0001},
		{"claude-sonnet-4-5", 2695, 0.0101},
		{"claude-sonnet-4-5-20250929", 1_000_000, 3.75},
		{"anthropic/claude-haiku-4-5", 1_000_000, 1.25},
		{"claude-opus-4-1-20250805", 1_000_000, 18.75},
		{"claude-opus-4-20250514", 1_000_000, 18.75},
		{"claude-opus-4-5", 1_000_000, 6.25},
		{"mock-model", 1_000_000, 6.25},
		{"claude-sonnet-4-5", 0, 0},
	} {
		if got := CacheWriteUSD(c.model, c.tokens); got != c.want {
			t.Errorf("CacheWriteUSD(%q, %d) = %v, want %v", c.model, c.tokens, got, c.want)
		}
	}
}

// TestSessionStartResumeFields: SessionStart[resume] carries the resumed context as
// Claude Code sends it; the cache is likely expired from PromptCacheTTL seconds on, or
// right after a compaction; startup (and a resume the agent cannot describe) sends none
// of the fields.
func TestSessionStartResumeFields(t *testing.T) {
	s := hookproto.Session{SessionID: "s", TranscriptPath: "/t.jsonl", CWD: "/w", Model: "claude-sonnet-4-5"}
	decode := func(in hookbridge.Input) map[string]any {
		t.Helper()
		data, err := encode(in)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	for _, c := range []struct {
		name    string
		r       hookbridge.Resumed
		expired bool
		usd     float64
	}{
		{"warm", hookbridge.Resumed{SecondsSinceLastResponse: 4, ContextTokens: 15, Measured: true}, false, 0.0001},
		{"ttl", hookbridge.Resumed{SecondsSinceLastResponse: PromptCacheTTL, ContextTokens: 2695, Measured: true}, true, 0.0101},
		{"after-compaction", hookbridge.Resumed{SecondsSinceLastResponse: 8, ContextTokens: 2695}, true, 0.0101},
	} {
		r := c.r
		m := decode(hookbridge.Input{Event: evSessionStart, Session: s, Source: "resume", Resumed: &r})
		if m["seconds_since_last_response"] != float64(r.SecondsSinceLastResponse) || m["context_tokens"] != float64(r.ContextTokens) ||
			m["prompt_cache_likely_expired"] != c.expired || m["estimated_cache_write_usd"] != c.usd {
			t.Errorf("%s: stdin %v", c.name, m)
		}
	}
	r := hookbridge.Resumed{SecondsSinceLastResponse: 1, ContextTokens: 1, Measured: true}
	for _, in := range []hookbridge.Input{
		{Event: evSessionStart, Session: s, Source: "startup", Resumed: &r},
		{Event: evSessionStart, Session: s, Source: "resume"},
	} {
		m := decode(in)
		for _, k := range []string{"seconds_since_last_response", "context_tokens", "prompt_cache_likely_expired", "estimated_cache_write_usd"} {
			if _, ok := m[k]; ok {
				t.Errorf("source %s (resumed %v): %s sent", in.Source, in.Resumed != nil, k)
			}
		}
	}
}

// TestEffortField: for a model of the table's effortModels, the stdin of an event of
// effortEvents carries "effort" after permission_mode, and the hook's environment
// CLAUDE_EFFORT; other events, and other models, get neither.
func TestEffortField(t *testing.T) {
	raw := json.RawMessage(`{"command":"ls"}`)
	for _, c := range []struct {
		model, event string
		want         bool
	}{
		{"claude-opus-5-5", evPreToolUse, true},
		{"claude-opus-5-5-20260101", evStop, true},
		{"claude-opus-5-5", evUserPromptSubmit, false},
		{"claude-opus-5-5", evSessionStart, false},
		{"claude-sonnet-4-5", evPreToolUse, false},
		{"", evPreToolUse, false},
	} {
		s := hookproto.Session{SessionID: "s", TranscriptPath: "/t.jsonl", CWD: "/w", Model: c.model, PermissionMode: "default", PromptID: "p"}
		data, err := encode(hookbridge.Input{Event: c.event, Session: s, ToolName: "Bash", ToolInput: raw, Source: "startup", DurationMS: -1})
		if err != nil {
			t.Fatalf("%s %s: %v", c.model, c.event, err)
		}
		has := strings.Contains(string(data), `"permission_mode":"default","effort":{"level":"medium"},"hook_event_name"`)
		env := slices.Contains(sessionEnv(c.event, s), "CLAUDE_EFFORT=medium")
		if has != c.want || env != c.want {
			t.Errorf("%s %s: effort in stdin %v, CLAUDE_EFFORT %v; want %v (stdin %s)", c.model, c.event, has, env, c.want, data)
		}
	}
}

// TestMCPPlainAnswer: an mcp_tool hook's plain answer at UserPromptSubmit reads as
// "UserPromptSubmit completed", as Claude Code 2.1.328 shows it (the table's
// plainAnswer); a command's plain stdout is its text.
func TestMCPPlainAnswer(t *testing.T) {
	run := func(h hookproto.Handler) hookproto.HookRun {
		return hookproto.HookRun{Handler: h, Result: hookproto.Result{Stdout: []byte("mcp words")},
			Verdict: hookproto.Verdict{Contexts: []string{"mcp words"}}}
	}
	rep := &hookproto.Report{Hooks: []hookproto.HookRun{run(hookproto.Handler{MCP: &hookproto.MCPToolHandler{Server: "s", Tool: "t"}}), run(hookproto.Handler{Command: "echo"})}}
	got := renderContexts(evUserPromptSubmit, "", rep)
	want := []string{reminder("UserPromptSubmit hook success: UserPromptSubmit completed"), reminder("UserPromptSubmit hook success: mcp words")}
	if !slices.Equal(got, want) {
		t.Errorf("renderContexts = %q, want %q", got, want)
	}
}
