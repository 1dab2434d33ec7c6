// Package gemini is the Gemini CLI hook bridge: it runs the shell hooks of Gemini CLI
// settings.json files (system, user, workspace) and extensions' hooks/hooks.json on dsh's
// interception surface, as Gemini CLI 0.61.0 does (docs/design/GEMINI-HOOKS.md). The
// protocol is the generated table hookmap.Gemini (spec/bridges/gemini.cue): which event
// maps to which point, how output and exit codes read, timeouts, matchers, sequential
// groups and the $GEMINI_* variables. This package holds only what a table cannot say:
// the stdin of each event, the model-facing wording (<hook_context>, "Tool execution
// blocked: …") and the model-call events (BeforeModel, BeforeToolSelection, AfterModel
// on agent/request and agent/response, in model.go).
package gemini

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/dshkit/dsh/bridges/dialect"
	"github.com/dshkit/dsh/bridges/hookproto"
	"github.com/dshkit/dsh/bridges/internal/hookbridge"
	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/generated/hookmap"
	"github.com/dshkit/dsh/generated/wire/gemini"
	"github.com/dshkit/dsh/runtime/tools/builtin"
)

// Plugin is the plugin name stamped on every message the bridge adds.
var Plugin = hookmap.Gemini.Plugin

// settings are Gemini CLI's settings files, in its load order: system, user, workspace
// (the workspace's load only in a trusted folder).
var settings = []dialect.SettingsFile{
	{Source: "system", Scope: dialect.ScopeSystem, Dir: "/etc/gemini-cli", File: "settings.json"},
	{Source: "user", Scope: dialect.ScopeUser, Dir: ".gemini", File: "settings.json"},
	{Source: "project", Scope: dialect.ScopeProject, Dir: ".gemini", File: "settings.json"},
}

// ProjectFiles are the workspace settings files, relative to the project directory, that
// Config.DiscoverProject loads (when the folder is trusted).
var ProjectFiles = dialect.ProjectFiles(settings)

// Descriptor describes the Gemini CLI dialect to dsh's commands (bridges/dialect): the
// settings hierarchy (system, user, workspace settings.json; with project discovery also
// the extensions under $HOME/.gemini/extensions), the chat transcript, the built-in tools
// in builtin.StyleGemini, a cap of 100 AfterAgent continuations (the engine's turn
// limit), and the gemini provider.
func Descriptor() *dialect.Descriptor {
	return &dialect.Descriptor{
		Name: hookmap.Gemini.Dialect, Table: &hookmap.Gemini, Settings: settings,
		TranscriptSuffix: ".chat.jsonl",
		NewTranscript: func(path, sessionID, workspace string) (dialect.Transcript, error) {
			return NewChat(path, sessionID, workspace)
		},
		ToolStyle: "gemini", ContinuationCap: MaxTurns, ModelProvider: "gemini", Rules: &Rules,
		// Measured in 0.61.0 (gemini/cli/stdin-and-prompt): stdin, a blank line, the prompt.
		StdinPrompt: dialect.StdinPrompt{StdinFirst: true, Separator: "\n\n"},
		ReadStdin:   ReadStdin,
		// The table's tool policy: tools.core, tools.exclude and the policy files.
		ToolPolicy: hookmap.Gemini.ToolPolicy,
		New: func(c dialect.Config) (dialect.Bridge, error) {
			cfg := c
			if c.DiscoverProject {
				getenv := c.Getenv
				if getenv == nil {
					getenv = os.Getenv
				}
				if home := getenv("HOME"); home != "" {
					cfg.Plugins = slices.Concat(c.Plugins, Extensions(home))
				}
			}
			b, err := New(cfg)
			if err != nil {
				return nil, err // not a nil *Bridge in the interface
			}
			return b, nil
		},
	}
}

// Rules are how Gemini CLI's hook files load and run: its table's rules alone (bash -c,
// ECMAScript matchers), and no Claude Code or Codex rule (de-duplication by name and
// command, the hooksConfig block and the matcher kinds are the table's).
var Rules = hookproto.TableRules(&hookmap.Gemini)

// MaxTurns is Gemini CLI's limit of model turns per prompt, which is all that bounds an
// AfterAgent deny loop.
const MaxTurns = 100

// Extensions returns the installed extensions' hook files, ~/.gemini/extensions/*/hooks/
// hooks.json, each with its extension directory as plugin root.
func Extensions(home string) []hookproto.Source {
	files, _ := filepath.Glob(filepath.Join(home, ".gemini", "extensions", "*", "hooks", "hooks.json"))
	var out []hookproto.Source
	for _, f := range files {
		out = append(out, hookproto.Source{Path: f, PluginRoot: filepath.Dir(filepath.Dir(f))})
	}
	return out
}

