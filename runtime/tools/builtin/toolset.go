package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"slices"

	"github.com/dshkit/dsh/runtime/llm"
	"github.com/dshkit/dsh/runtime/tools"
	"github.com/dshkit/dsh/spec"
)

// A Toolset is one dialect's tools as its engine offers them to the model: the file
// spec/toolsets/<dialect>.json, recorded from the installed engine's requests (names,
// descriptions and input schemas as the engine sends them) and read by one generic path
// ([Definitions]): each row names the Go implementation that runs it, or says why dsh
// does not offer it. Adding a tool of an engine is a row here and, when no
// implementation fits, one entry in the implementation table.
type Toolset struct {
	// Dialect is the --dialect the toolset serves ("claude-code", "codex", "gemini").
	Dialect string `json:"dialect"`
	// Style is the builtin Style whose Definitions come from this toolset.
	Style Style `json:"style"`
	// Engine is the engine and version the rows were recorded from.
	Engine string `json:"engine"`
	// Model is the model the recording's requests named (an engine may offer other tools
	// to other models; Models says which differ).
	Model string `json:"model"`
	// Tools are the engine's tools in the order its requests list them.
	Tools []ToolRow `json:"tools"`
	// Models says, per model, how the engine's toolset for it differs from Model's: the
	// tools it does not offer that model at all (Options.Model names the session's).
	Models map[string]ModelTools `json:"models,omitempty"`
	// Search is how the engine offers its deferred tools behind its tool search; nil
	// when it has none.
	Search *ToolSearch `json:"search,omitempty"`
	// Unknown is how the engine refuses a model's call of a tool it does not have, before
	// any hook runs; nil: dsh's own words, after policy (UnknownToolText).
	Unknown *UnknownTool `json:"unknown,omitempty"`
	// TaskReminder is the engine's periodic reminder of its task tools (NewTaskReminder);
	// nil: it has none.
	TaskReminder *TaskReminderShape `json:"task_reminder,omitempty"`
	// SessionReminders are the engine's reminders of where and on which model a session
	// runs (SessionReminders); nil: it has none.
	SessionReminders *SessionRemindersShape `json:"session_reminders,omitempty"`
	// HookInput is how the engine writes a call's input to its hooks (tool_input):
	// "schema", in its tool's schema's key order with the schema's defaults filled in
	// (HookInputs); "": as the model gave it.
	HookInput string `json:"hook_input,omitempty"`
	// MCP is how the engine offers an MCP server's tools beyond their names (MCPShape);
	// nil: as the server gives them.
	MCP *MCPShape `json:"mcp,omitempty"`
	// Namespaces are the descriptions of the namespaces rows belong to (ToolRow.Namespace),
	// by name: the engine offers a namespace's functions as one entry (Codex's
	// multi_agent_v1).
	Namespaces map[string]string `json:"namespaces,omitempty"`
}

// ModelTools is how an engine's toolset for one model differs from the recording's.
type ModelTools struct {
	// Without are the tools the engine does not offer the model.
	Without []string `json:"without,omitempty"`
	// Deferred are the tools the engine offers the model only behind its tool search (in
	// place of the rows' Deferred, which are the recording model's).
	Deferred []string `json:"deferred,omitempty"`
	// Tools are the tools whose description or input schema the engine words otherwise
	// for the model, as it sends them (name, description, input_schema).
	Tools []ToolRow `json:"tools,omitempty"`
	// Modes are, per permission mode (Options.PermissionMode), the tools the engine words
	// otherwise for the model under that mode, over Tools: a row's description or input
	// schema, whichever it gives.
	Modes map[string][]ToolRow `json:"modes,omitempty"`
}

