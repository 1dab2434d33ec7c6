package dshrt

import (
	"cmp"
	"fmt"

	sc "github.com/dshkit/dsh/generated/conformance"
	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/session"
	"github.com/dshkit/dsh/runtime/subagent"
)

// AttachSubagents keeps the scenario's agent tool: each agent created (or resumed)
// afterwards gets a subagent.Runner over its log and the tool, registered for it alone.
func (r *Runtime) AttachSubagents(s sc.Subagents) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.subagents = &s
	return nil
}

// attachAgentTool registers the agent tool of the agent id over its log, replacing the
// one an earlier incarnation of the agent had (Resume); nothing without AttachSubagents.
func (r *Runtime) attachAgentTool(id string, log *session.Log) error {
	r.mu.Lock()
	s := r.subagents
	if old := r.agentTools[id]; old != nil {
		old()
		delete(r.agentTools, id)
	}
	r.mu.Unlock()
	if s == nil {
		return nil
	}
	cfg := subagent.Config{Registry: r.hooks, Tools: r.tools, Model: r.model,
		LLM:  dsh.LLMCallConfig{Provider: "scripted", Model: "scripted"},
		Logs: &subagent.MemoryLogs{}, ParentLog: log, ParentSessionID: id,
		GeneralSystem: s.System, ToolName: s.Tool, ContinuationCap: r.opts.ContinuationCap}
	if s.MaxDepth != nil {
		cfg.MaxDepth = *s.MaxDepth
	}
	if s.MaxRunning != nil {
		cfg.MaxRunning = *s.MaxRunning
	}
	runner, err := subagent.New(cfg)
	if err != nil {
		return fmt.Errorf("dshrt: subagents of %q: %w", id, err)
	}
	def := runner.Definition(subagent.ClaudeCode)
	def.Name = cmp.Or(s.Tool, "Agent")
	unregister, err := r.reg.RegisterForAgent(id, def)
	if err != nil {
		runner.Close()
		return fmt.Errorf("dshrt: the agent tool of %q: %w", id, err)
	}
	r.mu.Lock()
	r.agentTools[id] = func() { unregister(); runner.Close() }
	r.closers = append(r.closers, func() { unregister(); runner.Close() })
	r.mu.Unlock()
	return nil
}