// Config configures a Gemini bridge. It uses Files (settings.json files, loaded in order:
// system, user; a file that cannot be read is a diagnostic), Plugins (the extensions' hook
// files, hooks/hooks.json; a malformed one is a diagnostic and the others still load),
// Workspace (the hooks' working directory and the default project directory), ProjectDir
// (whose ProjectFiles are workspace settings), DiscoverProject, TrustProject (Gemini CLI's
// trusted folder, dsh's --trust), Session, Recorder, Logger, StderrSummaryMax, BaseEnv, Now
// (the clock of the stdin timestamps) and Canonical (without it the hooks' words read as
// Gemini CLI writes them: <hook_context>, "Tool execution blocked: <reason>", contexts
// after the tool result's text); New ignores the other fields.
type Config = dialect.Config

// Option adjusts a bridge (see codex.Option).
type Option = hookbridge.Option

// Bridge is a loaded Gemini bridge: a dsh plugin.
type Bridge struct {
	*hookbridge.Bridge
}

// New loads the configured settings and extension hook files and returns the bridge.
// Loading problems are diagnostics, never an error.
func New(cfg Config, opts ...Option) (*Bridge, error) {
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	getenv := cfg.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	project := cfg.ProjectDir
	if project == "" {
		project = cfg.Workspace
	}
	d := behavior(now, !cfg.Canonical)
	if temp := ProjectTempDir(getenv("HOME"), project); temp != "" {
		d.SessionEnv = func(_ string, s hookproto.Session) []string {
			return []string{"GEMINI_PLANS_DIR=" + filepath.Join(temp, s.SessionID, "plans")}
		}
	}
	b, err := hookbridge.New(d, cfg, opts...)
	if err != nil {
		return nil, err
	}
	return &Bridge{b}, nil
}

func behavior(now func() time.Time, asEngine bool) hookbridge.Behavior {
	m := &model{turns: map[string]*turnText{}}
	d := hookbridge.Behavior{
		Name: hookproto.Gemini, Table: &hookmap.Gemini, ProjectFiles: ProjectFiles, Rules: &Rules,
		Encode:    func(in hookbridge.Input) ([]byte, error) { return m.encode(in, now) },
		TrustHint: "pass --trust (Config.TrustProject) to load the workspace's hooks, as Gemini CLI loads them only in a trusted folder",
		Render: hookbridge.Render{
			Contexts: func(_, _ string, rep *hookproto.Report) []string { return []string{Context(rep.Merged.Contexts)} },
			Deny: func(_ string, _ json.RawMessage, rep *hookproto.Report) string {
				return "Tool execution blocked: " + rep.Merged.Reason
			},
			// The engine says nothing before the result; the table's note follows it.
			RewriteSilent: true,
			// An AfterAgent deny is the next prompt, not a context.
			StopForm:       dsh.PluginFormRelay,
			ResultContexts: true,
		},
		EndReason: endReason,
		Register:  m.register,
	}
	if !asEngine {
		d.Render = hookbridge.Render{}
	}
	return d
}

// ProjectTempDir is Gemini CLI's temporary directory of a project, under which it keeps
// each session's plans ($GEMINI_PLANS_DIR is <it>/<session id>/plans): $HOME/.gemini/tmp/
// and the project's short id, the one $HOME/.gemini/projects.json registers for the
// project's directory, else the slug of the directory's name, as Gemini CLI claims it
// (lower case, each run of other characters than a-z and 0-9 one "-"). It is "" when
// home or project is unknown. It only reads: neither dsh nor the engine's hooks get the
// directory created (Gemini CLI creates the plans directory in plan mode only).
func ProjectTempDir(home, project string) string {
	if home == "" || project == "" {
		return ""
	}
	project, _ = filepath.Abs(project)
	var reg struct {
		Projects map[string]string `json:"projects"`
	}
	data, _ := os.ReadFile(filepath.Join(home, ".gemini", "projects.json"))
	_ = json.Unmarshal(data, &reg)
	id := reg.Projects[project]
	if id == "" || id != filepath.Base(id) {
		id = strings.Trim(nonSlug.ReplaceAllString(strings.ToLower(filepath.Base(project)), "-"), "-")
	}
	if id == "" {
		id = "project"
	}
	return filepath.Join(home, ".gemini", "tmp", id)
}

var nonSlug = regexp.MustCompile(`[^a-z0-9]+`)

// Context is how Gemini CLI hands hook contexts to the model: joined by newlines inside
// one <hook_context> element.
func Context(texts []string) string {
	return "<hook_context>" + strings.Join(texts, "\n") + "</hook_context>"
}

// endReason maps dsh's session-end reasons to Gemini CLI's: close is "exit".
func endReason(reason string) string {
	if reason == string(dsh.SessionEndReasonClose) {
		return "exit"
	}
	return reason
}

