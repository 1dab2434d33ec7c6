package runner

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/llm/provider"
	"github.com/dshkit/dsh/runtime/loop"
	"github.com/dshkit/dsh/runtime/session"
	"github.com/dshkit/dsh/runtime/subagent"
	"github.com/dshkit/dsh/runtime/tools"
	"github.com/dshkit/dsh/runtime/tools/builtin"
)

// Subagents configures a session's subagents: the children its agent tool starts
// (runtime/subagent), when the dialect's toolset has one.
type Subagents struct {
	// Logs opens each child's session log, in the parent's store (nil: in memory, lost
	// with the process; dsh run gives a JSONL file beside the parent's, or a session of
	// the same PostgreSQL database).
	Logs subagent.Logs
	// Definitions are the agent types besides the built-in general-purpose one (Claude
	// Code's .claude/agents/*.md).
	Definitions []subagent.Definition
	// MaxDepth bounds how deep children nest (0: the engine's, from its toolset row).
	MaxDepth int
	// MaxRunning bounds the children running at once (0: subagent.DefaultMaxRunning).
	MaxRunning int
}

// subagents builds the session's subagent runner and its agent tool for the dialect's
// toolset row of the agent tool (none when the toolset has no such row).
func (s *Session) subagents() (tools.Definition, error) {
	row, ok, err := builtin.AgentRow(s.Builtin.Style)
	if err != nil {
		return tools.Definition{}, err
	}
	if !ok {
		s.Builtin.Agents, err = s.codexAgents()
		return tools.Definition{}, err
	}
	shape := *row.Agent
	cfg := s.cfg.Subagents
	logs := cfg.Logs
	if logs == nil {
		logs = &subagent.MemoryLogs{}
	}
	// The engine's own types first: a definition of the same name replaces one.
	defs := make([]subagent.Definition, 0, len(shape.Types)+len(cfg.Definitions))
	for _, t := range shape.Types {
		defs = append(defs, subagent.Definition{Name: t.Name, Description: t.Description, System: t.System,
			Tools: t.Tools, Disallowed: t.Disallowed})
	}
	known := s.toolNames()
	for _, d := range cfg.Definitions {
		for _, t := range d.Tools {
			if !known[t] && !strings.HasPrefix(t, "mcp__") {
				s.note(fmt.Sprintf("agent definition %s: field tools: %q names no tool (dropped when its child starts; a list of none refuses the call)", cmp.Or(d.Source, d.Name), t))
			}
		}
		defs = append(defs, d)
	}
	if shape.DefinitionSystem != "" {
		for i := range defs {
			defs[i].System = strings.ReplaceAll(shape.DefinitionSystem, "{prompt}", defs[i].System)
		}
	}
	// A definition's model as the engine reads it: an alias, the parent's, or as written.
	for i := range defs {
		m, err := shape.Models.Resolve(defs[i].Model, s.LLM.Model)
		if err != nil {
			return tools.Definition{}, err
		}
		defs[i].Model = m
	}
	// The built-in child's prompt, on the parent's where the engine builds it so.
	general := strings.NewReplacer("{parent}", s.cfg.Prompts.system(s.cfg.Workspace), "{workspace}", s.cfg.Workspace).Replace(shape.System)
	r, err := subagent.New(subagent.Config{Registry: s.Hooks, Tools: s.childTools, Model: s.evalModel, LLM: s.LLM,
		Logs: logs, ParentLog: s.cfg.Log, ParentSessionID: s.cfg.SessionID, Workspace: s.cfg.Workspace,
		Definitions: defs, GeneralSystem: general, ToolName: row.Name, DefaultType: shape.DefaultType, Completion: completion(shape),
		NewID:    newID(shape.ID),
		MaxDepth: cmp.Or(cfg.MaxDepth, shape.MaxDepth), MaxRunning: cfg.MaxRunning,
		ContinuationCap: s.continuationCap(), Logger: s.logger, Refusal: refusal(shape), ToolKinds: toolKinds(shape),
		Notice: notice(shape), OutputFile: s.childTranscriptPath, OnChild: s.onChild,
		BeforeChild: func(_ context.Context, def subagent.Definition, agentID string) (func(), error) {
			if len(def.Hooks) == 0 || s.childHooks == nil {
				return func() {}, nil
			}
			return s.childHooks(def, agentID)
		}})
	if err != nil {
		return tools.Definition{}, err
	}
	s.agents = r
	s.closers = append(s.closers, r.Close)
	fields := subagent.Fields{Task: shape.Task, Type: shape.Type, Description: shape.Description, TypeAtCreation: shape.TypeAtCreation}
	if bg := shape.Background; bg != nil {
		fields.Background, fields.BackgroundByDefault = bg.Field, bg.Default
	}
	def := r.Definition(fields)
	if shape.Result != "" {
		// The engine's own types may word their results otherwise, unless a definition
		// replaced them.
		results := map[string]string{}
		for _, t := range shape.Types {
			if t.Result != "" && !slices.ContainsFunc(cfg.Definitions, func(d subagent.Definition) bool { return d.Name == t.Name }) {
				results[t.Name] = t.Result
			}
		}
		def.Output = &tools.Output{Render: resultText(shape, results)}
	}
	if shape.UnknownType != "" {
		// The engine shows its refusals as they are, without dsh's "Error: " (a content a
		// listener replaced stays as it is).
		def.FinalizeContent = func(_ dsh.ToolExecution, result dsh.ToolExecutionResult) ([]dsh.ContentBlock, error) {
			f, ok := result.(dsh.ToolFailure)
			if !ok || f.Error.Info == nil || f.Error.Info.Code != subagent.CodeSubagent || len(f.Content) != 1 {
				return nil, nil
			}
			if t, ok := f.Content[0].(dsh.TextBlock); ok && t.Text == "Error: "+f.Error.Message {
				return []dsh.ContentBlock{dsh.TextBlock{Text: f.Error.Message}}, nil
			}
			return nil, nil
		}
	}
	return def, nil
}

