package differential

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dshkit/dsh/internal/procgroup"
)

// The pinned engines.
const (
	ClaudeCodePackage = "@anthropic-ai/claude-code"
	ClaudeCodeVersion = "2.1.328"
	CodexPackage      = "@openai/codex"
	CodexVersion      = "0.169.0"
	GeminiPackage     = "@google/gemini-cli"
	GeminiVersion     = "0.61.0"
)

// Engines are the installed engine binaries.
type Engines struct {
	Claude string // the claude executable
	Codex  string // the codex launcher (node script)
	Gemini string // the gemini launcher (node script)
}

// CacheDir is $DSH_CACHE, else ./.cache under the module root dir.
func CacheDir(moduleRoot string) string {
	if d := os.Getenv("DSH_CACHE"); d != "" {
		return d
	}
	return filepath.Join(moduleRoot, ".cache")
}

// Install installs the pinned engines with npm into cache/engines (once; later calls
// reuse the installation). The missing ones are installed concurrently: npm spends most
// of an install waiting on the network and the disk.
func Install(ctx context.Context, cache string) (Engines, error) {
	e := Engines{
		Claude: filepath.Join(cache, "engines", "claude-code-"+ClaudeCodeVersion, "node_modules", ".bin", "claude"),
		Codex:  filepath.Join(cache, "engines", "codex-"+CodexVersion, "node_modules", ".bin", "codex"),
		Gemini: filepath.Join(cache, "engines", "gemini-cli-"+GeminiVersion, "node_modules", ".bin", "gemini"),
	}
	if _, err := exec.LookPath("npm"); err != nil {
		if exists(e.Claude) && exists(e.Codex) && exists(e.Gemini) {
			return e, nil
		}
		return e, errors.New("npm is needed to install the engines (apt-get install nodejs npm)")
	}
	pkgs := []struct{ bin, dir, pkg string }{
		{e.Claude, "claude-code-" + ClaudeCodeVersion, ClaudeCodePackage + "@" + ClaudeCodeVersion},
		{e.Codex, "codex-" + CodexVersion, CodexPackage + "@" + CodexVersion},
		{e.Gemini, "gemini-cli-" + GeminiVersion, GeminiPackage + "@" + GeminiVersion},
	}
	errs := make([]error, len(pkgs))
	var wg sync.WaitGroup
	for i, p := range pkgs {
		if exists(p.bin) {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			dir := filepath.Join(cache, "engines", p.dir)
			if err := os.MkdirAll(dir, 0o755); err != nil {
				errs[i] = err
				return
			}
			cmd := exec.CommandContext(ctx, "npm", "install", "--silent", "--no-audit", "--no-fund", "--prefix", dir, p.pkg)
			if out, err := cmd.CombinedOutput(); err != nil {
				errs[i] = fmt.Errorf("npm install %s: %v\n%s", p.pkg, err, out)
				return
			}
			if !exists(p.bin) {
				errs[i] = fmt.Errorf("npm install %s: %s missing afterwards", p.pkg, p.bin)
			}
		}()
	}
	wg.Wait()
	return e, errors.Join(errs...)
}

func exists(p string) bool { _, err := os.Stat(p); return err == nil }

// Run is one engine invocation's result.
type Run struct {
	Stdout, Stderr string
	Err            error
	Elapsed        time.Duration
}

// baseEnv is the environment every engine run starts from: PATH and the locale only, so
// no variable of the caller (a real key, a proxy) leaks in.
func baseEnv(home string) []string {
	return []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + home,
		"LANG=C.UTF-8",
		"TERM=dumb",
		"SHELL=/bin/sh",
	}
}

// trapProxy points every proxy variable at the mock, so that a request for any other
// host reaches the mock (and is recorded there as a stray) instead of the network.
func trapProxy(mockURL string) []string {
	var out []string
	for _, k := range []string{"HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY", "all_proxy"} {
		out = append(out, k+"="+mockURL)
	}
	return append(out, "NO_PROXY=127.0.0.1", "no_proxy=127.0.0.1")
}

