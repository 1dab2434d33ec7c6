package hookproto

import (
	"context"
	"testing"

	"github.com/dshkit/dsh/generated/hookmap"
)

// BenchmarkFireCommand is the per-hook cost of one command hook fired through the
// engine (load aside): match, run, decode, merge. The handler types that run in process
// (http, mcp_tool, prompt) must not make it grow.
func BenchmarkFireCommand(b *testing.B) {
	c, diags := Load([]byte(`{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"cat >/dev/null; echo '{}'"}]}]}}`),
		LoadOptions{Dialect: ClaudeCode, Source: "b.json"})
	if len(diags) > 0 {
		b.Fatal(diags)
	}
	e := &Engine{Table: hookmap.Lookup(string(ClaudeCode)), Config: c}
	f := Fire{Event: "PreToolUse", Subject: "Bash", Stdin: []byte(`{"hook_event_name":"PreToolUse","tool_name":"Bash"}` + "\n")}
	ctx := context.Background()
	for b.Loop() {
		if rep := e.Fire(ctx, f); len(rep.Hooks) != 1 || rep.Hooks[0].Verdict.Outcome != "pass" {
			b.Fatalf("%+v", rep.Hooks)
		}
	}
}