// BackgroundTasks lists the session's children running in the background
// (loop.Config.BackgroundTasks; nil: none).
func (s *Session) BackgroundTasks() []dsh.BackgroundTask {
	if s.agents == nil {
		return nil
	}
	return s.agents.BackgroundTasks()
}

// Settle waits until a, the session's agent, is idle and no child it started in the
// background runs: a child that ends wakes a with its notice, and the turn that starts
// is waited for too (as claude -p waits for its background agents before it exits).
func (s *Session) Settle(ctx context.Context, a *loop.Agent) error {
	for {
		if err := a.Wait(ctx); err != nil {
			return err
		}
		if s.agents == nil {
			return nil
		}
		if err := s.agents.WaitBackground(ctx); err != nil {
			return err
		}
		// A child's notice wakes a before WaitBackground returns: running now means
		// another turn to wait for.
		if a.Status() == dsh.AgentStatusIdle && len(s.agents.Background()) == 0 {
			return nil
		}
	}
}

// StopBackground cancels the children running in the background and refuses new ones;
// their ends wake no agent. It returns once they have ended.
func (s *Session) StopBackground() {
	if s.agents != nil {
		s.agents.Close()
	}
}

// ChildObserver is told of each child the session's agent tool starts: its id, lineage
// and session log, before the child's first event; the func it returns, if any, is called
// when the child has ended.
type ChildObserver func(agentID string, lineage dsh.Lineage, log *session.Log) (done func())

// ObserveChildren adds fn to the observers of the session's children (an editor's view
// of their tool calls).
func (s *Session) ObserveChildren(fn ChildObserver) {
	s.childMu.Lock()
	defer s.childMu.Unlock()
	s.childObservers = append(s.childObservers, fn)
}

// SetChildRuntime makes the children run their calls on the tool runtimes fn returns
// (a server's own, with its approvals) instead of Runtime's.
func (s *Session) SetChildRuntime(fn func() *tools.Runtime) {
	s.childMu.Lock()
	defer s.childMu.Unlock()
	s.childRuntime = fn
}