func run(ctx context.Context, dir string, env []string, timeout time.Duration, name string, args ...string) Run {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = env
	cmd.Stdin = nil // /dev/null: closed stdin
	if in, ok := ctx.Value(stdinKey{}).(string); ok {
		cmd.Stdin = strings.NewReader(in) // a pipe (Case.Stdin)
	}
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.WaitDelay = 5 * time.Second
	// The run gets a process group of its own, killed whole when the run times out or the
	// suite's budget ends (and, on Linux through the parent-death signal, when the test
	// process dies), and again once it has exited: nothing an engine or its hooks started
	// outlives the run.
	setPdeathsig(cmd)
	var group atomic.Pointer[procgroup.Group]
	cmd.Cancel = func() error { group.Load().Kill(); return nil }
	start := time.Now()
	g, err := procgroup.Start(cmd)
	if err == nil {
		group.Store(g)
		stop := interruptOn(ctx, cmd)
		err = cmd.Wait()
		stop()
		g.Kill()
	}
	return Run{Stdout: out.String(), Stderr: errb.String(), Err: err, Elapsed: time.Since(start)}
}

// stdinKey is the context key of what a run reads on stdin (Case.Stdin).
type stdinKey struct{}

// withStdin returns ctx with the runs' stdin set to in (a pipe holding it).
func withStdin(ctx context.Context, in string) context.Context {
	return context.WithValue(ctx, stdinKey{}, in)
}

// interruptKey is the context key of the file whose appearance interrupts a run.
type interruptKey struct{}

// withInterrupt returns ctx with a run's interrupt file set: once a file exists at path
// (a hook of the case creates it), the run's main process gets SIGINT, as a user's
// interrupt sends it (Case.Interrupt).
func withInterrupt(ctx context.Context, path string) context.Context {
	return context.WithValue(ctx, interruptKey{}, path)
}

// interruptOn sends cmd's process SIGINT once the interrupt file of ctx exists (none:
// nothing), and returns a func that stops watching.
func interruptOn(ctx context.Context, cmd *exec.Cmd) (stop func()) {
	path, _ := ctx.Value(interruptKey{}).(string)
	if path == "" {
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				if _, err := os.Stat(path); err == nil {
					_ = cmd.Process.Signal(os.Interrupt)
					return
				}
			}
		}
	}()
	return func() { close(done) }
}

// RunClaude runs `claude -p PROMPT` headless in workspace with the settings file,
// against the mock.
func RunClaude(ctx context.Context, e Engines, home, workspace, settings, mockURL, prompt string, extra ...string) Run {
	return RunClaudeEnv(ctx, e, home, workspace, settings, mockURL, nil, prompt, extra...)
}

// ClaudeModel is the model Claude Code and dsh run ask the mock for, unless a case
// names another (Case.Model).
const ClaudeModel = "claude-sonnet-4-5"

// RunClaudeEnv is RunClaude with extra environment variables (NAME=value). A
// --permission-mode in extra replaces --dangerously-skip-permissions (Case.AskPermission);
// a --model in extra replaces ClaudeModel (Case.Model).
func RunClaudeEnv(ctx context.Context, e Engines, home, workspace, settings, mockURL string, extraEnv []string, prompt string, extra ...string) Run {
	env := append(baseEnv(home),
		"ANTHROPIC_BASE_URL="+mockURL,
		"ANTHROPIC_API_KEY=sk-ant-dummy-differential",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_AUTOUPDATER=1",
		"DISABLE_TELEMETRY=1",
		"DISABLE_ERROR_REPORTING=1",
		"IS_SANDBOX=1",
	)
	env = append(env, trapProxy(mockURL)...)
	env = append(env, extraEnv...)
	perm := []string{"--dangerously-skip-permissions"}
	if slices.Contains(extra, "--permission-mode") {
		perm = nil
	}
	args := append(append([]string{"-p", prompt, "--output-format", "json", "--settings", settings}, perm...), "--max-turns", "40")
	if !slices.Contains(extra, "--model") {
		args = append(args, "--model", ClaudeModel)
	}
	args = append(args, extra...)
	return run(ctx, workspace, env, 90*time.Second, e.Claude, args...)
}

