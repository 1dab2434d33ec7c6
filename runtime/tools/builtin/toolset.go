package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"slices"
	"strings"

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

// AgentShape is how an engine shapes its agent tool: where a call's input holds the task
// and the agent type, the system prompt of its general-purpose child, and the words of
// the result its model reads.
type AgentShape struct {
	// Task is the input key of the child's task, Type that of the agent type ("": the
	// call names none).
	Task string `json:"task"`
	Type string `json:"type,omitempty"`
	// MaxDepth is how deep the engine lets children nest: a child at this depth is not
	// offered the tool.
	MaxDepth int `json:"maxDepth,omitempty"`
	// System is the general-purpose child's system prompt: {parent} stands for the
	// parent's system prompt and {workspace} for the working directory (Gemini CLI builds
	// its child's prompt on its own).
	System string `json:"system"`
	// DefaultType is the name of the engine's built-in agent type, whose prompt System is
	// ("": general-purpose, Claude Code's).
	DefaultType string `json:"defaultType,omitempty"`
	// ID is the shape of a child's agent id: "uuid" (Gemini CLI's), else Claude Code's
	// ("a" and 16 hex digits).
	ID string `json:"id,omitempty"`
	// Progress is how the engine's hooks see the agent tool's result (Gemini CLI's
	// subagent progress; nil: the value as it is).
	Progress *ProgressShape `json:"progress,omitempty"`
	// TypeAtCreation says the engine refuses a call naming no agent type while it builds
	// the call, before any hook runs (Gemini CLI 0.61.0); false: when the call runs.
	TypeAtCreation bool `json:"typeAtCreation,omitempty"`
	// Completion, when set, is the answer tool the engine's child ends by (Gemini CLI's
	// complete_task); nil: a child ends when its turn does, its last text the answer.
	Completion *CompletionShape `json:"completion,omitempty"`
	// Result is the model's text of a completed child: {toolsUsed} (ToolsUsed, or ""
	// when the child called no tool), {answer} (its answer, each line after Indent),
	// {agentId}, {tokens} (its last response's input and output tokens), {toolUses} and
	// {durationMs}; "" is the answer itself.
	Result string `json:"result,omitempty"`
	// ToolsUsed is {toolsUsed}: {tools} the names of the tools the child called, in first
	// call order, joined with ", ".
	ToolsUsed string `json:"toolsUsed,omitempty"`
	// Indent begins every line of {answer}.
	Indent string `json:"indent,omitempty"`
	// TurnLimit words a child that stopped at its definition's limit of model steps
	// (nil: as any other): {turns} is the limit.
	TurnLimit *TurnLimitNote `json:"turnLimit,omitempty"`
	// DefinitionSystem is the system prompt of a child of a defined agent type (Claude
	// Code's agent files in .claude/agents): {prompt} is the definition's body; "" is the body
	// itself.
	DefinitionSystem string `json:"definitionSystem,omitempty"`
	// UnknownType is the model's text of a call naming no agent type there is: {type} the
	// type named, {types} the types there are, joined with ", " in the engine's order
	// (by name, ignoring case); "" is dsh's own.
	UnknownType string `json:"unknownType,omitempty"`
	// NoTools is the model's text of a call of a type whose tools name no tool: {type},
	// and {unrecognized} its tool names, joined with ", "; "" is dsh's own.
	NoTools string `json:"noTools,omitempty"`
	// Types are the engine's own agent types besides general-purpose (a definition of
	// the same name replaces one).
	Types []AgentType `json:"types,omitempty"`
	// Description is the input key of the call's short description of the task.
	Description string `json:"description,omitempty"`
	// Background says which calls run in the background and how the model hears of them
	// (nil: every call runs in the foreground, the call waiting for the child).
	Background *BackgroundShape `json:"background,omitempty"`
	// HookResponse is the tool's value as the engine's hooks see it (tool_response), and
	// ToolStats how a child's calls count in it (agentresponse.go).
	HookResponse *AgentHookResponse  `json:"hookResponse,omitempty"`
	ToolStats    map[string]ToolKind `json:"toolStats,omitempty"`
	// Models says which model a definition's model field names (nil: the model as
	// written; "" or "inherit" the parent's).
	Models *ModelShape `json:"models,omitempty"`
}

// TurnLimitNote is how an engine words a child that stopped at its limit of model steps:
// Result follows {toolsUsed} in the model's text, and Note is the text block that follows
// the tools-used one in the value its hooks see.
type TurnLimitNote struct {
	Result string `json:"result"`
	Note   string `json:"note"`
}

