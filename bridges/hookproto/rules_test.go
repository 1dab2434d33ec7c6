package hookproto

import (
	"slices"
	"testing"
	"time"
)

// A dialect hookproto does not name loads under the Rules its package passes: each rule
// is read from them, not from the dialect's name.
func TestLoadUnderGivenRules(t *testing.T) {
	cfg := []byte(`{"disableAllHooks": true, "hooks": {"E": [{"matcher": "run_shell", "hooks": [
		{"command": "echo ${ROOT} a"}, {"command": "echo ${ROOT} a"}, {"command": "t", "timeoutMs": null, "secs": 3}]}]}}`)
	if _, diags := Load(cfg, LoadOptions{Dialect: "other", Events: []string{"E"}}); len(diags) != 1 {
		t.Fatalf("no rules: diagnostics %v, want one (unknown dialect)", diags)
	}
	rules := &Rules{Shell: []string{"bash", "-c"}, ShellEnv: "MYSHELL", TimeoutAlias: "secs", PluginRootVars: []string{"ROOT"}}
	c, diags := Load(cfg, LoadOptions{Dialect: "other", Events: []string{"E"}, Rules: rules, PluginRoot: "/plug", DefaultTimeout: 5 * time.Second})
	if len(diags) != 0 {
		t.Fatalf("diagnostics %v", diags)
	}
	if c.DisabledBy != "" {
		t.Error("disableAllHooks honoured without Rules.DisableAllHooks")
	}
	hs := c.Match("E", "xrun_shell_command") // a regex: ExactListMatchers is off
	if len(hs) != 3 {
		t.Fatalf("matched %d handlers, want 3 (no de-duplication)", len(hs))
	}
	if hs[0].Command != "echo /plug a" || !slices.Contains(hs[0].Env, "ROOT=/plug") {
		t.Errorf("plugin variable: %q %v", hs[0].Command, hs[0].Env)
	}
	if hs[0].Timeout != 5*time.Second || hs[2].Timeout != 3*time.Second {
		t.Errorf("timeouts %v %v, want the default 5s and the alias's 3s", hs[0].Timeout, hs[2].Timeout)
	}
	if got := rules.ShellArgv(func(k string) string { return map[string]string{"MYSHELL": "/bin/zsh"}[k] }); !slices.Equal(got, []string{"/bin/zsh", "-c"}) {
		t.Errorf("shell %v", got)
	}
	if got := rules.ShellArgv(func(string) string { return "" }); !slices.Equal(got, []string{"bash", "-c"}) {
		t.Errorf("shell without the variable %v", got)
	}
	rules.Dedupe = true
	c, _ = Load(cfg, LoadOptions{Dialect: "other", Events: []string{"E"}, Rules: rules, PluginRoot: "/plug"})
	if n := len(c.Match("E", "run_shell")); n != 2 {
		t.Errorf("under Rules.Dedupe %d handlers, want 2", n)
	}
	rules.DisableAllHooks = true
	c, _ = Load(cfg, LoadOptions{Dialect: "other", Events: []string{"E"}, Rules: rules})
	if c.DisabledBy == "" {
		t.Error("disableAllHooks not honoured under Rules.DisableAllHooks")
	}
}
