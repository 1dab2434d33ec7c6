package differential

// The engine's side of a case: its run directory, the engine's run, and the observation
// both sides' runs make. The key of a case's recording (record.go) covers this file: what
// changes here can change what an engine's run shows.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

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

// saveRequests writes the recorded request bodies next to a run (req-N.json).
func saveRequests(dir string, reqs []Request) {
	for i, r := range reqs {
		_ = os.WriteFile(filepath.Join(dir, fmt.Sprintf("req-%d.json", i)), r.Body, 0o644)
	}
}

// observe is what a run of c in dir showed, given the mock's requests and what each main
// request sent. Its Tools are every tool the requests offered; withToolset then leaves out
// those dsh's toolset records as absent, before the comparison.
func observe(c Case, dir runDir, reqs []Request, sent []Next) (Observation, error) {
	runs, err := ReadHookRuns(dir.hooklog)
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
	return Observation{Effects: ReadEffects(dir.ws), Calls: calls, Summaries: summaries, Sent: sent, Hooks: runs, Placed: placed, Tools: OfferedTools(reqs, nil), ChildModels: ChildModelsOf(reqs), ChildTools: ChildToolsOf(reqs)}, err
}