// childTools is the tool runtime a new child runs its calls on.
func (s *Session) childTools() *tools.Runtime {
	s.childMu.Lock()
	fn := s.childRuntime
	s.childMu.Unlock()
	if fn != nil {
		return fn()
	}
	return s.Runtime()
}

// onChild tells the transcript and the observers of a new child (subagent.Config.OnChild).
func (s *Session) onChild(agentID string, lineage dsh.Lineage, log *session.Log) func() {
	s.childMu.Lock()
	observers := append([]ChildObserver{s.childTranscript}, s.childObservers...)
	s.childMu.Unlock()
	var dones []func()
	for _, o := range observers {
		if done := o(agentID, lineage, log); done != nil {
			dones = append(dones, done)
		}
	}
	return func() {
		for _, d := range dones {
			d()
		}
	}
}

// childTranscriptPath is where the dialect keeps the transcript of child agentID ("":
// no hooks, or the dialect keeps none).
func (s *Session) childTranscriptPath(agentID string) string {
	desc := s.cfg.Hooks.desc()
	if s.transcript == "" || desc == nil || desc.SubagentTranscript == nil {
		return ""
	}
	return desc.SubagentTranscript(s.transcript, agentID)
}

// childTranscript writes the transcript of child agentID from its log, where the dialect
// keeps it (nothing when childTranscriptPath is ""); the returned func stops it.
func (s *Session) childTranscript(agentID string, _ dsh.Lineage, log *session.Log) func() {
	if s.childTranscriptPath(agentID) == "" {
		return nil
	}
	tw, err := s.cfg.Hooks.desc().NewSubagentTranscript(s.transcript, s.hookSession, agentID, s.cfg.Workspace)
	if err != nil {
		s.logger.Warn("subagent transcript", "agentId", agentID, "error", err)
		return nil
	}
	cancel := log.Subscribe(func(e session.Event) {
		if data, err := e.Decode(); err == nil {
			if err := tw.Observe(data); err != nil {
				s.logger.Warn("subagent transcript", "agentId", agentID, "error", err)
			}
		}
	})
	return func() { cancel(); _ = tw.Close() }
}

// notice words the message that wakes the parent when a child in the background ends, in
// the words of shape's Background (nil: subagent's own).
func notice(shape builtin.AgentShape) func(c *subagent.Child, res subagent.Result) []dsh.ContentBlock {
	bg := shape.Background
	if bg == nil {
		return nil
	}
	return func(c *subagent.Child, res subagent.Result) []dsh.ContentBlock {
		result := res.Answer
		if res.Outcome != dsh.SubagentOutcomeCompleted && res.Err != nil {
			result = res.Err.Error()
		}
		r := strings.NewReplacer("{agentId}", c.ID, "{callId}", c.CallID, "{outputFile}", c.OutputFile,
			"{status}", string(res.Outcome), "{description}", c.Description, "{result}", result,
			"{tokens}", strconv.Itoa(res.Tokens), "{toolUses}", strconv.Itoa(res.ToolUses),
			"{durationMs}", strconv.FormatInt(res.Duration.Milliseconds(), 10))
		var out []dsh.ContentBlock
		if len(res.ToolsUsed) > 0 && bg.NoticeToolsUsed != "" {
			out = append(out, dsh.TextBlock{Text: strings.ReplaceAll(bg.NoticeToolsUsed, "{tools}", strings.Join(res.ToolsUsed, ", "))})
		}
		for _, n := range bg.Notice {
			out = append(out, dsh.TextBlock{Text: r.Replace(n)})
		}
		return out
	}
}

// newID makes a child's agent id in the shape the row names (nil: the Runner's own).
func newID(shape string) func() string {
	if shape == "uuid" {
		return subagent.NewUUID
	}
	return nil
}

// completion is the answer tool shape's engine's child ends by (nil: none).
func completion(shape builtin.AgentShape) *subagent.Completion {
	c := shape.Completion
	if c == nil {
		return nil
	}
	return &subagent.Completion{Tool: tools.Definition{Name: c.Tool.Name, Description: c.Tool.Description, InputSchema: c.Tool.InputSchema},
		Field: c.Field, Text: c.Text, Nudge: c.Nudge, Nudges: c.Nudges, Goal: c.Goal, Missing: c.Missing, MissingAnswer: c.MissingAnswer}
}