// A ToolRow is one tool of a [Toolset].
type ToolRow struct {
	// Name is the tool's name as the engine offers it.
	Name string `json:"name"`
	// Impl names the implementation that runs it (a key of the implementation table),
	// empty when Absent says why dsh does not offer the tool.
	Impl string `json:"impl,omitempty"`
	// Absent, when set, says why dsh does not offer the tool (the rows still document
	// what the engine offers).
	Absent string `json:"absent,omitempty"`
	// Deferred marks a tool the engine offers only behind its tool search for the model
	// of the recording (Claude Code's ToolSearch).
	Deferred bool `json:"deferred,omitempty"`
	// Touches says what the tool may read, write or reach, for the README's tables.
	Touches string `json:"touches,omitempty"`
	// Description is the description the engine sends.
	Description string `json:"description,omitempty"`
	// InputSchema is the input schema the engine sends, as it sends it.
	InputSchema json.RawMessage `json:"input_schema,omitempty"`
	// DeferLoading is the defer_loading the engine sends with the entry (its
	// DeferredToolPlaceholder).
	DeferLoading bool `json:"defer_loading,omitempty"`
	// Agent is, for the agent tool (impl "agent"), how the engine shapes its calls and
	// results (runtime/subagent).
	Agent *AgentShape `json:"agent,omitempty"`
	// Type is the entry's type when the engine sends one other than a function ("custom":
	// a freeform tool, whose input is text in Format; "tool_search").
	Type string `json:"type,omitempty"`
	// Format is a freeform tool's format as the engine sends it (Codex's apply_patch: a
	// Lark grammar); dsh offers the tool with it (llm.FreeformKey).
	Format json.RawMessage `json:"format,omitempty"`
	// Only, when set, are the models the engine offers the tool to; the recording model is
	// offered it only when named here (Codex offers apply_patch to the models of its
	// catalog, not to an unknown one).
	Only []string `json:"only,omitempty"`
	// Namespace, when set, is the namespace the engine offers the tool in (one entry of
	// the request's tools holding its functions; a model's call names it): a key of
	// Toolset.Namespaces, and a name Models' Without may give for all its functions.
	Namespace string `json:"namespace,omitempty"`
	// HookName, when set, is the tool_name the engine's hooks see for the tool and its
	// matchers test (Codex's namespaced functions: the namespace and the name run
	// together, but spawn_agent's own name).
	HookName string `json:"hook_name,omitempty"`
	// WithMCP marks a tool the engine offers only when the session has MCP servers
	// (Codex's resource tools; Options.MCPResources).
	WithMCP bool `json:"with_mcp,omitempty"`
	// Roles, when set, is how the tool (Codex's spawn_agent) offers the agent roles a
	// child may take (Options.AgentRoles and the engine's own).
	Roles *RolesShape `json:"roles,omitempty"`
	// Nicknames are the names the engine gives the children a spawning tool starts (Codex's
	// spawn_agent: one at random, its "nickname").
	Nicknames []string `json:"nicknames,omitempty"`
	// Reads, when set, is the input key of the path a successful call reads (or writes):
	// the conversation has read that file from then on, for the rows' ReadFirst.
	Reads string `json:"reads,omitempty"`
	// Refuse, when set, are the refusals the engine makes of a call before any hook runs
	// (tools.Definition.Precheck): dsh makes them when the call is created.
	Refuse *Refusals `json:"refuse,omitempty"`
	// ReadFirst, when set, is the tool's read-before-edit rule: the engine refuses a call
	// whose file the conversation has not read ([ReadLog] remembers the reads).
	ReadFirst *ReadFirst `json:"read_first,omitempty"`
	// Aborted, when set, is the model's text of a call the cancellation of its turn
	// aborted (an ABORTED or ABORTED_BEFORE_DISPATCH failure): {seconds} is how long its
	// body had run, to a tenth of a second (0.0 when it had not started). Codex 0.169.0
	// words an exec_command call a send_input interrupt aborted "Wall time: 0.1
	// seconds\naborted by user" (codex/subagent-send-interrupt); "": dsh's own words.
	Aborted string `json:"aborted,omitempty"`
	// Interrupted, when set, is the message the engine gives a child agent before the
	// message of a send call that interrupts its running turn (Codex's send_input with
	// interrupt: its <turn_aborted> note); "": the message alone.
	Interrupted string `json:"interrupted,omitempty"`
}

