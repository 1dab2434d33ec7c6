package cli

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestRealConfigsHooksRun: dsh hooks run loads the public configurations the differential
// suite replays (differential/testdata/real) and decides with them as Claude Code does:
// devkit's plugin lets a plain command through and its safety check denies one naming
// DROP TABLE (its scripts need bash and jq); claude-code-hooks-mastery's settings load,
// their SubagentStop hook with the rest (nothing reported as never firing), and run their
// PreToolUse hook.
func TestRealConfigsHooksRun(t *testing.T) {
	for _, tool := range []string{"bash", "jq"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("%s is needed by devkit's hook scripts: %v", tool, err)
			}
			t.Skipf("%s is needed by devkit's hook scripts: %v", tool, err)
		}
	}
	real := filepath.Join("..", "differential", "testdata", "real")
	dir := t.TempDir()
	input := func(cmd string) string {
		p := filepath.Join(dir, strings.Fields(cmd)[0]+".json")
		os.WriteFile(p, []byte(`{"session_id":"s1","cwd":"`+dir+`","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":`+quote(cmd)+`},"tool_use_id":"c1"}`), 0o644)
		return p
	}
	run := func(args ...string) (string, string, int) {
		var out, errb bytes.Buffer
		code := Run(context.Background(), args, strings.NewReader(""), &out, &errb)
		return out.String(), errb.String(), code
	}
	devkit := filepath.Join(real, "devkit")
	out, errs, code := run("hooks", "run", "--plugin-dir", devkit, "--project-dir", dir, "--input", input("echo 'DROP TABLE t' > note.txt"))
	if code != 0 || !strings.Contains(out, `"deny"`) || !strings.Contains(out, "BLOCKED: destructive database operation") {
		t.Errorf("devkit, DROP TABLE: exit %d\n%s\n%s", code, out, errs)
	}
	out, errs, code = run("hooks", "run", "--plugin-dir", devkit, "--project-dir", dir, "--input", input("touch ran_1"))
	if code != 0 || strings.Contains(out, `"deny"`) {
		t.Errorf("devkit, a plain command: exit %d\n%s\n%s", code, out, errs)
	}
	mastery := filepath.Join(real, "hooks-mastery", "settings.json")
	out, errs, code = run("hooks", "run", "--config", mastery, "--project-dir", dir, "--input", input("ls"))
	if code != 0 || strings.Contains(errs, "never fire") || !strings.Contains(out, "PreToolUse") {
		t.Errorf("hooks-mastery: exit %d\n%s\n%s", code, out, errs)
	}
}

// quote is s as a JSON string.
func quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"', '\\':
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	b.WriteByte('"')
	return b.String()
}
