package acp

import "encoding/json"

// ProtocolVersion is the ACP version the agent speaks.
const ProtocolVersion = 1

// Wire types of the ACP v1 messages the agent reads and writes (schema/v1/schema.json of
// the ACP specification). Only the fields dsh uses are declared; unknown fields are
// ignored on input.

type initializeParams struct {
	ProtocolVersion    *int `json:"protocolVersion"`
	ClientCapabilities struct {
		Meta map[string]any `json:"_meta"`
	} `json:"clientCapabilities"`
}

type implementation struct {
	Name    string `json:"name"`
	Title   string `json:"title,omitempty"`
	Version string `json:"version"`
}

type authMethod struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
}

type promptCapabilities struct {
	Image           bool `json:"image"`
	Audio           bool `json:"audio"`
	EmbeddedContext bool `json:"embeddedContext"`
}

type mcpCapabilities struct {
	HTTP bool `json:"http"`
	SSE  bool `json:"sse"`
}

type agentCapabilities struct {
	LoadSession        bool               `json:"loadSession"`
	PromptCapabilities promptCapabilities `json:"promptCapabilities"`
	MCPCapabilities    mcpCapabilities    `json:"mcpCapabilities"`
}

type initializeResult struct {
	ProtocolVersion   int               `json:"protocolVersion"`
	AgentCapabilities agentCapabilities `json:"agentCapabilities"`
	AuthMethods       []authMethod      `json:"authMethods"`
	AgentInfo         implementation    `json:"agentInfo"`
}

type nameValue struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// mcpServer is ACP's McpServer: stdio (no type) or {type: http|sse}.
type mcpServer struct {
	Type    string      `json:"type"`
	Name    string      `json:"name"`
	Command string      `json:"command"`
	Args    []string    `json:"args"`
	Env     []nameValue `json:"env"`
	URL     string      `json:"url"`
	Headers []nameValue `json:"headers"`
}

type newSessionParams struct {
	CWD        string      `json:"cwd"`
	MCPServers []mcpServer `json:"mcpServers"`
}

type newSessionResult struct {
	SessionID string `json:"sessionId"`
}

type loadSessionParams struct {
	SessionID  string      `json:"sessionId"`
	CWD        string      `json:"cwd"`
	MCPServers []mcpServer `json:"mcpServers"`
}

type promptParams struct {
	SessionID string            `json:"sessionId"`
	Prompt    []json.RawMessage `json:"prompt"`
}

type promptResult struct {
	StopReason string `json:"stopReason"`
}

type sessionIDParams struct {
	SessionID string `json:"sessionId"`
}

// contentBlock is ACP's ContentBlock, as far as dsh reads or writes it.
type contentBlock struct {
	Type     string `json:"type"`
	Text     string `json:"text,omitempty"`
	Data     string `json:"data,omitempty"`
	MIMEType string `json:"mimeType,omitempty"`
	URI      string `json:"uri,omitempty"`
	Name     string `json:"name,omitempty"`
	Resource *struct {
		URI      string `json:"uri"`
		MIMEType string `json:"mimeType,omitempty"`
		Text     string `json:"text,omitempty"`
		Blob     string `json:"blob,omitempty"`
	} `json:"resource,omitempty"`
}

// toolCallContent is ACP's ToolCallContent: content, diff or terminal.
type toolCallContent struct {
	Type       string        `json:"type"`
	Content    *contentBlock `json:"content,omitempty"`
	Path       string        `json:"path,omitempty"`
	TerminalID string        `json:"terminalId,omitempty"`
	OldText    *string       `json:"oldText,omitempty"`
	NewText    *string       `json:"newText,omitempty"`
}

// MarshalJSON writes oldText as null for a diff of a new file (the field is required).
func (c toolCallContent) MarshalJSON() ([]byte, error) {
	type plain toolCallContent
	if c.Type != "diff" {
		return json.Marshal(plain(c))
	}
	return json.Marshal(struct {
		Type    string  `json:"type"`
		Path    string  `json:"path"`
		OldText *string `json:"oldText"`
		NewText string  `json:"newText"`
	}{c.Type, c.Path, c.OldText, deref(c.NewText)})
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

type location struct {
	Path string `json:"path"`
}

// update is one SessionUpdate; SessionUpdate is the discriminator.
type update struct {
	SessionUpdate     string             `json:"sessionUpdate"`
	Content           any                `json:"content,omitempty"` // contentBlock or []toolCallContent
	ToolCallID        string             `json:"toolCallId,omitempty"`
	Title             string             `json:"title,omitempty"`
	Kind              string             `json:"kind,omitempty"`
	Status            string             `json:"status,omitempty"`
	Locations         []location         `json:"locations,omitempty"`
	RawInput          json.RawMessage    `json:"rawInput,omitempty"`
	RawOutput         any                `json:"rawOutput,omitempty"`
	AvailableCommands *[]json.RawMessage `json:"availableCommands,omitempty"`
	Meta              map[string]any     `json:"_meta,omitempty"`
}

type sessionNotification struct {
	SessionID string `json:"sessionId"`
	Update    update `json:"update"`
}

type permissionOption struct {
	OptionID string `json:"optionId"`
	Name     string `json:"name"`
	Kind     string `json:"kind"`
}

type permissionToolCall struct {
	ToolCallID string `json:"toolCallId"`
	Title      string `json:"title,omitempty"`
}

type requestPermissionParams struct {
	SessionID string             `json:"sessionId"`
	ToolCall  permissionToolCall `json:"toolCall"`
	Options   []permissionOption `json:"options"`
}

type requestPermissionResult struct {
	Outcome struct {
		Outcome  string `json:"outcome"`
		OptionID string `json:"optionId"`
	} `json:"outcome"`
}

// Permission option ids.
const (
	optionAllowOnce  = "allow-once"
	optionRejectOnce = "reject-once"
)

// MarshalJSON writes the fields of the block's type only (text keeps an empty text).
func (c contentBlock) MarshalJSON() ([]byte, error) {
	switch c.Type {
	case "text":
		return json.Marshal(struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}{c.Type, c.Text})
	case "image":
		return json.Marshal(struct {
			Type     string `json:"type"`
			Data     string `json:"data"`
			MIMEType string `json:"mimeType"`
		}{c.Type, c.Data, c.MIMEType})
	}
	type plain contentBlock
	return json.Marshal(plain(c))
}