// implTable maps a ToolRow's Impl to the function that builds its definition from o; the
// row's name, description and schema then replace the implementation's own.
var implTable = map[string]func(Options) tools.Definition{
	"bash":  bash,
	"read":  read,
	"write": write,
	"edit":  edit,

	"gemini.shell":        geminiImpl(geminiShell),
	"gemini.read":         geminiImpl(geminiRead),
	"gemini.write":        geminiImpl(geminiWrite),
	"gemini.replace":      geminiImpl(geminiReplace),
	"gemini.glob":         geminiImpl(geminiGlob),
	"gemini.grep":         geminiImpl(geminiGrep),
	"gemini.ls":           geminiImpl(geminiList),
	"gemini.web_fetch":    geminiImpl(geminiWebFetch),
	"gemini.write_todos":  geminiImpl(geminiWriteTodos),
	"gemini.update_topic": geminiImpl(geminiUpdateTopic),

	// Codex's own tools (spec/toolsets/codex.json).
	"codex.exec_command": codexExec,
	"codex.write_stdin":  codexWriteStdin,
	"codex.apply_patch":  codexApplyPatch,
	// Codex's MCP resource tools, over the session's MCP servers (Options.MCPResources).
	"codex.list_mcp_resources":          codexResourceList(false),
	"codex.list_mcp_resource_templates": codexResourceList(true),
	"codex.read_mcp_resource":           codexReadResource,

	// Claude Code's own tools (spec/toolsets/claude-code.json).
	"claude.notebook_edit": func(o Options) tools.Definition { return claudeFailures(claudeNotebookEdit(o), CodeNotebook) },
	"claude.web_fetch":     func(o Options) tools.Definition { return claudeFailures(claudeWebFetch(o)) },
	"claude.task_create":   func(o Options) tools.Definition { return claudeFailures(claudeTaskCreate(o)) },
	"claude.task_get":      func(o Options) tools.Definition { return claudeFailures(claudeTaskGet(o)) },
	"claude.task_list":     func(o Options) tools.Definition { return claudeFailures(claudeTaskList(o)) },
	"claude.task_update":   func(o Options) tools.Definition { return claudeFailures(claudeTaskUpdate(o)) },
	"claude.tool_search":   func(o Options) tools.Definition { return claudeFailures(claudeToolSearch(o)) },
	"claude.placeholder":   placeholder,
	// The agent tool runs a child agent: the host's (runtime/subagent), not a built-in
	// one; a host with no subagent runner does not offer it.
	"agent": func(o Options) tools.Definition { return o.Agent },
	// Codex's multi_agent_v1 functions: the host's too (Options.Agents, keyed by name).
	"codex.spawn_agent":  hostAgent("spawn_agent"),
	"codex.wait_agent":   hostAgent("wait_agent"),
	"codex.close_agent":  hostAgent("close_agent"),
	"codex.send_input":   hostAgent("send_input"),
	"codex.resume_agent": hostAgent("resume_agent"),
}

// hostAgent is the implementation of an agent function the host provides under name
// (Options.Agents); its failures read as their message alone, as Codex's do ("unknown
// agent_type 'x'", measured in codex/subagent-role-unknown).
func hostAgent(name string) func(Options) tools.Definition {
	return func(o Options) tools.Definition {
		d := o.Agents[name]
		if d.Run != nil && d.FinalizeContent == nil {
			d.FinalizeContent = plainFailure
		}
		return d
	}
}

// agentImpls are the impls of the agent functions the host provides (Options.Agents).
var agentImpls = []string{"codex.spawn_agent", "codex.wait_agent", "codex.close_agent", "codex.send_input", "codex.resume_agent"}

// AgentImpl says whether impl names an agent function the host provides (Options.Agents).
func AgentImpl(impl string) bool { return slices.Contains(agentImpls, impl) }

// AgentRows returns the rows of style's toolset whose functions the host provides
// (Options.Agents: Codex's multi_agent_v1), in the toolset's order.
func AgentRows(style Style) ([]ToolRow, error) {
	all, err := Toolsets()
	if err != nil {
		return nil, err
	}
	var out []ToolRow
	for _, ts := range all {
		if ts.Style != style {
			continue
		}
		for _, r := range ts.Tools {
			if AgentImpl(r.Impl) {
				out = append(out, r)
			}
		}
	}
	return out, nil
}

// HookNames returns the tool_name the hooks see for each tool of style's toolset that
// the engine's hooks see under another name (ToolRow.HookName), by tool name.
func HookNames(style Style) map[string]string {
	all, err := Toolsets()
	if err != nil {
		return nil
	}
	out := map[string]string{}
	for _, ts := range all {
		if ts.Style != style {
			continue
		}
		for _, r := range ts.Tools {
			if r.HookName != "" {
				out[r.Name] = r.HookName
			}
		}
	}
	return out
}

