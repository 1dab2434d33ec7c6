package claudecode

import (
	"encoding/json"
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