// CompletionShape is the answer tool an engine's child ends by, and the words around it
// (Gemini CLI 0.61.0's complete_task, measured in gemini/subagent-invoke and
// gemini/subagent-nudge).
type CompletionShape struct {
	// Tool is the tool as the child's requests offer it (name, description,
	// input_schema).
	Tool ToolRow `json:"tool"`
	// Field is the input key of the answer (a string as it is, any other value as JSON
	// indented by two spaces).
	Field string `json:"field"`
	// Text is the tool's result.
	Text string `json:"text"`
	// Nudge continues a child whose turn ended without the call, Nudges times.
	Nudge  string `json:"nudge"`
	Nudges int    `json:"nudges"`
	// Goal and Missing are the termination reasons of a child that called the tool and
	// of one that did not; MissingAnswer is what the latter answers.
	Goal          string `json:"goal"`
	Missing       string `json:"missing"`
	MissingAnswer string `json:"missingAnswer"`
}

// ProgressShape is how Gemini CLI 0.61.0's AfterTool sees invoke_agent's result
// (tool_response.returnDisplay: isSubagentProgress, agentName, recentActivity, state,
// result, terminateReason; measured in gemini/subagent-*): an entry of recentActivity per
// call of the child, a thought after a failed one, and Missing's thoughts after a child
// that ended without its answer tool.
type ProgressShape struct {
	// Names are the tools' display names, and Descriptions their calls' descriptions
	// ({key} an input key's value), by tool name; a tool without one has none.
	Names        map[string]string `json:"names"`
	Descriptions map[string]string `json:"descriptions"`
	// Failed is the thought after a failed call: {error} the text the model read.
	Failed string `json:"failed"`
	// Missing are the thoughts after a child that ended without its answer tool.
	Missing []ProgressThought `json:"missing"`
}

// ProgressThought is a thought entry of Gemini CLI's subagent progress.
type ProgressThought struct {
	Content string `json:"content"`
	Status  string `json:"status"`
}

// ModelShape is how an engine reads the model an agent definition names.
type ModelShape struct {
	// Inherit are the names of the parent's model.
	Inherit []string `json:"inherit"`
	// Strip are suffixes left out of a name before it is looked up (a context-window
	// marker such as "[1m]").
	Strip []string `json:"strip,omitempty"`
	// Aliases are the names that stand for another model, looked up ignoring case.
	Aliases []ModelAlias `json:"aliases"`
	// Family extracts a model id's family (its first submatch): an alias with a Family
	// names the parent's model when the parent's is of that family.
	Family string `json:"family,omitempty"`
}

// ModelAlias is a name that stands for Model.
type ModelAlias struct {
	Name  string `json:"name"`
	Model string `json:"model"`
	// Family, when set, is the family of the alias: a parent of that family keeps its
	// own model.
	Family string `json:"family,omitempty"`
}

// Resolve is the model a definition naming name runs on, under a parent running parent:
// "" for the parent's (no name, an Inherit name, or an alias of the parent's family), an
// alias's model, else name as written.
func (m *ModelShape) Resolve(name, parent string) (string, error) {
	name = strings.TrimSpace(name)
	if m == nil {
		if name == "" || name == "inherit" {
			return "", nil
		}
		return name, nil
	}
	for _, s := range m.Strip {
		if len(name) >= len(s) && strings.EqualFold(name[len(name)-len(s):], s) {
			name = name[:len(name)-len(s)]
		}
	}
	key := strings.ToLower(name)
	if key == "" || slices.Contains(m.Inherit, key) {
		return "", nil
	}
	for _, a := range m.Aliases {
		if strings.ToLower(a.Name) != key {
			continue
		}
		if a.Family != "" && m.Family != "" {
			re, err := regexp.Compile(m.Family)
			if err != nil {
				return "", fmt.Errorf("toolset: agent models family %q: %w", m.Family, err)
			}
			if sub := re.FindStringSubmatch(parent); len(sub) > 1 && sub[1] == a.Family {
				return "", nil
			}
		}
		return a.Model, nil
	}
	return name, nil
}

// RolesShape is how an engine's spawning tool offers agent roles (Codex 0.169.0's
// spawn_agent, measured in codex/subagent-role*): with roles of the user's, the input
// schema gains Property, whose Schema's description lists every role ({roles}: each as
// Role, {name} and {description}, the user's in name order, then Builtin); without, the
// tool still takes Property, which the model is not told of (llm.UnofferedKey).
type RolesShape struct {
	// Property is the input key naming the role.
	Property string `json:"property"`
	// Schema is the property's schema; its description's {roles} lists the roles.
	Schema json.RawMessage `json:"schema"`
	// Role is one role in {roles}: {name} and {description}; Separator joins them.
	Role      string `json:"role"`
	Separator string `json:"separator"`
	// Builtin are the engine's own roles, in its order (a user's role of the same name
	// replaces one); each child of one runs as the default role does.
	Builtin []AgentType `json:"builtin"`
	// Unknown is the model's text of a call naming no role there is: {type}.
	Unknown string `json:"unknown"`
}

