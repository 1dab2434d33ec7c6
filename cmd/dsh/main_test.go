package main

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"dsh": func() {
			os.Exit(Main(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
		},
	})
}

// TestScripts runs the CLI scripts in testdata/script, each in a fresh work directory
// with real shell hook scripts.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		Setup: func(e *testscript.Env) error {
			// A -race binary sleeps 1 s at exit by default; the scripts run dsh often.
			e.Setenv("GORACE", "atexit_sleep_ms=0")
			return nil
		},
	})
}

// TestUsageExitCodes: usage and configuration errors exit 2 with one line on stderr.
func TestUsageExitCodes(t *testing.T) {
	dir := t.TempDir()
	bad := dir + "/bad.json"
	os.WriteFile(bad, []byte("{not json"), 0o644)
	good := dir + "/good.json"
	os.WriteFile(good, []byte(`{"hooks":{}}`), 0o644)
	in := dir + "/in.json"
	os.WriteFile(in, []byte(`{"hook_event_name":"Stop"}`), 0o644)
	for name, args := range map[string][]string{
		"no command":        {},
		"unknown command":   {"nope"},
		"no subcommand":     {"hooks"},
		"no dialect":        {"hooks", "run", "--config", good, "--event", "Stop", "--input", in},
		"bad dialect":       {"hooks", "run", "--dialect", "gemini", "--config", good, "--event", "Stop", "--input", in},
		"no config":         {"hooks", "run", "--dialect", "codex", "--event", "Stop", "--input", in},
		"missing config":    {"hooks", "run", "--dialect", "codex", "--config", dir + "/none.json", "--event", "Stop", "--input", in},
		"invalid config":    {"hooks", "run", "--dialect", "codex", "--config", bad, "--event", "Stop", "--input", in},
		"unsupported event": {"hooks", "run", "--dialect", "codex", "--config", good, "--event", "Notification", "--input", in},
		"no input":          {"hooks", "run", "--dialect", "codex", "--config", good, "--event", "Stop"},
		"missing input":     {"hooks", "run", "--dialect", "codex", "--config", good, "--event", "Stop", "--input", dir + "/none.json"},
		"input not JSON":    {"hooks", "run", "--dialect", "codex", "--config", good, "--event", "Stop", "--input", bad},
		"event mismatch":    {"hooks", "run", "--dialect", "codex", "--config", good, "--event", "PreToolUse", "--input", in},
		"unknown flag":      {"hooks", "run", "--frobnicate"},
		"extra argument":    {"hooks", "run", "--dialect", "codex", "--config", good, "--event", "Stop", "--input", in, "extra"},
	} {
		var stdout, stderr bytes.Buffer
		code := Main(context.Background(), args, strings.NewReader(""), &stdout, &stderr)
		if code != 2 {
			t.Errorf("%s: exit %d, want 2 (stderr %q)", name, code, stderr.String())
		}
		if name != "no command" && strings.Count(strings.TrimSpace(stderr.String()), "\n") != 0 {
			t.Errorf("%s: stderr is not one line: %q", name, stderr.String())
		}
		if stdout.Len() != 0 {
			t.Errorf("%s: stdout %q", name, stdout.String())
		}
	}
}