// placeholder is the entry a request declares with defer_loading while tools are behind
// the tool search (the row's defer_loading): the model never sees it, and a call to it
// fails.
func placeholder(Options) tools.Definition {
	return tools.Definition{Run: func(context.Context, *tools.RunContext) (any, error) {
		return nil, tools.NewError(CodeBadInput, "this entry is not a tool: never call it")
	}}
}

// Toolsets returns the recorded toolsets of every dialect (spec/toolsets/*.json), in file
// name order; a file that does not parse, or a row that names no implementation and gives
// no reason, is an error naming the file and the row.
func Toolsets() ([]Toolset, error) {
	return loadToolsets(spec.FS)
}

func loadToolsets(fsys fs.FS) ([]Toolset, error) {
	names, err := fs.Glob(fsys, "toolsets/*.json")
	if err != nil {
		return nil, err
	}
	var out []Toolset
	for _, name := range names {
		data, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, err
		}
		var ts Toolset
		if err := json.Unmarshal(data, &ts); err != nil {
			return nil, fmt.Errorf("spec/%s: %w", name, err)
		}
		if sr := ts.SessionReminders; sr != nil && sr.Verifier != "" && sr.Verifier != VerifierAfterFirstResults {
			return nil, fmt.Errorf("spec/%s: session_reminders.verifier: %q is not %q", name, sr.Verifier, VerifierAfterFirstResults)
		}
		for i, r := range ts.Tools {
			switch {
			case r.Name == "":
				return nil, fmt.Errorf("spec/%s: tools[%d]: no name", name, i)
			case r.Impl == "" && r.Absent == "":
				return nil, fmt.Errorf("spec/%s: tools[%d] (%s): neither impl nor absent", name, i, r.Name)
			case r.Impl != "" && implTable[r.Impl] == nil:
				return nil, fmt.Errorf("spec/%s: tools[%d] (%s): unknown impl %q", name, i, r.Name, r.Impl)
			case r.ReadFirst != nil && (r.ReadFirst.Path == "" || r.ReadFirst.Message == ""):
				return nil, fmt.Errorf("spec/%s: tools[%d] (%s): read_first needs a path and a message", name, i, r.Name)
			case r.Namespace != "" && ts.Namespaces[r.Namespace] == "":
				return nil, fmt.Errorf("spec/%s: tools[%d] (%s): namespace %q has no description in namespaces", name, i, r.Name, r.Namespace)
			}
			if r.Refuse != nil {
				if _, err := r.Refuse.required(r.InputSchema); err != nil {
					return nil, fmt.Errorf("spec/%s: tools[%d] (%s): refuse: %w", name, i, r.Name, err)
				}
			}
		}
		if m := ts.MCP; m != nil && len(m.Properties) > 0 {
			var props map[string]json.RawMessage
			if err := json.Unmarshal(m.Properties, &props); err != nil {
				return nil, fmt.Errorf("spec/%s: mcp.properties: %w", name, err)
			}
		}
		if ts.HookInput != "" && ts.HookInput != "schema" {
			return nil, fmt.Errorf("spec/%s: hook_input %q: want \"schema\" or none", name, ts.HookInput)
		}
		for model, m := range ts.Models {
			names := append(slices.Clone(m.Without), m.Deferred...)
			for _, r := range m.Tools {
				names = append(names, r.Name)
			}
			for _, rows := range m.Modes {
				for _, r := range rows {
					names = append(names, r.Name)
				}
			}
			for _, n := range names {
				if !slices.ContainsFunc(ts.Tools, func(r ToolRow) bool { return r.Name == n || r.Namespace == n }) {
					return nil, fmt.Errorf("spec/%s: models[%q]: no tool %q", name, model, n)
				}
			}
		}
		out = append(out, ts)
	}
	return out, nil
}

