package cli

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

func TestMain(m *testing.M) {
	// stopAfter stops the server the PostgreSQL tests started, if any (pg_test.go).
	testscript.Main(stopAfter{m}, map[string]func(){
		"dsh": func() {
			os.Exit(Run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
		},
		"envmcp": envMCP,
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
			// The session store of dsh run without --log (XDG_STATE_HOME/dsh/sessions).
			e.Setenv("XDG_STATE_HOME", e.WorkDir+"/.state")
			return nil
		},
	})
}

// TestUsageExitCodes: usage errors exit 2 with the problem and then the usage on stderr;
// a configuration or input that cannot be used exits 1 with one line naming it. Nothing
// goes to stdout in either case.
func TestUsageExitCodes(t *testing.T) {
	dir := t.TempDir()
	bad := dir + "/bad.json"
	os.WriteFile(bad, []byte("{not json"), 0o644)
	good := dir + "/good.json"
	os.WriteFile(good, []byte(`{"hooks":{}}`), 0o644)
	in := dir + "/in.json"
	os.WriteFile(in, []byte(`{"hook_event_name":"Stop"}`), 0o644)
	for name, c := range map[string]struct {
		args []string
		code int
	}{
		"no command":             {[]string{}, 2},
		"negative response cap":  {[]string{"run", "--demo", "--max-response-bytes", "-1", "hi"}, 2},
		"response cap overflows": {[]string{"run", "--demo", "--max-response-bytes", "99999999999999999999", "hi"}, 2},
		"unknown command":        {[]string{"nope"}, 2},
		"no subcommand":          {[]string{"hooks"}, 2},
		"no event anywhere":      {[]string{"hooks", "run", "--config", good, "--input", good}, 2},
		"bad dialect":            {[]string{"hooks", "run", "--dialect", "klingon", "--config", good, "--event", "Stop", "--input", in}, 2},
		"no config":              {[]string{"hooks", "run", "--dialect", "codex", "--event", "Stop", "--input", in}, 2},
		"missing config":         {[]string{"hooks", "run", "--dialect", "codex", "--config", dir + "/none.json", "--event", "Stop", "--input", in}, 1},
		"invalid config":         {[]string{"hooks", "run", "--dialect", "codex", "--config", bad, "--event", "Stop", "--input", in}, 1},
		"unsupported event":      {[]string{"hooks", "run", "--dialect", "codex", "--config", good, "--event", "Notification", "--input", in}, 2},
		"no input":               {[]string{"hooks", "run", "--dialect", "codex", "--config", good, "--event", "Stop"}, 2},
		"missing input":          {[]string{"hooks", "run", "--dialect", "codex", "--config", good, "--event", "Stop", "--input", dir + "/none.json"}, 1},
		"input not JSON":         {[]string{"hooks", "run", "--dialect", "codex", "--config", good, "--event", "Stop", "--input", bad}, 1},
		"event mismatch":         {[]string{"hooks", "run", "--dialect", "codex", "--config", good, "--event", "PreToolUse", "--input", in}, 1},
		"unknown flag":           {[]string{"hooks", "run", "--frobnicate"}, 2},
		"extra argument":         {[]string{"hooks", "run", "--dialect", "codex", "--config", good, "--event", "Stop", "--input", in, "extra"}, 2},
		"run bad dialect":        {[]string{"run", "--demo", "--dialect", "klingon"}, 2},
		"run bad model":          {[]string{"run", "--model", "gpt", "hi"}, 2},
		"run missing model":      {[]string{"run", "--model", "scripted:" + dir + "/none.json", "hi"}, 1},
		"acp bad dialect":        {[]string{"acp", "--demo", "--dialect", "klingon"}, 2},
		"acp no model":           {[]string{"acp"}, 2},
		"acp missing model":      {[]string{"acp", "--model", "scripted:" + dir + "/none.json"}, 1},
		"log no file":            {[]string{"log"}, 2},
		"log missing file":       {[]string{"log", dir + "/none.jsonl"}, 1},
	} {
		var stdout, stderr bytes.Buffer
		code := Run(context.Background(), c.args, strings.NewReader(""), &stdout, &stderr)
		if code != c.code {
			t.Errorf("%s: exit %d, want %d (stderr %q)", name, code, c.code, stderr.String())
		}
		hasUsage := strings.Contains(stderr.String(), "\nusage: ")
		if c.code == 2 && !hasUsage {
			t.Errorf("%s: a usage error without the usage: %q", name, stderr.String())
		}
		if c.code == 1 && (hasUsage || strings.Count(strings.TrimSpace(stderr.String()), "\n") != 0) {
			t.Errorf("%s: a failure is not one line: %q", name, stderr.String())
		}
		if !strings.HasPrefix(stderr.String(), "dsh") {
			t.Errorf("%s: stderr does not name the command: %q", name, stderr.String())
		}
		if stdout.Len() != 0 {
			t.Errorf("%s: stdout %q", name, stdout.String())
		}
	}
}

// TestExampleScript runs the README's `dsh run --model scripted:examples/scripts/rm.json`
// with a log, then `dsh log` on it: the example script stays a valid scripted model.
func TestExampleScript(t *testing.T) {
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	args := []string{"run", "--model", "scripted:../examples/scripts/rm.json", "--workspace", dir, "--log", dir + "/s.jsonl", "clean", "up"}
	if code := Run(context.Background(), args, strings.NewReader(""), &stdout, &stderr); code != 0 {
		t.Fatalf("dsh run: exit %d\n%s", code, &stderr)
	}
	if !strings.Contains(stderr.String(), "── turn 1 ended: completed") || !strings.Contains(stderr.String(), "rm -r -f build") {
		t.Errorf("transcript:\n%s", &stderr)
	}
	stdout.Reset()
	stderr.Reset()
	if code := Run(context.Background(), []string{"log", dir + "/s.jsonl"}, strings.NewReader(""), &stdout, &stderr); code != 0 {
		t.Fatalf("dsh log: exit %d\n%s", code, &stderr)
	}
	if !strings.Contains(stdout.String(), "assistant: Done: build is gone.") {
		t.Errorf("dsh log:\n%s", &stdout)
	}
}
