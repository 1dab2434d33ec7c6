package builtin

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/dshkit/dsh/runtime/llm"
)

// A toolset's agent tool: how the engine shapes it, its child, its results and roles
// (the rows' agent and roles), and the lookups of its rows.

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