// toolKinds is how shape's engine counts a child's calls (nil: it does not).
func toolKinds(shape builtin.AgentShape) map[string]subagent.ToolKind {
	if shape.ToolStats == nil {
		return nil
	}
	out := make(map[string]subagent.ToolKind, len(shape.ToolStats))
	for name, k := range shape.ToolStats {
		out[name] = subagent.ToolKind{Kind: k.Kind, Added: k.Added, Removed: k.Removed}
	}
	return out
}

// toolNames are the names of the dialect's built-in tools (its toolset's rows).
func (s *Session) toolNames() map[string]bool {
	names := map[string]bool{}
	all, err := builtin.Toolsets()
	if err != nil {
		return names
	}
	for _, ts := range all {
		if ts.Style == s.Builtin.Style {
			for _, r := range ts.Tools {
				names[r.Name] = true
			}
		}
	}
	return names
}

// refusal words a refused call's error as shape's engine does: an unknown type, a type
// whose tools name no tool.
func refusal(shape builtin.AgentShape) func(error) string {
	return func(err error) string {
		var unknown *subagent.UnknownTypeError
		var none *subagent.NoToolsError
		switch {
		case errors.As(err, &unknown) && shape.UnknownType != "":
			types := slices.Clone(unknown.Types)
			slices.SortFunc(types, func(a, b string) int {
				return cmp.Or(strings.Compare(strings.ToLower(a), strings.ToLower(b)), strings.Compare(a, b))
			})
			return strings.NewReplacer("{type}", unknown.Type, "{types}", strings.Join(types, ", ")).Replace(shape.UnknownType)
		case errors.As(err, &none) && shape.NoTools != "":
			return strings.NewReplacer("{type}", none.Type, "{unrecognized}", strings.Join(none.Unrecognized, ", ")).Replace(shape.NoTools)
		}
		return err.Error()
	}
}

// resultText renders a completed child's value (subagent.Value) in the words of shape's
// Result.
func resultText(shape builtin.AgentShape, byType map[string]string) func(args, value json.RawMessage) ([]dsh.ContentBlock, error) {
	return func(args, value json.RawMessage) ([]dsh.ContentBlock, error) {
		v, err := subagent.DecodeValue(value)
		if err != nil {
			return nil, err
		}
		if v.Async && shape.Background != nil {
			text := strings.NewReplacer("{agentId}", v.AgentID, "{outputFile}", v.OutputFile).Replace(shape.Background.Launch)
			return []dsh.ContentBlock{dsh.TextBlock{Text: text}}, nil
		}
		used := ""
		if len(v.ToolsUsed) > 0 {
			used = strings.ReplaceAll(shape.ToolsUsed, "{tools}", strings.Join(v.ToolsUsed, ", "))
		}
		if v.TurnLimit > 0 && shape.TurnLimit != nil {
			used += strings.ReplaceAll(shape.TurnLimit.Result, "{turns}", strconv.Itoa(v.TurnLimit))
		}
		lines := strings.Split(v.Answer, "\n")
		for i, l := range lines {
			lines[i] = shape.Indent + l
		}
		text := strings.NewReplacer("{toolsUsed}", used, "{answer}", strings.Join(lines, "\n"), "{agentId}", v.AgentID,
			"{type}", v.Type, "{reason}", v.Reason,
			"{tokens}", strconv.Itoa(v.Tokens), "{toolUses}", strconv.Itoa(v.ToolUses),
			"{durationMs}", strconv.FormatInt(v.DurationMS, 10)).Replace(cmp.Or(byType[v.Type], shape.Result))
		return []dsh.ContentBlock{dsh.TextBlock{Text: text}}, nil
	}
}

// CodexAgentType is the agent type of a child Codex's spawn_agent starts without a role
// (its hooks' agent_type; measured in 0.169.0: codex/subagent-spawn).
const CodexAgentType = "default"