// codexConfig is the throwaway config.toml: a custom provider on the mock.
func codexConfig(mockURL string) string {
	return fmt.Sprintf(`model = "mock-model"
model_provider = "mock"
approval_policy = "never"
sandbox_mode = "danger-full-access"

[model_providers.mock]
name = "mock"
base_url = "%s/v1"
env_key = "MOCK_API_KEY"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0

check_for_update_on_startup = false

[analytics]
enabled = false

[features]
hooks = true
codex_hooks = true
plugins = false
apps = false
remote_models = false
`, mockURL)
}

// RunCodexArgs is RunCodex with extra config.toml text (top-level keys first; from its
// first table on, it is written after the suite's own; a top-level `model` replaces the
// suite's mock-model, Case.Model) and, when resume is set, `codex
// exec resume --last PROMPT` (the previous session of codexHome); ask runs it under
// --approve-for-me (approval requests go to PermissionRequest hooks, then to the automatic
// reviewer) instead of --dangerously-bypass-approvals-and-sandbox (Case.AskPermission); a
// sandbox mode (Case.Sandbox) runs it under its own sandbox in that mode, with no approvals.
func RunCodexArgs(ctx context.Context, e Engines, home, codexHome, workspace, mockURL, extraConfig string, resume, ask bool, sandbox, prompt string) Run {
	cfg := codexConfig(mockURL)
	if sandbox != "" {
		// Codex's own sandbox on (approvals stay off: a refused command is the command's
		// failure).
		cfg = strings.Replace(cfg, `sandbox_mode = "danger-full-access"`, fmt.Sprintf("sandbox_mode = %q", sandbox), 1)
	}
	keys, tables := extraConfig, ""
	if i := strings.Index("\n"+extraConfig, "\n["); i >= 0 {
		keys, tables = extraConfig[:i], extraConfig[i:]
	}
	if strings.HasPrefix(keys, "model = ") || strings.Contains(keys, "\nmodel = ") {
		cfg = strings.Replace(cfg, "model = \"mock-model\"\n", "", 1)
	}
	if err := os.WriteFile(filepath.Join(codexHome, "config.toml"), []byte(keys+"\n"+cfg+"\n"+tables), 0o644); err != nil {
		return Run{Err: err}
	}
	env := append(baseEnv(home), "CODEX_HOME="+codexHome, "MOCK_API_KEY=dummy", "RUST_LOG=error")
	env = append(env, trapProxy(mockURL)...)
	args := []string{"exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", "--dangerously-bypass-hook-trust", "-C", workspace}
	switch {
	case ask:
		args[2] = "--approve-for-me"
	case sandbox != "":
		args = slices.Delete(args, 2, 3)
	}
	if resume {
		args = append(args, "resume", "--last")
	}
	return run(ctx, workspace, env, 90*time.Second, e.Codex, append(args, prompt)...)
}

// RunCodex runs `codex exec PROMPT` with codexHome (config.toml and hooks.json) against
// the mock.
func RunCodex(ctx context.Context, e Engines, home, codexHome, workspace, mockURL, prompt string) Run {
	if err := os.WriteFile(filepath.Join(codexHome, "config.toml"), []byte(codexConfig(mockURL)), 0o644); err != nil {
		return Run{Err: err}
	}
	env := append(baseEnv(home), "CODEX_HOME="+codexHome, "MOCK_API_KEY=dummy", "RUST_LOG=error")
	env = append(env, trapProxy(mockURL)...)
	return run(ctx, workspace, env, 90*time.Second, e.Codex, "exec", "--skip-git-repo-check",
		"--dangerously-bypass-approvals-and-sandbox", "--dangerously-bypass-hook-trust", "-C", workspace, prompt)
}