// encode builds the stdin of one event as its generated wire type: the common fields in
// the engine's order, then the event's own, without a trailing newline.
func (m *model) encode(in hookbridge.Input, now func() time.Time) ([]byte, error) {
	s := in.Session
	ts := now().UTC().Format("2006-01-02T15:04:05.000Z")
	var v interface {
		MarshalJSON() ([]byte, error)
		Validate() error
	}
	switch in.Event {
	case "SessionStart":
		src := gemini.SessionStartInputSource(in.Source)
		if !src.Valid() {
			return nil, hookbridge.ErrNotFired // no SessionStart after a compaction
		}
		v = gemini.SessionStartInput{SessionID: s.SessionID, TranscriptPath: s.TranscriptPath, CWD: s.CWD,
			HookEventName: gemini.SessionStartInputHookEventNameSessionStart, Timestamp: ts, Source: src}
	case "SessionEnd":
		reason := gemini.SessionEndInputReason(endReason(in.Reason))
		if !reason.Valid() {
			reason = gemini.SessionEndInputReasonOther
		}
		v = gemini.SessionEndInput{SessionID: s.SessionID, TranscriptPath: s.TranscriptPath, CWD: s.CWD,
			HookEventName: gemini.SessionEndInputHookEventNameSessionEnd, Timestamp: ts, Reason: reason}
	case "BeforeAgent":
		v = gemini.BeforeAgentInput{SessionID: s.SessionID, TranscriptPath: s.TranscriptPath, CWD: s.CWD,
			HookEventName: gemini.BeforeAgentInputHookEventNameBeforeAgent, Timestamp: ts, Prompt: in.Prompt}
	case "AfterAgent":
		prompt, response := m.turn(s, in.Turn)
		v = gemini.AfterAgentInput{SessionID: s.SessionID, TranscriptPath: s.TranscriptPath, CWD: s.CWD,
			HookEventName: gemini.AfterAgentInputHookEventNameAfterAgent, Timestamp: ts, Prompt: prompt,
			PromptResponse: response, StopHookActive: in.StopHookActive}
	case "BeforeModel":
		v = gemini.BeforeModelInput{SessionID: s.SessionID, TranscriptPath: s.TranscriptPath, CWD: s.CWD,
			HookEventName: gemini.BeforeModelInputHookEventNameBeforeModel, Timestamp: ts, LLMRequest: LLMRequest(in.Request)}
	case "BeforeToolSelection":
		v = gemini.BeforeToolSelectionInput{SessionID: s.SessionID, TranscriptPath: s.TranscriptPath, CWD: s.CWD,
			HookEventName: gemini.BeforeToolSelectionInputHookEventNameBeforeToolSelection, Timestamp: ts,
			LLMRequest: LLMRequest(in.Request)}
	case "AfterModel":
		v = gemini.AfterModelInput{SessionID: s.SessionID, TranscriptPath: s.TranscriptPath, CWD: s.CWD,
			HookEventName: gemini.AfterModelInputHookEventNameAfterModel, Timestamp: ts,
			LLMRequest: LLMRequest(in.Request), LLMResponse: LLMResponse(in.Response)}
	case "BeforeTool":
		v = gemini.BeforeToolInput{SessionID: s.SessionID, TranscriptPath: s.TranscriptPath, CWD: s.CWD,
			HookEventName: gemini.BeforeToolInputHookEventNameBeforeTool, Timestamp: ts, ToolName: in.ToolName,
			ToolInput: in.ToolInput, MCPContext: mcpContext(in.MCP), OriginalRequestName: original(in)}
	case "AfterTool":
		v = gemini.AfterToolInput{SessionID: s.SessionID, TranscriptPath: s.TranscriptPath, CWD: s.CWD,
			HookEventName: gemini.AfterToolInputHookEventNameAfterTool, Timestamp: ts, ToolName: in.ToolName,
			ToolInput: in.ToolInput, ToolResponse: toolResponse(in), MCPContext: mcpContext(in.MCP), OriginalRequestName: original(in)}
	case "PreCompress":
		v = gemini.PreCompressInput{SessionID: s.SessionID, TranscriptPath: s.TranscriptPath, CWD: s.CWD,
			HookEventName: gemini.PreCompressInputHookEventNamePreCompress, Timestamp: ts,
			Trigger: gemini.PreCompressInputTrigger(in.Trigger)}
	case "Notification":
		v = gemini.NotificationInput{SessionID: s.SessionID, TranscriptPath: s.TranscriptPath, CWD: s.CWD,
			HookEventName: gemini.NotificationInputHookEventNameNotification, Timestamp: ts,
			NotificationType: in.NotificationType, Message: in.Message, Details: json.RawMessage(`{}`)}
	default:
		return nil, hookbridge.ErrNotFired
	}
	if err := v.Validate(); err != nil {
		return nil, err
	}
	return v.MarshalJSON()
}