// codexAgents builds the session's subagent runner and Codex's multi_agent_v1 functions
// when the dialect's toolset has them (none otherwise): a child runs in the background on
// the parent's system prompt and tools, less the agent functions (Codex offers a child none:
// depth 1), and its end reaches the parent's next step as Codex's notification.
func (s *Session) codexAgents() (map[string]tools.Definition, error) {
	rows, err := builtin.AgentRows(s.Builtin.Style)
	if err != nil || len(rows) == 0 {
		return nil, err
	}
	cfg := s.cfg.Subagents
	logs := cfg.Logs
	if logs == nil {
		logs = &subagent.MemoryLogs{}
	}
	names := make([]string, len(rows))
	var nicknames []string
	interrupted := ""
	for i, r := range rows {
		names[i] = r.Name
		nicknames = append(nicknames, r.Nicknames...)
		interrupted = cmp.Or(interrupted, r.Interrupted)
	}
	// A child's requests carry Codex's sub-agent headers (measured in 0.169.0:
	// x-openai-subagent "collab_spawn" and the parent's thread id).
	childLLM := s.LLM
	childLLM.Extra = maps.Clone(s.LLM.Extra)
	if childLLM.Extra == nil {
		childLLM.Extra = map[string]json.RawMessage{}
	}
	parent, _ := json.Marshal(s.cfg.SessionID)
	childLLM.Extra[provider.HeaderExtraPrefix+"x-openai-subagent"] = json.RawMessage(`"collab_spawn"`)
	childLLM.Extra[provider.HeaderExtraPrefix+"x-codex-parent-thread-id"] = parent
	// The agent roles: the engine's own (its spawn_agent row's), then the configuration's
	// (Codex's [agents.NAME]), which replace one of the same name and which the schema
	// lists. A role's child runs on the parent's system prompt followed by the role's
	// instructions (its developer_instructions, in Definition.System).
	general := s.cfg.Prompts.system(s.cfg.Workspace)
	roles, err := builtin.RolesOf(s.Builtin.Style)
	if err != nil {
		return nil, err
	}
	var defs []subagent.Definition
	unknown := ""
	if roles != nil {
		unknown = roles.Unknown
		for _, b := range roles.Builtin {
			if b.Name != CodexAgentType && !slices.ContainsFunc(cfg.Definitions, func(d subagent.Definition) bool { return d.Name == b.Name }) {
				defs = append(defs, subagent.Definition{Name: b.Name, Description: b.Description, System: general})
			}
		}
	}
	s.Builtin.AgentRoles = nil
	for _, d := range cfg.Definitions {
		s.Builtin.AgentRoles = append(s.Builtin.AgentRoles, builtin.AgentRole{Name: d.Name, Description: d.Description})
		switch {
		case d.System == "":
			d.System = general
		case general != "":
			d.System = strings.TrimRight(general, "\n") + "\n\n" + d.System
		}
		defs = append(defs, d)
	}
	r, err := subagent.New(subagent.Config{Registry: s.Hooks, Tools: s.childTools, Model: s.evalModel, LLM: childLLM,
		Logs: logs, ParentLog: s.cfg.Log, ParentSessionID: s.cfg.SessionID, Workspace: s.cfg.Workspace,
		Definitions: defs, GeneralSystem: general, ToolNames: names,
		DefaultType: CodexAgentType, NewID: subagent.NewCodexID,
		MaxDepth: cmp.Or(cfg.MaxDepth, 1), MaxRunning: cfg.MaxRunning,
		ContinuationCap: s.continuationCap(), Logger: s.logger})
	if err != nil {
		return nil, err
	}
	s.closers = append(s.closers, r.Close)
	return r.CodexTools(subagent.CodexOptions{Nicknames: nicknames, UnknownType: unknown, Interrupted: interrupted, Notify: func(ctx context.Context, callID, text string) error {
		agent := s.Turns.Agent()
		if agent == nil {
			return errors.New("no parent agent to notify")
		}
		// It reaches the parent's next step, without starting a turn.
		return agent.Inject(ctx, dsh.UserText(dsh.SourceTool{CallID: callID}, text))
	}}), nil
}
