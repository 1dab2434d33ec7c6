package differential

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// setup installs the engines and builds dsh; outside CI a failure to install skips.
func setup(t *testing.T) (Engines, string) {
	t.Helper()
	if testing.Short() {
		t.Skip("the differential suite runs the real engines; not in -short mode")
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	e, err := Install(ctx, CacheDir(root))
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("differential: cannot install the pinned engines: %v", err)
		}
		t.Skipf("differential: cannot install the pinned engines (CI would fail): %v", err)
	}
	bin := filepath.Join(t.TempDir(), "dsh")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/dsh")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/dsh: %v\n%s", err, out)
	}
	return e, bin
}

// runDir is the layout of one run of a case.
type runDir struct {
	root, home, ws, hooklog, state, hooks string
	// hookURL is the base URL of the run's HookServer (its http hooks post there).
	hookURL string
}

// serveHTTPHooks starts the run's HookServer when the case has http hooks, and returns
// what stops it.
func (d *runDir) serveHTTPHooks(t *testing.T, c Case) func() {
	answers := map[string]HTTPAnswer{}
	count := map[string]int{}
	for _, hk := range c.Hooks {
		count[hk.Event]++
		if hk.HTTP != nil {
			answers[fmt.Sprintf("%s-%d", hk.Event, count[hk.Event])] = *hk.HTTP
		}
	}
	if len(answers) == 0 {
		return func() {}
	}
	s, err := StartHookServer(d.hooklog, answers)
	if err != nil {
		t.Fatal(err)
	}
	d.hookURL = s.URL()
	return func() { _ = s.Close() }
}

