package differential

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// BenchmarkHookOverhead measures what one hook run adds to a session, under the real
// engine and under dsh run, in the same run: each iteration runs the same scripted session
// (one turn of 10 shell calls) without hooks and with a PreToolUse and a PostToolUse hook
// (Gemini CLI: BeforeTool and AfterTool) that each append a line to a file (20 hook runs),
// and reports the added wall time per hook run as ms/hook. Each side talks to the mock on
// its engine's wire. Run it with
//
//	go test ./differential/ -run '^$' -bench HookOverhead -benchtime 3x
func BenchmarkHookOverhead(b *testing.B) {
	root, _ := filepath.Abs("..")
	e, err := Install(context.Background(), CacheDir(root))
	if err != nil {
		b.Skipf("engines: %v", err)
	}
	dshBin := filepath.Join(b.TempDir(), "dsh")
	build := exec.Command("go", "build", "-o", dshBin, "./cmd/dsh")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	var calls []string
	for i := 0; i < 10; i++ {
		// Distinct commands: Gemini CLI takes repeated identical calls for a loop and
		// stops the turn.
		calls = append(calls, fmt.Sprintf("true %d", i))
	}
	turns := []Turn{{Text: "running", Bash: calls}, {Text: "finished"}}
	for _, engine := range []string{"claude", "codex", "gemini"} {
		for _, under := range []string{"engine", "dsh"} {
			b.Run(engine+"/"+under, func(b *testing.B) {
				var added time.Duration
				runs := 0
				for i := 0; i < b.N; i++ {
					base := b.TempDir()
					plain := sessionTime(b, e, dshBin, filepath.Join(base, "plain"), engine, under, turns, false)
					count := filepath.Join(base, "hooked", "count")
					hooked := sessionTime(b, e, dshBin, filepath.Join(base, "hooked"), engine, under, turns, true)
					data, _ := os.ReadFile(count)
					n := strings.Count(string(data), "\n")
					if n != 20 {
						b.Fatalf("%d hook runs, want 20", n)
					}
					added += hooked - plain
					runs += n
				}
				b.ReportMetric(float64(added.Microseconds())/1000/float64(runs), "ms/hook")
			})
		}
	}
}

// sessionTime runs one session in dir and returns its wall time.
func sessionTime(b *testing.B, e Engines, dshBin, dir, engine, under string, turns []Turn, hooked bool) time.Duration {
	home, ws := filepath.Join(dir, "home"), filepath.Join(dir, "ws")
	for _, p := range []string{home, ws, filepath.Join(home, ".codex")} {
		if err := os.MkdirAll(p, 0o755); err != nil {
			b.Fatal(err)
		}
	}
	events := map[string]any{}
	if hooked {
		cmd := "echo x >> " + filepath.Join(dir, "count")
		pre, post := "PreToolUse", "PostToolUse"
		if engine == "gemini" {
			pre, post = "BeforeTool", "AfterTool"
		}
		for _, ev := range []string{pre, post} {
			events[ev] = []any{map[string]any{"matcher": "", "hooks": []any{map[string]any{"type": "command", "command": cmd}}}}
		}
	}
	cfg, _ := json.Marshal(map[string]any{"hooks": events})
	hooks := filepath.Join(dir, "hooks.json")
	if err := os.WriteFile(hooks, cfg, 0o644); err != nil {
		b.Fatal(err)
	}
	proto := map[string]Protocol{"claude": Anthropic, "codex": Responses, "gemini": Gemini}[engine]
	m, err := NewMock(proto, turns)
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	ctx := context.Background()
	var r Run
	switch {
	case under == "dsh":
		dialect := map[string]string{"claude": "claude-code", "codex": "codex", "gemini": "gemini"}[engine]
		r = RunDsh(ctx, dshBin, home, ws, hooks, dialect, filepath.Join(dir, "log.jsonl"), m.URL(), Prompt)
	case engine == "claude":
		r = RunClaude(ctx, e, home, ws, hooks, m.URL(), Prompt)
	case engine == "codex":
		_ = os.WriteFile(filepath.Join(home, ".codex", "hooks.json"), cfg, 0o644)
		r = RunCodex(ctx, e, home, filepath.Join(home, ".codex"), ws, m.URL(), Prompt)
	default:
		settings, _ := json.Marshal(GeminiSettings(map[string]any{"hooks": events}))
		if err := os.MkdirAll(filepath.Join(home, ".gemini"), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(home, ".gemini", "settings.json"), settings, 0o644); err != nil {
			b.Fatal(err)
		}
		r = RunGemini(ctx, e, home, ws, m.URL(), Prompt)
	}
	if r.Err != nil {
		b.Fatalf("%s/%s: %v\n%s", engine, under, r.Err, r.Stderr)
	}
	if s := m.Strays(); len(s) > 0 {
		b.Fatalf("%s/%s tried to reach something other than the mock: %v", engine, under, s)
	}
	return r.Elapsed
}