// RunDsh runs `dsh run` with the hooks file in the dialect against the mock, on the
// dialect's engine's own wire: the Messages API (--model anthropic:…) for claude-code,
// the Responses API (--model openai:…) for codex, streamGenerateContent (--model
// gemini:…) for gemini. A --model in extra replaces the engine's model.
func RunDsh(ctx context.Context, dshBin, home, workspace, hooks, dialect, logFile, mockURL, prompt string, extra ...string) Run {
	// The model's name is the engine's (hooks see it: Codex's model, Claude Code's at
	// SessionStart[compact]).
	env := append(baseEnv(home), "OPENAI_BASE_URL="+mockURL+"/v1", "OPENAI_API_KEY=dummy")
	model := "openai:mock-model"
	switch dialect {
	case "claude-code":
		env = append(baseEnv(home), "ANTHROPIC_BASE_URL="+mockURL, "ANTHROPIC_API_KEY=dummy")
		model = "anthropic:" + ClaudeModel
	case "gemini":
		env = append(baseEnv(home), "GOOGLE_GEMINI_BASE_URL="+mockURL, "GEMINI_API_KEY=dummy")
		model = "gemini:" + GeminiModel
	}
	args := []string{"run", "--workspace", workspace, "--log", logFile, "--hooks", hooks, "--dialect", dialect}
	if !slices.Contains(extra, "--model") {
		args = append(args, "--model", model)
	}
	if !slices.Contains(extra, "--sandbox") {
		// The engines run unsandboxed here (--dangerously-skip-permissions,
		// --dangerously-bypass-approvals-and-sandbox, Gemini CLI's default), and so does
		// dsh, unless the case asks otherwise.
		args = append(args, "--sandbox", "danger-full-access")
	}
	if !slices.Contains(extra, "--context-window") {
		// No window unless the case gives one, as with the engines' mock model: the mock's
		// usage figures say nothing about a real window.
		args = append(args, "--context-window", "0")
	}
	args = append(args, extra...)
	args = append(args, prompt)
	return run(ctx, workspace, env, 90*time.Second, dshBin, args...)
}

// GeminiModel is the model Gemini CLI and dsh run ask the mock for.
const GeminiModel = "gemini-2.5-pro"

// GeminiSettings is ~/.gemini/settings.json for a run: the hooks configuration (an object
// holding "hooks", and maybe "hooksConfig") plus what keeps the engine offline: API-key
// authentication (no login), no usage statistics (else it reaches a logging host), no
// telemetry, no auto-update.
func GeminiSettings(hooks map[string]any) map[string]any {
	s := map[string]any{}
	for k, v := range hooks {
		s[k] = v
	}
	s["security"] = map[string]any{"auth": map[string]any{"selectedType": "gemini-api-key"}}
	s["privacy"] = map[string]any{"usageStatisticsEnabled": false}
	s["telemetry"] = map[string]any{"enabled": false}
	s["general"] = map[string]any{"enableAutoUpdate": false}
	return s
}

// geminiEnv is the environment of a Gemini CLI run against the mock.
func geminiEnv(home, mockURL string) []string {
	// GEMINI_CLI_NO_RELAUNCH: the CLI otherwise starts a second node process of itself (with
	// a larger heap), which costs about 0.8 CPU-seconds a run; its hooks see the variable
	// either way (the relaunched child has it).
	env := append(baseEnv(home), "GEMINI_API_KEY=dummy", "GOOGLE_GEMINI_BASE_URL="+mockURL, "GEMINI_CLI_NO_RELAUNCH=true")
	return append(env, trapProxy(mockURL)...)
}

// RunGemini runs `gemini -p PROMPT --yolo --skip-trust --output-format json -m
// gemini-2.5-pro` headless in workspace, with HOME holding .gemini/settings.json (see
// GeminiSettings), against the mock; extra are further arguments (--resume latest).
func RunGemini(ctx context.Context, e Engines, home, workspace, mockURL, prompt string, extra ...string) Run {
	args := append([]string{"-p", prompt, "--yolo", "--skip-trust", "--output-format", "json", "-m", GeminiModel}, extra...)
	return run(ctx, workspace, geminiEnv(home, mockURL), 90*time.Second, e.Gemini, args...)
}