// mcpConfig writes the run's MCP configuration (.mcp.json shape): the MCP hook server,
// recording into the run's hook log. It returns the file's path.
func (d runDir) mcpConfig(t *testing.T, resources bool) string {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(d.root, "mcp.json")
	if err := os.WriteFile(path, MCPConfig(exe, d.hooklog, resources), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// newRunDir makes the directories of one run under base; the workspace is named ws
// ("ws" when empty, Case.Workspace).
func newRunDir(t *testing.T, base, ws string) runDir {
	if ws == "" {
		ws = "ws"
	}
	d := runDir{root: base, home: filepath.Join(base, "home"), ws: filepath.Join(base, ws),
		hooklog: filepath.Join(base, "hooklog"), state: filepath.Join(base, "state"), hooks: filepath.Join(base, "hooks")}
	for _, p := range []string{d.home, d.ws, d.hooklog, d.state, d.hooks, filepath.Join(d.home, ".codex")} {
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return d
}

// writeFiles writes the case's workspace and home files (Case.Files, Case.HomeFiles); a
// file's {{hooks}} becomes the hooks of Hook.Source "agent:NAME" (NAME the file's key), as
// one line of JSON (a YAML flow mapping: a Claude Code agent definition's frontmatter
// hooks), each command wrapped by the recorder.
func (d runDir) writeFiles(t *testing.T, c Case, wrap string) {
	for base, files := range map[string]map[string]string{d.ws: c.Files, d.home: c.HomeFiles} {
		for name, text := range files {
			if strings.Contains(text, "{{hooks}}") {
				var cfg struct {
					Hooks json.RawMessage `json:"hooks"`
				}
				if err := json.Unmarshal(d.hooksJSONAt(t, c, wrap, d.hooks, d.hooks, "agent:"+name), &cfg); err != nil {
					t.Fatal(err)
				}
				var line bytes.Buffer
				if err := json.Compact(&line, cfg.Hooks); err != nil {
					t.Fatal(err)
				}
				text = strings.ReplaceAll(text, "{{hooks}}", line.String())
			}
			p := filepath.Join(base, filepath.FromSlash(name))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// plugin writes the case's hooks as a Claude Code plugin under the run and returns its
// directory: its commands run the scripts from ${CLAUDE_PLUGIN_ROOT}.
func (d runDir) plugin(t *testing.T, c Case, wrap string) string {
	dir := filepath.Join(d.root, "plugin")
	for _, p := range []string{filepath.Join(dir, ".claude-plugin"), filepath.Join(dir, "hooks")} {
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if c.PluginFiles != "" {
		if err := copyTree(c.PluginFiles, dir); err != nil {
			t.Fatal(err)
		}
	}
	manifest := `{"name":"difftest","version":"0.0.1","description":"written for the differential suite"}`
	if err := os.WriteFile(filepath.Join(dir, ".claude-plugin", "plugin.json"), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := d.hooksJSONAt(t, c, wrap, filepath.Join(dir, "hooks"), "${CLAUDE_PLUGIN_ROOT}/hooks", "")
	if err := os.WriteFile(filepath.Join(dir, "hooks", "hooks.json"), cfg, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// hooksJSON writes the case's hook scripts and returns the hooks configuration
// ({"hooks": {...}}), each command wrapped by the recorder.
func (d runDir) hooksJSON(t *testing.T, c Case, wrap string) []byte {
	return d.hooksJSONAt(t, c, wrap, d.hooks, d.hooks, "")
}

// writeSources writes the hooks of the settings hierarchy (Hook.Source user, project,
// local) where the engine reads them: under the run's HOME and workspace.
func (d runDir) writeSources(t *testing.T, c Case, wrap string) {
	files := map[string]string{
		"user":    filepath.Join(d.home, ".claude", "settings.json"),
		"project": filepath.Join(d.ws, ".claude", "settings.json"),
		"local":   filepath.Join(d.ws, ".claude", "settings.local.json"),
	}
	for src, path := range files {
		has := false
		for _, hk := range c.Hooks {
			has = has || hk.Source == src
		}
		if !has {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, d.hooksJSONAt(t, c, wrap, d.hooks, d.hooks, src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// hooksJSONAt writes the scripts into dir and names them as ref/NAME.sh in the commands;
// only the hooks of the settings source src are in the result ("" for the settings file).
func (d runDir) hooksJSONAt(t *testing.T, c Case, wrap, dir, ref, src string) []byte {
	events := map[string][]any{}
	count := map[string]int{}
	for _, hk := range c.Hooks {
		count[hk.Event]++
		if hk.Source != src {
			continue
		}
		name := fmt.Sprintf("%s-%d", hk.Event, count[hk.Event])
		if hk.HTTP != nil {
			events[hk.Event] = append(events[hk.Event], map[string]any{"matcher": hk.Matcher, "hooks": []any{HTTPHandler(d.hookURL, name, hk)}})
			continue
		}
		if hk.MCP != nil {
			events[hk.Event] = append(events[hk.Event], map[string]any{"matcher": hk.Matcher, "hooks": []any{MCPHandler(name, hk)}})
			continue
		}
		if hk.Prompt != "" {
			handler := map[string]any{"type": "prompt", "prompt": hk.Prompt}
			if hk.Timeout > 0 {
				handler["timeout"] = hk.Timeout
			}
			if hk.Model != "" {
				handler["model"] = hk.Model
			}
			if hk.ContinueOnBlock {
				handler["continueOnBlock"] = true
			}
			events[hk.Event] = append(events[hk.Event], map[string]any{"matcher": hk.Matcher, "hooks": []any{handler}})
			continue
		}
		script := filepath.Join(dir, name+".sh")
		if err := os.WriteFile(script, []byte(strings.ReplaceAll(hk.Script, "{{state}}", d.state)+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		handler := map[string]any{"type": "command", "command": fmt.Sprintf("sh %s %s %s %s", wrap, d.hooklog, name, ref+"/"+name+".sh")}
		if hk.Timeout > 0 {
			handler["timeout"] = hk.Timeout
		}
		for k, v := range hk.Fields {
			handler[k] = v
		}
		events[hk.Event] = append(events[hk.Event], map[string]any{"matcher": hk.Matcher, "hooks": []any{handler}})
	}
	settings := map[string]any{"hooks": events}
	if src == "" {
		for k, v := range c.Settings {
			settings[k] = v
		}
	}
	if c.DisableAll {
		settings["disableAllHooks"] = true
	}
	data, err := json.MarshalIndent(settings, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// geminiHooks writes the case's hook scripts and returns its Gemini CLI hooks
// configuration ({"hooks": {...}}): one matcher group per hook, or per Hook.Group,
// "sequential" when a hook of the group says so, timeouts in milliseconds.
func (d runDir) geminiHooks(t *testing.T, c Case, wrap string) map[string]any {
	return d.geminiHooksOf(t, c, wrap, "")
}

// geminiExtensions writes the hooks of each extension (Hook.Source "ext:NAME") where
// Gemini CLI finds them, $HOME/.gemini/extensions/NAME/hooks/hooks.json beside the
// extension's gemini-extension.json, and Case.BrokenExtension's malformed hooks.json.
func (d runDir) geminiExtensions(t *testing.T, c Case, wrap string) {
	write := func(name string, hooks []byte) {
		dir := filepath.Join(d.home, ".gemini", "extensions", name)
		if err := os.MkdirAll(filepath.Join(dir, "hooks"), 0o755); err != nil {
			t.Fatal(err)
		}
		manifest := `{"name":"` + name + `","version":"1.0.0","description":"written for the differential suite"}`
		if err := os.WriteFile(filepath.Join(dir, "gemini-extension.json"), []byte(manifest), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "hooks", "hooks.json"), hooks, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	done := map[string]bool{}
	for _, hk := range c.Hooks {
		if name, ok := strings.CutPrefix(hk.Source, "ext:"); ok && !done[name] {
			done[name] = true
			data, _ := json.MarshalIndent(d.geminiHooksOf(t, c, wrap, hk.Source), "", "  ")
			write(name, data)
		}
	}
	if c.BrokenExtension {
		write("broken", []byte(`{"hooks": {"BeforeTool": [{"hooks": [`))
	}
}

// geminiHooksOf is geminiHooks for the hooks of one source ("" the settings file, with
// Case.Settings beside the hooks; "ext:NAME" an extension); hook names count every hook
// of the case.
func (d runDir) geminiHooksOf(t *testing.T, c Case, wrap, src string) map[string]any {
	events := map[string][]any{}
	groups := map[string]map[string]any{}
	count := map[string]int{}
	for _, hk := range c.Hooks {
		count[hk.Event]++
		if hk.Source != src {
			continue
		}
		name := fmt.Sprintf("%s-%d", hk.Event, count[hk.Event])
		script := filepath.Join(d.hooks, name+".sh")
		if err := os.WriteFile(script, []byte(strings.ReplaceAll(hk.Script, "{{state}}", d.state)+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		cmd := fmt.Sprintf("sh %s %s %s %s", wrap, d.hooklog, name, script)
		if hk.Args != "" {
			cmd += " " + hk.Args
		}
		handler := map[string]any{"type": "command", "command": cmd}
		switch {
		case hk.RawTimeout != "":
			handler["timeout"] = json.RawMessage(hk.RawTimeout)
		case hk.Timeout > 0:
			handler["timeout"] = hk.Timeout * 1000
		}
		key := fmt.Sprintf("%s/%d", hk.Event, hk.Group)
		g := groups[key]
		if hk.Group == 0 || g == nil {
			g = map[string]any{"hooks": []any{}}
			if hk.Matcher != "" {
				g["matcher"] = hk.Matcher
			}
			events[hk.Event] = append(events[hk.Event], g)
			if hk.Group != 0 {
				groups[key] = g
			}
		}
		g["hooks"] = append(g["hooks"].([]any), handler)
		if hk.Sequential {
			g["sequential"] = true
		}
	}
	out := map[string]any{"hooks": events}
	if src == "" {
		for k, v := range c.Settings { // further settings (tools.core, tools.exclude)
			out[k] = v
		}
	}
	return out
}

// Result is the comparison of one case under one engine.
type Result struct {
	Case, Engine string
	Diffs        []Diff
	Err          string
	EngineTime   time.Duration
	DshTime      time.Duration
	EngineHooks  int
	DshHooks     int
	// EngineOnly says the case ran under the engine alone (DSH_DIFFERENTIAL_ENGINE_ONLY).
	EngineOnly bool
}

// runEngine runs c under engine in dir and returns what it observed; false when the
// mock could not start (res.Err says why).
func runEngine(ctx context.Context, t *testing.T, e Engines, dir, wrap string, c Case, engine string, res *Result, obs func(runDir, []Request, []Next) Observation) (Observation, runDir, bool) {
	ed := newRunDir(t, dir, c.Workspace)
	if c.Interrupt {
		ctx = withInterrupt(ctx, filepath.Join(ed.state, "interrupt"))
	}
	if c.Stdin != "" {
		ctx = withStdin(ctx, c.Stdin)
	}
	ed.writeFiles(t, c, wrap)
	stop := ed.serveHTTPHooks(t, c)
	defer stop()
	cfg := ed.hooksJSON(t, c, wrap)
	ed.writeSources(t, c, wrap)
	prompts := c.prompts()
	var eo Observation
	var em *Mock
	var err error
	switch engine {
	case "claude":
		settings := filepath.Join(ed.root, "settings.json")
		var extra []string
		if c.Plugin {
			cfg = []byte(`{}`)
			extra = []string{"--plugin-dir", ed.plugin(t, c, wrap)}
		}
		if c.AskPermission {
			extra = append(extra, "--permission-mode", "default")
		}
		if c.TrustProject {
			trust, _ := json.Marshal(map[string]any{"projects": map[string]any{ed.ws: map[string]any{"hasTrustDialogAccepted": true}}})
			if err := os.WriteFile(filepath.Join(ed.home, ".claude.json"), trust, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		if c.mcp() {
			extra = append(extra, "--mcp-config", ed.mcpConfig(t, c.MCPResources), "--strict-mcp-config")
		}
		if c.Model != "" {
			extra = append(extra, "--model", c.Model)
		}
		var env []string
		if c.AutoCompact {
			env = append(env, "CLAUDE_CODE_AUTO_COMPACT_WINDOW="+ClaudeCompactWindow)
		}
		_ = os.WriteFile(settings, cfg, 0o644)
		em, err = NewMock(Anthropic, In(c.Turns, ed.ws))
		if err != nil {
			res.Err = err.Error()
			return Observation{}, ed, false
		}
		em.HookModel(c.HookModel, c.HookModelDelay, c.HookModelFail)
		em.Children(children(c.Children, ed.ws))
		for i, p := range prompts {
			args := append(append([]string(nil), extra...), c.Args...)
			if i > 0 {
				em.NextRun()
				args = append(append([]string(nil), extra...), "--continue")
			}
			r := RunClaudeEnv(ctx, e, ed.home, ed.ws, settings, em.URL(), env, p, args...)
			res.EngineTime += r.Elapsed
			_ = os.WriteFile(filepath.Join(ed.root, fmt.Sprintf("stdout-%d.txt", i)), []byte(r.Stdout), 0o644)
			_ = os.WriteFile(filepath.Join(ed.root, fmt.Sprintf("stderr-%d.txt", i)), []byte(r.Stderr), 0o644)
			if r.Err != nil && !isExit(r.Err) {
				res.Err += fmt.Sprintf("claude: %v\n%s", r.Err, r.Stderr)
			}
		}
		eo = obs(ed, em.Requests(), SentAnthropic(em.Requests()))
	case "codex":
		codexHome := filepath.Join(ed.home, ".codex")
		_ = os.WriteFile(filepath.Join(codexHome, "hooks.json"), cfg, 0o644)
		em, err = NewMock(Responses, In(c.Turns, ed.ws))
		if err != nil {
			res.Err = err.Error()
			return Observation{}, ed, false
		}
		em.Children(children(c.Children, ed.ws))
		extraConfig := ""
		if c.Model != "" {
			extraConfig = fmt.Sprintf("model = %q\n", c.Model)
		}
		if c.AutoCompact {
			extraConfig += fmt.Sprintf("model_auto_compact_token_limit = %d\nmodel_context_window = %d\n", CodexCompactLimit, 200000)
		}
		if c.mcp() {
			exe, _ := os.Executable()
			extraConfig += CodexMCPConfig(exe, ed.hooklog, c.MCPResources)
		}
		extraConfig += c.CodexConfig
		for i, p := range prompts {
			if i > 0 {
				em.NextRun()
			}
			r := RunCodexArgs(ctx, e, ed.home, codexHome, ed.ws, em.URL(), extraConfig, i > 0, c.AskPermission, c.Sandbox, p)
			res.EngineTime += r.Elapsed
			if r.Err != nil && !isExit(r.Err) {
				res.Err += fmt.Sprintf("codex: %v\n%s", r.Err, r.Stderr)
			}
		}
		eo = obs(ed, em.Requests(), SentResponses(em.Requests()))
	case "gemini":
		gs := GeminiSettings(ed.geminiHooks(t, c, wrap))
		if c.mcp() {
			exe, _ := os.Executable()
			gs["mcpServers"] = GeminiMCPServers(exe, ed.hooklog, c.MCPResources)
		}
		settings, _ := json.MarshalIndent(gs, "", "  ")
		if err := os.MkdirAll(filepath.Join(ed.home, ".gemini"), 0o755); err != nil {
			t.Fatal(err)
		}
		_ = os.WriteFile(filepath.Join(ed.home, ".gemini", "settings.json"), settings, 0o644)
		ed.geminiExtensions(t, c, wrap)
		em, err = NewMock(Gemini, In(c.Turns, ed.ws))
		if err != nil {
			res.Err = err.Error()
			return Observation{}, ed, false
		}
		em.Children(children(c.Children, ed.ws))
		for i, p := range prompts {
			var args []string
			if i > 0 {
				em.NextRun()
				args = []string{"--resume", "latest"}
			}
			r := RunGemini(ctx, e, ed.home, ed.ws, em.URL(), p, args...)
			res.EngineTime += r.Elapsed
			_ = os.WriteFile(filepath.Join(ed.root, fmt.Sprintf("stdout-%d.txt", i)), []byte(r.Stdout), 0o644)
			_ = os.WriteFile(filepath.Join(ed.root, fmt.Sprintf("stderr-%d.txt", i)), []byte(r.Stderr), 0o644)
			if r.Err != nil && !isExit(r.Err) {
				res.Err += fmt.Sprintf("gemini: %v\n%s", r.Err, r.Stderr)
			}
		}
		eo = obs(ed, em.Requests(), SentGemini(em.Requests()))
	}
	em.Close()
	saveRequests(ed.root, em.Requests())
	if s := em.Strays(); len(s) > 0 {
		res.Err += fmt.Sprintf("%s tried to reach something other than the mock: %v", engine, s)
	}
	return eo, ed, true
}

// runCase runs c under engine and under dsh and compares.
func runCase(ctx context.Context, t *testing.T, e Engines, dshBin, base, wrap string, c Case, engine string) Result {
	res := Result{Case: c.Name, Engine: engine}
	obs := func(dir runDir, reqs []Request, sent []Next) Observation {
		runs, err := ReadHookRuns(dir.hooklog)
		if err != nil {
			res.Err += err.Error()
		}
		runs = Unordered(runs, c.Concurrent)
		calls := 0
		for _, r := range reqs {
			if r.Main {
				calls++
			}
		}
		var summaries []string
		for _, r := range reqs {
			if r.Summarize {
				summaries = append(summaries, DirectiveWords(r.Body))
			}
		}
		runs = append(runs, PromptHookRuns(reqs)...)
		var placed map[string]string
		for _, r := range reqs {
			if r.Main {
				placed = Placement(r.Body, c.Probes)
				break
			}
		}
		obs := Observation{Effects: ReadEffects(dir.ws), Calls: calls, Summaries: summaries, Sent: sent, Hooks: runs, Placed: placed}
		if dialect, ok := toolsetDialects[engine]; ok {
			// The tools the dialect offers are the engine's, but for those its toolset
			// records as absent; dsh may offer those the engine defers.
			absent, deferred := ToolsetRows(dialect)
			obs.Tools, obs.MayDefer = OfferedTools(reqs, absent), deferred
		}
		return obs
	}
	// The engine: again, up to engineAttempts runs in all, while a hook the case counts on
	// (Case.EngineUntil) did not run to its end.
	var eo Observation
	var ed runDir
	for attempt := 1; ; attempt++ {
		dir := filepath.Join(base, "engine")
		if attempt > 1 {
			dir += "-" + itoa(attempt)
		}
		var ok bool
		if eo, ed, ok = runEngine(ctx, t, e, dir, wrap, c, engine, &res, obs); !ok {
			return res
		}
		if c.EngineUntil == "" || attempt == engineAttempts || slices.ContainsFunc(eo.Hooks, func(r HookRun) bool { return r.Name == c.EngineUntil && r.Exit != "" }) {
			break
		}
		t.Logf("%s under %s: %s did not run to its end under the engine (attempt %d of %d); again", c.Name, engine, c.EngineUntil, attempt, engineAttempts)
	}
	if os.Getenv("DSH_DIFFERENTIAL_ENGINE_ONLY") != "" {
		// Record the engine's behaviour alone (a dialect dsh does not run yet).
		data, _ := json.MarshalIndent(eo, "", "  ")
		_ = os.WriteFile(filepath.Join(ed.root, "observation.json"), data, 0o644)
		res.EngineOnly, res.EngineHooks = true, len(eo.Hooks)
		return res
	}
	prompts := c.prompts()
	// dsh.
	dd := newRunDir(t, filepath.Join(base, "dsh"), c.Workspace)
	if c.Interrupt {
		ctx = withInterrupt(ctx, filepath.Join(dd.state, "interrupt"))
	}
	if c.Stdin != "" {
		ctx = withStdin(ctx, c.Stdin)
	}
	dd.writeFiles(t, c, wrap)
	stopHooks := dd.serveHTTPHooks(t, c)
	defer stopHooks()
	hooksFile := filepath.Join(dd.root, "hooks.json")
	var extra []string
	if c.Plugin {
		_ = os.WriteFile(hooksFile, []byte(`{}`), 0o644)
		extra = []string{"--plugin-dir", dd.plugin(t, c, wrap)}
	} else if engine == "gemini" {
		data, _ := json.MarshalIndent(dd.geminiHooks(t, c, wrap), "", "  ")
		_ = os.WriteFile(hooksFile, data, 0o644)
		dd.geminiExtensions(t, c, wrap)
		if c.BrokenExtension || slices.ContainsFunc(c.Hooks, func(hk Hook) bool { return strings.HasPrefix(hk.Source, "ext:") }) {
			extra = append(extra, "--trust") // dsh loads the extensions with the project's files
		}
	} else {
		_ = os.WriteFile(hooksFile, dd.hooksJSON(t, c, wrap), 0o644)
	}
	dd.writeSources(t, c, wrap)
	if c.Sources {
		extra = append(extra, "--setting-sources", "user,project,local", "--trust")
	}
	if c.AskPermission {
		extra = append(extra, "--permission-mode", "default")
	}
	if c.TrustProject {
		extra = append(extra, "--trust")
	}
	if c.Sandbox != "" {
		extra = append(extra, "--sandbox", c.Sandbox)
	}
	switch {
	case c.Model != "" && engine == "claude":
		extra = append(extra, "--model", "anthropic:"+c.Model)
	case c.Model != "" && engine == "codex":
		extra = append(extra, "--model", "openai:"+c.Model)
	}
	if c.AutoCompact {
		extra = append(extra, DshAutoCompactArgs...)
	}
	if c.mcp() {
		extra = append(extra, "--mcp-config", dd.mcpConfig(t, c.MCPResources))
	}
	if c.CodexConfig != "" && engine == "codex" {
		// The agent roles of Codex's config.toml, where dsh run --dialect codex reads them.
		if err := os.MkdirAll(filepath.Join(dd.home, ".codex"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dd.home, ".codex", "config.toml"), []byte(c.CodexConfig), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	proto := map[string]Protocol{"claude": Anthropic, "codex": Responses, "gemini": Gemini}[engine]
	dm, err := NewMock(proto, In(c.Turns, dd.ws))
	if err != nil {
		res.Err = err.Error()
		return res
	}
	dm.HookModel(c.HookModel, c.HookModelDelay, c.HookModelFail)
	dm.Children(children(c.Children, dd.ws))
	dialect := map[string]string{"claude": "claude-code", "codex": "codex", "gemini": "gemini"}[engine]
	logFile := filepath.Join(dd.root, "session.jsonl")
	for i, p := range prompts {
		args := extra
		if i == 0 {
			args = append(append(append([]string(nil), extra...), c.Args...), c.DshArgs...)
		} else {
			dm.NextRun()
		}
		r := RunDsh(ctx, dshBin, dd.home, dd.ws, hooksFile, dialect, logFile, dm.URL(), p, args...)
		res.DshTime += r.Elapsed
		// A /compact that a hook defers or that fails exits 1, as does a turn that ends on a
		// model error or that is interrupted (the engine's exit status is not compared
		// either); what it did shows in the comparison.
		switch {
		case c.DshRefuses != "" && r.Err == nil:
			res.Err += fmt.Sprintf("dsh run started; it should refuse to (%s)", c.DshRefuses)
		case c.DshRefuses != "" && !(isExit(r.Err) && strings.Contains(r.Stderr, c.DshRefuses)):
			res.Err += fmt.Sprintf("dsh run: %v, not the refusal %q\n%s", r.Err, c.DshRefuses, r.Stderr)
		case c.DshRefuses != "":
		case r.Err != nil && !((strings.HasPrefix(p, "/compact") || c.fails() || c.Interrupt) && isExit(r.Err)):
			res.Err += fmt.Sprintf("dsh run: %v\n%s", r.Err, r.Stderr)
		}
	}
	dm.Close()
	saveRequests(dd.root, dm.Requests())
	sent := SentAnthropic(dm.Requests())
	switch engine {
	case "codex":
		sent = SentResponses(dm.Requests())
	case "gemini":
		sent = SentGemini(dm.Requests())
	}
	do := obs(dd, dm.Requests(), sent)
	res.EngineHooks, res.DshHooks = len(eo.Hooks), len(do.Hooks)
	ne := Normalizer{Paths: map[string]string{ed.ws: "<ws>", ed.home: "<home>", ed.root: "<run>", wrap: "<wrap>"}}
	nd := Normalizer{Paths: map[string]string{dd.ws: "<ws>", dd.home: "<home>", dd.root: "<run>", wrap: "<wrap>"}}
	if ed.hookURL != "" {
		ne.Paths[ed.hookURL], nd.Paths[dd.hookURL] = "<hooks>", "<hooks>" // each run has its own hook server
	}
	if engine == "codex" {
		ne.NoErrorFlag, nd.NoErrorFlag = true, true
	}
	ne.CallerPath = os.Getenv("PATH")
	res.Diffs = Compare(eo, do, ne, nd)
	return res
}

// saveRequests writes the recorded request bodies next to a run (req-N.json).
func saveRequests(dir string, reqs []Request) {
	for i, r := range reqs {
		_ = os.WriteFile(filepath.Join(dir, fmt.Sprintf("req-%d.json", i)), r.Body, 0o644)
	}
}

func isExit(err error) bool {
	_, ok := err.(*exec.ExitError)
	return ok
}

func slug(s string) string { return strings.NewReplacer("/", "_", " ", "_").Replace(s) }

// budget is how long TestDifferential may run its cases: DSH_DIFFERENTIAL_BUDGET (a
// duration) when set, else until a minute before go test's -timeout deadline (leaving time
// to kill the engines, remove the temporary directories and report), else 20 minutes.
func budget(t *testing.T) time.Duration {
	if d, err := time.ParseDuration(os.Getenv("DSH_DIFFERENTIAL_BUDGET")); err == nil && d > 0 {
		return d
	}
	if deadline, ok := t.Deadline(); ok {
		return max(time.Until(deadline)-time.Minute, 10*time.Second)
	}
	return 20 * time.Minute
}

// TestDifferential runs every case under the real engines and under dsh run and fails on
// a difference testdata/differences.md does not list (and on a listed one that no longer
// occurs).
func TestDifferential(t *testing.T) {
	e, dshBin := setup(t)
	listed, err := ReadListed(filepath.Join("testdata", "differences.md"))
	if err != nil {
		t.Fatal(err)
	}
	cases := Cases()
	filter := os.Getenv("DSH_DIFFERENTIAL_CASES")
	var re *regexp.Regexp
	if filter != "" {
		re = regexp.MustCompile(filter)
	}
	base := t.TempDir()
	if keep := os.Getenv("DSH_DIFFERENTIAL_KEEP"); keep != "" {
		base = keep // keep every run's files for a look
		_ = os.RemoveAll(base)
		_ = os.MkdirAll(base, 0o755)
	}
	wrap := filepath.Join(base, "wrap.sh")
	if err := os.WriteFile(wrap, []byte(WrapScript), 0o755); err != nil {
		t.Fatal(err)
	}
	jobs := 3
	if n, err := strconv.Atoi(os.Getenv("DSH_DIFFERENTIAL_JOBS")); err == nil && n > 0 {
		jobs = n
	}
	type job struct {
		c      Case
		engine string
	}
	var todo []job
	// DSH_DIFFERENTIAL_ENGINES (a comma-separated list: claude,codex,gemini) runs the cases
	// under those engines alone.
	onlyEngines := os.Getenv("DSH_DIFFERENTIAL_ENGINES")
	for _, c := range cases {
		if re != nil && !re.MatchString(c.Name) {
			continue
		}
		for _, eng := range []string{"claude", "codex", "gemini"} {
			if c.RunsOn(eng) && (onlyEngines == "" || slices.Contains(strings.Split(onlyEngines, ","), eng)) {
				todo = append(todo, job{c, eng})
			}
		}
	}
	// The suite bounds its own run time, so that it ends (its engine processes killed, its
	// temporary directories removed) before go test's -timeout would kill it with neither.
	ctx, cancel := context.WithTimeout(context.Background(), budget(t))
	defer cancel()
	results := make([]Result, len(todo))
	sem := make(chan struct{}, jobs)
	var wg sync.WaitGroup
	for i, j := range todo {
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
			}
			if ctx.Err() != nil {
				results[i] = Result{Case: j.c.Name, Engine: j.engine, Err: "not run: the suite's time budget ran out (DSH_DIFFERENTIAL_BUDGET, or go test -timeout)"}
				return
			}
			defer func() { <-sem }()
			results[i] = runCase(ctx, t, e, dshBin, filepath.Join(base, slug(j.c.Name), j.engine), wrap, j.c, j.engine)
			if ctx.Err() != nil {
				results[i].Err += " (the suite's time budget ran out during the case)"
			}
		}()
	}
	wg.Wait()

	used := make([]bool, len(listed))
	same, accepted := 0, map[string]int{}
	var engineTime, dshTime time.Duration
	var engineHooks, dshHooks int
	engineOnly := 0
	for _, r := range results {
		if r.EngineOnly && r.Err == "" {
			engineOnly++
			engineTime += r.EngineTime
			engineHooks += r.EngineHooks
			continue
		}
		engineTime += r.EngineTime
		dshTime += r.DshTime
		engineHooks += r.EngineHooks
		dshHooks += r.DshHooks
		if r.Err != "" {
			t.Errorf("%s under %s: %s", r.Case, r.Engine, r.Err)
			continue
		}
		if len(r.Diffs) == 0 {
			same++
			continue
		}
		for _, d := range r.Diffs {
			ok := false
			for i, l := range listed {
				if l.Matches(r.Case, r.Engine, d.Aspect) {
					used[i], ok = true, true
					accepted[l.Kind]++
				}
			}
			if !ok {
				t.Errorf("%s under %s: %s", r.Case, r.Engine, d)
			}
		}
	}
	if engineOnly > 0 {
		t.Logf("differential: %d comparisons ran under the engine alone (DSH_DIFFERENTIAL_ENGINE_ONLY): nothing compared", engineOnly)
	}
	if re == nil && onlyEngines == "" && engineOnly == 0 {
		for i, l := range listed {
			if !used[i] && l.Kind != "varies" {
				t.Errorf("differential/testdata/differences.md:%d lists %s/%s/%s, which no longer differs: remove the row", l.Line, l.Case, l.Engine, l.Aspect)
			}
		}
	}
	t.Logf("differential: %d cases, %d comparisons, %d SAME; accepted differences: %d deliberate, %d varies, %d pending",
		len(cases), len(results), same, accepted["deliberate"], accepted["varies"], accepted["pending"])
	t.Logf("differential: engines %v for %d hook runs, dsh %v for %d hook runs", engineTime.Round(time.Millisecond), engineHooks, dshTime.Round(time.Millisecond), dshHooks)
	if p := os.Getenv("DSH_DIFFERENTIAL_REPORT"); p != "" {
		sort.SliceStable(results, func(i, j int) bool { return results[i].Case < results[j].Case })
		data, _ := json.MarshalIndent(results, "", "  ")
		_ = os.WriteFile(p, data, 0o644)
	}
}
