package claudecode_test

import (
	"bytes"
	"log/slog"
	"os/exec"
	"testing"

	"github.com/dshkit/dsh/bridges/claudecode"
	ht "github.com/dshkit/dsh/bridges/internal/hooktest"
	"github.com/dshkit/dsh/generated/dsh"
)

// BenchmarkHook compares running a trivial hook script directly with os/exec
// (raw-exec) and through the bridge: one matched PreToolUse hook, from the pre-execute
// waterfall to the decision, including input encoding, the process group, output
// decoding, merging and the two session records (bridge).
func BenchmarkHook(b *testing.B) {
	dir := b.TempDir()
	script := ht.Script(b, dir, "hook.sh", `cat >/dev/null; echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow"}}'`)
	input := []byte(`{"hook_event_name":"PreToolUse","session_id":"s","tool_name":"Bash","tool_input":{"command":"ls"},"tool_use_id":"c","transcript_path":"","cwd":"` + dir + `"}` + "\n")

	b.Run("raw-exec", func(b *testing.B) {
		for b.Loop() {
			cmd := exec.Command("sh", "-c", script)
			cmd.Dir = dir
			cmd.Stdin = bytes.NewReader(input)
			var out bytes.Buffer
			cmd.Stdout = &out
			if err := cmd.Run(); err != nil || out.Len() == 0 {
				b.Fatal(err)
			}
		}
	})
	b.Run("bridge", func(b *testing.B) {
		h := ht.New(dir)
		cfg := ht.Config(b, dir, "settings.json", ht.G("PreToolUse", "Bash", script))
		br, err := claudecode.New(claudecode.Config{Files: []string{cfg}, Workspace: dir, Session: h.Session,
			Recorder: h.Rec, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			b.Fatal(err)
		}
		br.Register(h.Reg.Plugin(claudecode.Plugin))
		ex := h.Exec("Bash", `{"command":"ls"}`)
		p := &dsh.PreToolPayload{Exec: ex}
		for b.Loop() {
			d, err := h.Reg.RunPreTool(ctx, p, nil)
			if err != nil || d.Kind() != dsh.PreToolAllowKind {
				b.Fatal(d, err)
			}
			h.Rec.Take()
		}
	})
}