// AgentRole is an agent role of the session's configuration, as a spawning tool lists it.
type AgentRole struct {
	Name, Description string
}

// RolesOf returns the roles shape of style's toolset's spawning tool (nil: none).
func RolesOf(style Style) (*RolesShape, error) {
	rows, err := AgentRows(style)
	if err != nil {
		return nil, err
	}
	for _, r := range rows {
		if r.Roles != nil {
			return r.Roles, nil
		}
	}
	return nil, nil
}

// withRoles is schema (an object schema) with the roles property of rs: listing the
// session's roles (sorted by name) and the built-in ones when the session has roles,
// accepted but not offered otherwise.
func withRoles(schema json.RawMessage, rs *RolesShape, roles []AgentRole) (json.RawMessage, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(schema, &m); err != nil {
		return nil, err
	}
	var props map[string]json.RawMessage
	if err := json.Unmarshal(m["properties"], &props); err != nil {
		return nil, fmt.Errorf("properties: %w", err)
	}
	var prop map[string]any
	if err := json.Unmarshal(rs.Schema, &prop); err != nil {
		return nil, fmt.Errorf("roles.schema: %w", err)
	}
	user := slices.SortedFunc(slices.Values(roles), func(a, b AgentRole) int { return strings.Compare(a.Name, b.Name) })
	var list []string
	for _, r := range user {
		list = append(list, strings.NewReplacer("{name}", r.Name, "{description}", r.Description).Replace(rs.Role))
	}
	for _, b := range rs.Builtin {
		if !slices.ContainsFunc(user, func(r AgentRole) bool { return r.Name == b.Name }) {
			list = append(list, strings.NewReplacer("{name}", b.Name, "{description}", b.Description).Replace(rs.Role))
		}
	}
	if d, ok := prop["description"].(string); ok {
		prop["description"] = strings.ReplaceAll(d, "{roles}", strings.Join(list, rs.Separator))
	}
	b, err := json.Marshal(prop)
	if err != nil {
		return nil, err
	}
	props[rs.Property] = b
	if m["properties"], err = json.Marshal(props); err != nil {
		return nil, err
	}
	if len(roles) == 0 {
		m[llm.UnofferedKey], _ = json.Marshal([]string{rs.Property})
	}
	return json.Marshal(m)
}

// AgentType is one of an engine's own agent types, as its child's requests show it.
type AgentType struct {
	// Name is the type (subagent_type); Description says when to use it.
	Name        string `json:"name"`
	Description string `json:"description"`
	// System is its prompt, which DefinitionSystem's {prompt} holds in the child's system
	// prompt.
	System string `json:"system"`
	// Tools are the only tools its child is offered (none: every tool but Disallowed).
	Tools      []string `json:"tools,omitempty"`
	Disallowed []string `json:"disallowed,omitempty"`
	// Result, when set, replaces the shape's Result for its children (a one-shot type's
	// answer comes without the agent id and usage lines).
	Result string `json:"result,omitempty"`
}

// BackgroundShape is how an engine runs agent calls in the background: the call returns
// at once with Launch, and the child's end wakes the parent with a message of Notice.
type BackgroundShape struct {
	// Field is the input key of the call's choice (a boolean), and Default the choice of a
	// call that makes none.
	Field   string `json:"field"`
	Default bool   `json:"default"`
	// Launch is the call's result: {agentId} and {outputFile} (where the child's output
	// can be read).
	Launch string `json:"launch"`
	// Notice are the text blocks of the message that wakes the parent when the child
	// ends: {agentId}, {callId}, {outputFile}, {status} (completed, failed or
	// cancelled), {description}, {result} (the answer, or why it did not complete),
	// {tokens}, {toolUses} and {durationMs}. NoticeToolsUsed, when the child called tools,
	// is a block before them: {tools} their names, as AgentShape.ToolsUsed.
	Notice          []string `json:"notice"`
	NoticeToolsUsed string   `json:"noticeToolsUsed,omitempty"`
}

// AgentRow returns the agent tool's row of style's toolset (ok false when it has none).
func AgentRow(style Style) (ToolRow, bool, error) {
	all, err := Toolsets()
	if err != nil {
		return ToolRow{}, false, err
	}
	for _, ts := range all {
		if ts.Style != style {
			continue
		}
		for _, r := range ts.Tools {
			if r.Impl == "agent" {
				if r.Agent == nil {
					return ToolRow{}, false, fmt.Errorf("spec/toolsets: the %s toolset's %s has no agent shape", ts.Dialect, r.Name)
				}
				return r, true, nil
			}
		}
	}
	return ToolRow{}, false, nil
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
