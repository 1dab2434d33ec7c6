package hookproto

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/generated/hookmap"
)

// ErrUntrusted is wrapped by the diagnostic of a project-level hook file that was not
// loaded because the project is not trusted (dsh bridge decision 10).
var ErrUntrusted = errors.New("project hook file not loaded: the project is not trusted")

// Source is one hook configuration file to load.
type Source struct {
	// Path is the file (settings.json, hooks.json, or a plugin's hooks/hooks.json).
	Path string
	// PluginRoot, when set, marks the file as a plugin's hooks: it is the plugin's root
	// (CLAUDE_PLUGIN_ROOT, Codex PLUGIN_ROOT), exported and substituted as ${...}.
	PluginRoot string
	// Plugin is the plugin's id ([LoadOptions.Plugin]).
	Plugin string
	// PluginData is the plugin's data directory (CLAUDE_PLUGIN_DATA, Codex PLUGIN_DATA).
	PluginData string
	// Project marks a project-level file (one the bridge discovered in the workspace,
	// e.g. .claude/settings.json): it loads only when the project is trusted.
	Project bool
	// Data, when set, is the configuration's text, loaded instead of reading Path, which
	// then only names it (a Claude Code agent definition's frontmatter hooks, as a
	// settings file's {"hooks": …}).
	Data []byte
}

// SourcesOptions configures LoadSources.
type SourcesOptions struct {
	// Dialect, Events, NoMatcherEvents and DefaultTimeout are passed to every LoadFile.
	Dialect         Dialect
	Events          []string
	NoMatcherEvents []string
	DefaultTimeout  time.Duration
	// Rules are the dialect's loading rules, passed to every LoadFile (nil: its table's
	// alone).
	Rules *Rules
	// Table is passed to every LoadFile (LoadOptions.Table).
	Table *hookmap.Bridge
	// ProjectDir is the project (workspace) root, substituted for ${CLAUDE_PROJECT_DIR}
	// when SubstituteProjectDir is set.
	ProjectDir string
	// Trusted says the project is trusted (an explicit flag or setting): only then do
	// Project sources load. User-level and explicitly named files load as given.
	Trusted bool
	// SubstituteProjectDir substitutes and exports ${CLAUDE_PROJECT_DIR} (Claude Code).
	SubstituteProjectDir bool
	// TrustHint says how to trust the project, for the diagnostic of an untrusted file
	// (default: "trust the project to load it").
	TrustHint string
}

// LoadSources loads every source in order and merges them into one configuration (dsh
// bridge decisions 9 and 10). A project-level file of an untrusted project is skipped
// with an ErrUntrusted diagnostic that says how to trust it; every other problem is a
// per-file, per-event, per-group or per-handler diagnostic from LoadFile. The returned
// Config is never nil.
func LoadSources(srcs []Source, o SourcesOptions) (*Config, []Diagnostic) {
	var (
		cfgs  []*Config
		diags []Diagnostic
	)
	for _, s := range srcs {
		if s.Project && !o.Trusted {
			hint := o.TrustHint
			if hint == "" {
				hint = "trust the project to load it"
			}
			diags = append(diags, Diagnostic{File: s.Path, Skipped: "file",
				Err: fmt.Errorf("%w; %s", ErrUntrusted, hint)})
			continue
		}
		lo := LoadOptions{
			Dialect: o.Dialect, Source: s.Path, Events: o.Events, NoMatcherEvents: o.NoMatcherEvents,
			PluginRoot: s.PluginRoot, Plugin: s.Plugin, PluginData: s.PluginData, DefaultTimeout: o.DefaultTimeout, Rules: o.Rules, Table: o.Table,
		}
		if o.SubstituteProjectDir {
			lo.ProjectDir = o.ProjectDir
		}
		var (
			c *Config
			d []Diagnostic
		)
		if s.Data != nil {
			c, d = Load(s.Data, lo)
		} else {
			c, d = LoadFile(s.Path, lo)
		}
		cfgs = append(cfgs, c)
		diags = append(diags, d...)
	}
	cfg, err := Merge(cfgs...)
	if err != nil { // one dialect throughout: cannot happen
		return &Config{Dialect: o.Dialect}, append(diags, Diagnostic{Skipped: "file", Err: err})
	}
	cfg.Dialect = o.Dialect
	if o.Rules != nil {
		cfg.dedupe = o.Rules.Dedupe
	}
	return cfg, diags
}

// FileExists reports whether a regular file exists at p.
func FileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

// Session is what a bridge needs to know about the session and turn an event belongs
// to, beyond the event's payload. A runtime provides it through a SessionFunc.
type Session struct {
	// SessionID identifies the session (session_id).
	SessionID string
	// TranscriptPath is the session log's path ("" when there is none: Claude Code sends
	// "", Codex null).
	TranscriptPath string
	// CWD is the session's working directory, where hooks run; "" means the bridge's
	// workspace.
	CWD string
	// Model is the session's model (Codex model; Claude Code SessionStart model).
	Model string
	// PermissionMode is the permission setting sent to hooks ("" means "default" for
	// Codex, and is omitted for Claude Code).
	PermissionMode string
	// Turn is the 1-based number of the open turn (tool events; agent events carry
	// their own).
	Turn int
	// TurnOpen says whether a turn is open (tool events); records are written only then.
	TurnOpen bool
	// LastAssistantMessage is the text of the model's last message, when known (Stop).
	LastAssistantMessage *string
	// PromptID identifies the user prompt of the open turn (Claude Code prompt_id, sent
	// on every event but SessionStart; "" omits it).
	PromptID string
	// TurnID identifies the open turn (Codex turn_id; "" sends the turn number).
	TurnID string
	// Agent is the agent's handle, used to inject the contexts of async hooks that fired
	// at tool events; nil drops them (with a log line).
	Agent dsh.Agent
	// Lineage is, for an event inside a subagent, the child's identity (Claude Code
	// agent_id and agent_type); nil for the session's own agent.
	Lineage *dsh.Lineage
	// AgentID is the child's agent id, with Lineage, or an agent hook's verifier's, with
	// Verifier (Claude Code agent_id).
	AgentID string
	// Verifier says the event is a call of an agent hook's verifier (AgentEval): its
	// prompt and agent handlers do not run, as Claude Code 2.1.328 cancels them there,
	// so that no verifier starts a verifier of its own calls.
	Verifier bool
}

// SessionFunc returns the Session of the agent with the given id ("" for a call with no
// agent).
type SessionFunc func(ctx context.Context, agentID string) Session