// mcpContext is the mcp_context of a call of an MCP tool (nil for another tool), as
// Gemini CLI 0.61.0 writes it (gemini/tools/mcp): the server's name, its own name of the
// tool, and how the server is reached, the keys it lacks left out.
func mcpContext(t *hookproto.MCPTool) json.RawMessage {
	if t == nil {
		return nil
	}
	var args *[]string
	if t.Args != nil {
		args = &t.Args // an empty list the configuration gave is written, as the engine does
	}
	data, _ := json.Marshal(struct {
		Server  string    `json:"server_name"`
		Tool    string    `json:"tool_name"`
		Command string    `json:"command,omitempty"`
		Args    *[]string `json:"args,omitempty"`
		URL     string    `json:"url,omitempty"`
	}{t.Server, t.Tool, t.Command, args, t.URL})
	return data
}

// toolResponse is AfterTool's tool_response as Gemini CLI's tools give it (for the
// built-in tools of the Gemini style, builtin.GeminiDisplay and builtin.GeminiFailure):
// llmContent the text the model reads, returnDisplay what the user is shown, and for a
// failure its error's message and type. Another tool's display is its text; an MCP
// tool's llmContent is the parts the model reads (a text part per text block), its
// display the server's text.
func toolResponse(in hookbridge.Input) gemini.ToolResponse {
	if r, ok := agentResponse(in.ToolName, in.ToolResponse, in.ToolText); ok && in.Error == "" {
		return r
	}
	if in.MCP != nil && in.Error == "" {
		parts := make([]map[string]string, len(in.ToolTexts))
		for i, t := range in.ToolTexts {
			parts[i] = map[string]string{"text": t}
		}
		var r gemini.ToolResponse
		r.LLMContent, _ = json.Marshal(parts)
		r.ReturnDisplay, _ = json.Marshal(mcpDisplay(in.ToolResponse, in.ToolText))
		return r
	}
	text, display := in.ToolText, any(in.ToolText)
	var fail map[string]string
	if in.Error != "" {
		fail = map[string]string{"message": in.Error}
		if typ, llm, disp, ok := builtin.GeminiFailure(in.ToolName, in.ToolInput, in.ErrorCode, in.Error); ok {
			fail["type"], text, display = typ, llm, disp
		}
	} else if d, ok := builtin.GeminiDisplay(in.ToolName, in.ToolResponse, in.Session.CWD); ok {
		display = d
	}
	var r gemini.ToolResponse
	r.LLMContent, _ = json.Marshal(text)
	r.ReturnDisplay, _ = json.Marshal(display)
	if fail != nil {
		r.Error, _ = json.Marshal(fail)
	}
	return r
}

// original is a tail call's original_request_name: the name of the model's call it
// replaces; nil for any other call.
func original(in hookbridge.Input) *string {
	if in.OriginalName == "" {
		return nil
	}
	name := in.OriginalName
	return &name
}

// mcpDisplay is the returnDisplay of an MCP tool's result as Gemini CLI 0.61.0 words it
// (getStringifiedResultForDisplay): each content block of the server's answer (value, an
// mcp.Value) on a line of its own, a text as it is; text when value holds no content
// list.
func mcpDisplay(value json.RawMessage, text string) string {
	var v struct {
		Content []struct {
			Type     string `json:"type"`
			Text     string `json:"text"`
			MIMEType string `json:"mimeType"`
			URI      string `json:"uri"`
			Name     string `json:"name"`
			Title    string `json:"title"`
			Resource *struct {
				MIMEType string `json:"mimeType"`
				Text     string `json:"text"`
			} `json:"resource"`
		} `json:"content"`
	}
	if json.Unmarshal(value, &v) != nil || v.Content == nil {
		return text
	}
	lines := make([]string, len(v.Content))
	for i, c := range v.Content {
		switch c.Type {
		case "text":
			lines[i] = c.Text
		case "image":
			lines[i] = "[Image: " + c.MIMEType + "]"
		case "audio":
			lines[i] = "[Audio: " + c.MIMEType + "]"
		case "resource_link":
			name := c.Title
			if name == "" {
				name = c.Name
			}
			lines[i] = "[Link to " + name + ": " + c.URI + "]"
		case "resource":
			switch {
			case c.Resource != nil && c.Resource.Text != "":
				lines[i] = c.Resource.Text
			case c.Resource != nil && c.Resource.MIMEType != "":
				lines[i] = "[Embedded Resource: " + c.Resource.MIMEType + "]"
			default:
				lines[i] = "[Embedded Resource: unknown type]"
			}
		default:
			lines[i] = "[Unknown content type: " + c.Type + "]"
		}
	}
	return strings.Join(lines, "\n")
}
