package builtin

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

// SessionRemindersShape is how an engine tells the model of a session where it runs and
// on which model, beside its tool search's reminder (DeferredReminder): the toolset's
// "session_reminders". Claude Code 2.1.328 sends them as <system-reminder> contexts in a
// new session's first request, and to an agent hook's verifier after the results of its first
// calls (Verifier).
type SessionRemindersShape struct {
	// Environment is the environment reminder: "{cwd}" the workspace, "{git}" whether it
	// is in a git repository ("true"/"false"), "{platform}" the platform's name as Node
	// gives it, "{shell}" the shell the Bash tool runs (and the login shell when $SHELL
	// names another), "{os_version}" the system's name and release.
	Environment string `json:"environment,omitempty"`
	// Model is the model reminder of a model Models names: "{name}" its name, "{model}"
	// its id, "{cutoff}" its knowledge cutoff.
	Model string `json:"model,omitempty"`
	// ModelUnnamed is the model reminder of a model Models does not name ("{model}").
	ModelUnnamed string `json:"model_unnamed,omitempty"`
	// Models are the names and knowledge cutoffs of the models the engine knows, by id.
	Models map[string]ModelIdentity `json:"models,omitempty"`
	// Verifier is where an agent hook's verifier gets the reminders: "after_first_results"
	// (once, in the request after the results of its first calls); "": it gets none.
	Verifier string `json:"verifier,omitempty"`
}

// ModelIdentity is how an engine names one model to it.
type ModelIdentity struct {
	// Name is the model's marketing name ("Sonnet 4.5").
	Name string `json:"name"`
	// Cutoff is its knowledge cutoff ("January 2025").
	Cutoff string `json:"cutoff"`
}

// VerifierAfterFirstResults is SessionRemindersShape.Verifier's one value.
const VerifierAfterFirstResults = "after_first_results"

// Host is what the environment reminder says of the machine; HostOf reads it.
type Host struct {
	// Platform is the platform's name as Node gives it (linux, darwin, win32).
	Platform string
	// OSVersion is the system's name and release ("Linux 6.1.0").
	OSVersion string
	// Shell is the shell the Bash tool runs, with " (login shell: X)" when $SHELL names
	// another.
	Shell string
}

// HostOf is the host a session with o runs on: the Bash tool's shell (bash, else sh),
// $SHELL of o.Env (else of the process), the system's name and release.
func HostOf(o Options) Host {
	platform := runtime.GOOS
	if platform == "windows" {
		platform = "win32"
	}
	run := "bash"
	if _, err := exec.LookPath(run); err != nil {
		run = "sh"
	}
	login, ok := "", false
	for _, kv := range o.Env {
		if v, found := strings.CutPrefix(kv, "SHELL="); found {
			login, ok = v, true
		}
	}
	if !ok && o.Env == nil {
		login = os.Getenv("SHELL")
	}
	shell := run
	if login != "" && filepath.Base(login) != run {
		shell += " (login shell: " + filepath.Base(login) + ")"
	}
	return Host{Platform: platform, OSVersion: osVersion(), Shell: shell}
}

// SessionReminders are the texts (bare, without <system-reminder>) that o's style's
// toolset tells a new session's model, in the engine's order: the environment, the model,
// the deferred tools named (DeferredReminder). Nil when the toolset has none.
func SessionReminders(o Options, h Host, deferred []string) []string {
	var out []string
	if s := sessionShape(o); s != nil {
		if s.Environment != "" {
			out = append(out, strings.NewReplacer("{cwd}", o.Workspace, "{git}", boolText(inGitRepo(o.Workspace)),
				"{platform}", h.Platform, "{shell}", h.Shell, "{os_version}", h.OSVersion).Replace(s.Environment))
		}
		if id, ok := s.Models[o.Model]; ok && s.Model != "" {
			out = append(out, strings.NewReplacer("{name}", id.Name, "{model}", o.Model, "{cutoff}", id.Cutoff).Replace(s.Model))
		} else if !ok && s.ModelUnnamed != "" && o.Model != "" {
			out = append(out, strings.ReplaceAll(s.ModelUnnamed, "{model}", o.Model))
		}
	}
	if t := DeferredReminder(o, deferred); t != "" {
		out = append(out, t)
	}
	return out
}

// VerifierReminders says where o's style's toolset gives an agent hook's verifier the
// session reminders (SessionRemindersShape.Verifier; "": nowhere).
func VerifierReminders(o Options) string {
	if s := sessionShape(o); s != nil {
		return s.Verifier
	}
	return ""
}

// sessionShape is the session reminders of o's style's toolset, if any.
func sessionShape(o Options) *SessionRemindersShape {
	if o.Style == StyleDSH {
		return nil
	}
	all, err := Toolsets()
	if err != nil {
		return nil
	}
	for _, ts := range all {
		if ts.Style == o.Style {
			return ts.SessionReminders
		}
	}
	return nil
}

func boolText(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

// inGitRepo says whether dir or a directory above it holds .git.
func inGitRepo(dir string) bool {
	if dir == "" {
		return false
	}
	for d := filepath.Clean(dir); ; {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return true
		}
		up := filepath.Dir(d)
		if up == d {
			return false
		}
		d = up
	}
}