// toolsetDefinitions builds the tools a style's toolset offers, or reports ok false when
// the style has no toolset file.
func toolsetDefinitions(o Options) (defs []tools.Definition, ok bool, err error) {
	all, err := Toolsets()
	if err != nil {
		return nil, false, err
	}
	i := slices.IndexFunc(all, func(ts Toolset) bool { return ts.Style == o.Style })
	if i < 0 {
		return nil, false, nil
	}
	// The toolset's tools share one table of the commands exec_command leaves running
	// (Register's, which its unregister func empties, or one of their own).
	if o.execSessions == nil {
		o.execSessions = newExecSessions()
	}
	m := all[i].Models[o.Model]
	search := searchFor(all[i], o.Model)
	o.search = search
	for _, r := range all[i].Tools {
		if r.Impl == "" || slices.Contains(m.Without, r.Name) || (r.Namespace != "" && slices.Contains(m.Without, r.Namespace)) ||
			(r.Only != nil && !slices.Contains(r.Only, o.Model)) || (r.WithMCP && o.MCPResources == nil) {
			continue
		}
		loading := tools.LoadEager
		switch {
		case r.Impl == "claude.tool_search" || r.DeferLoading:
			if search == nil {
				continue // no tool search for the model: every tool is declared in full
			}
			if r.DeferLoading {
				loading = tools.LoadPlaceholder
			}
		case search != nil && (m.Deferred == nil && r.Deferred || slices.Contains(m.Deferred, r.Name)):
			loading = tools.LoadDeferred
		}
		if j := slices.IndexFunc(m.Tools, func(t ToolRow) bool { return t.Name == r.Name }); j >= 0 {
			r.Description, r.InputSchema = m.Tools[j].Description, m.Tools[j].InputSchema
		}
		if rows := m.Modes[o.PermissionMode]; rows != nil {
			if j := slices.IndexFunc(rows, func(t ToolRow) bool { return t.Name == r.Name }); j >= 0 {
				if rows[j].Description != "" {
					r.Description = rows[j].Description
				}
				if rows[j].InputSchema != nil {
					r.InputSchema = rows[j].InputSchema
				}
			}
		}
		ro := o
		ro.readFirst = r.ReadFirst
		d := implTable[r.Impl](ro)
		if d.Run == nil {
			continue // an implementation the host provides and did not (Options.Agent)
		}
		d.Name = r.Name
		if r.Description != "" {
			d.Description = r.Description
		}
		if r.InputSchema != nil {
			d.InputSchema = r.InputSchema
		}
		if d.InputSchema == nil {
			return nil, false, fmt.Errorf("builtin: the %s toolset's %s has no input_schema", all[i].Dialect, r.Name)
		}
		if r.Roles != nil {
			if d.InputSchema, err = withRoles(d.InputSchema, r.Roles, o.AgentRoles); err != nil {
				return nil, false, fmt.Errorf("builtin: the %s toolset's %s: %w", all[i].Dialect, r.Name, err)
			}
		}
		if r.Format != nil {
			if d.InputSchema, err = freeformSchema(d.InputSchema, r.Format); err != nil {
				return nil, false, fmt.Errorf("builtin: the %s toolset's %s: %w", all[i].Dialect, r.Name, err)
			}
		}
		if r.Namespace != "" {
			ns := llm.Namespace{Name: r.Namespace, Description: all[i].Namespaces[r.Namespace]}
			if d.InputSchema, err = ns.Mark(d.InputSchema); err != nil {
				return nil, false, fmt.Errorf("builtin: the %s toolset's %s: %w", all[i].Dialect, r.Name, err)
			}
		}
		if r.Refuse != nil {
			if d.Precheck, err = r.Refuse.check(r.InputSchema, o.MCPResources); err != nil {
				return nil, false, fmt.Errorf("builtin: the %s toolset's %s: refuse: %w", all[i].Dialect, r.Name, err)
			}
		}
		d.Loading = loading
		defs = append(defs, withAborted(withReadFirst(d, r.ReadFirst), r.Aborted))
	}
	if len(defs) == 0 {
		return nil, false, errors.New("builtin: the " + all[i].Dialect + " toolset offers no tool")
	}
	return defs, true, nil
}

// freeformSchema is schema (the implementation's {input: string}) with the freeform
// format the engine sends (llm.FreeformKey).
func freeformSchema(schema, format json.RawMessage) (json.RawMessage, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(schema, &m); err != nil {
		return nil, err
	}
	m[llm.FreeformKey] = format
	return json.Marshal(m)
}
