package runner

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/dshkit/dsh/generated/dsh"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/dshkit/dsh/bridges/mcp"
	"github.com/dshkit/dsh/runtime/tools"
	"github.com/dshkit/dsh/runtime/tools/builtin"
)

// MCPServers returns the MCP servers of a session: those of configFile (an unreadable
// file is an error; a malformed server is a warning and the others still load), then the
// project's .mcp.json, which loads only with trust (as Claude Code asks before it starts
// a project's servers); a server of the project file replaces one of the same name.
func MCPServers(configFile, projectDir string, trust bool, logger *slog.Logger) ([]mcp.ServerConfig, error) {
	var out []mcp.ServerConfig
	if configFile != "" {
		if _, err := os.Stat(configFile); err != nil {
			return nil, fmt.Errorf("--mcp-config: %w", err)
		}
		servers, errs := mcp.LoadFile(configFile, nil)
		for _, e := range errs {
			logger.Warn("mcp config", "problem", e.Error())
		}
		out = append(out, servers...)
	}
	project := filepath.Join(projectDir, ".mcp.json")
	if _, err := os.Stat(project); errors.Is(err, fs.ErrNotExist) || projectDir == "" {
		return out, nil
	}
	if !trust {
		logger.Warn("mcp config", "problem", project+": project MCP servers not started: the project is not trusted (pass --trust)")
		return out, nil
	}
	servers, errs := mcp.LoadFile(project, nil)
	for _, e := range errs {
		logger.Warn("mcp config", "problem", e.Error())
	}
	names := map[string]bool{}
	for _, s := range servers {
		names[s.Name] = true
	}
	kept := out[:0]
	for _, s := range out {
		if !names[s.Name] {
			kept = append(kept, s)
		}
	}
	return append(kept, servers...), nil
}

// mcp lists the session's MCP servers and, with MCP.Mount, starts them (a server that
// fails to start is a notice); registerMCP registers their tools; Close stops them.
func (s *Session) mcp(ctx context.Context) error {
	servers, err := MCPServers(s.cfg.MCP.ConfigFile, s.cfg.Hooks.project(s.cfg.Workspace), s.cfg.Hooks.Trust, s.logger)
	if err != nil || len(servers) == 0 {
		return err
	}
	if !s.cfg.MCP.Mount {
		s.MCPServers = servers
		return nil
	}
	o := mcp.Options{Dir: s.cfg.Workspace, Logger: s.logger, Env: s.cfg.Env}
	if d := s.cfg.Hooks.desc(); d != nil && d.Table != nil {
		o.NameFormat = d.Table.MCPToolName // the engine's name of an MCP tool
	}
	// The properties the engine adds to the tools' schemas, and how their texts read.
	shape, err := builtin.MCPShapeOf(s.Builtin.Style)
	if err != nil {
		return err
	}
	if shape != nil {
		o.Properties = shape.Properties
		if shape.Text != "" {
			o.WrapText = shape.Wrap
		}
		o.Namespace, o.NamespaceDescription, o.Header = shape.Namespace, shape.NamespaceDescription, shape.Header
	}
	if builtin.DefersMCP(s.Builtin) {
		o.Loading = tools.LoadDeferred
	}
	set, errs := mcp.Start(ctx, servers, o)
	for _, e := range errs {
		s.note(e.Error())
	}
	s.mcpSet = set
	s.closers = append(s.closers, func() { set.Close() })
	return nil
}

// registerMCP registers the started MCP servers' tools (after the built-in tools, which
// the servers' resource tools are among); a tool that does not register is a notice.
func (s *Session) registerMCP() {
	if s.mcpSet == nil {
		return
	}
	unregister, errs := s.mcpSet.Register(s.Tools, "")
	for _, e := range errs {
		s.note(e.Error())
	}
	s.closers = append(s.closers, unregister)
}

// searchReminder is the message that tells the model text as the tool search's other
// reminders do: a <system-reminder> of the hook bridge's plugin.
func (s *Session) searchReminder(text string) dsh.ModelMessage {
	return dsh.ModelMessage{Role: dsh.ModelRoleUser, Content: []dsh.ContentBlock{dsh.TextBlock{Text: "<system-reminder>\n" + text + "\n</system-reminder>"}},
		Source: dsh.SourcePlugin{Plugin: s.cfg.Hooks.desc().Table.Plugin}}
}

// sessionReminders are the reminders that the dialect's engine tells the model of a new
// session of o (builtin.SessionReminders: the environment, the model, and the names of the
// tools reg offers behind the tool search, the built-in tools' and the MCP servers'), one
// <system-reminder> text block each; nil when there are none.
func (s *Session) sessionReminders(o builtin.Options, reg *tools.Registry) []dsh.ContentBlock {
	var names []string
	for _, d := range reg.Visible("") {
		if d.Loading == tools.LoadDeferred {
			names = append(names, d.Name)
		}
	}
	var out []dsh.ContentBlock
	for _, t := range builtin.SessionReminders(o, builtin.HostOf(o), names) {
		out = append(out, dsh.TextBlock{Text: "<system-reminder>\n" + t + "\n</system-reminder>"})
	}
	return out
}

// remindSession tells the model, when a new session starts, the session reminders
// (sessionReminders), as the engine does in its first request.
func (s *Session) remindSession() {
	blocks := s.sessionReminders(s.Builtin, s.Tools)
	if len(blocks) == 0 {
		return
	}
	plugin := s.cfg.Hooks.desc().Table.Plugin
	s.Hooks.Plugin("tool-search").OnSessionStart(func(ctx context.Context, sp *dsh.SessionStartPayload) error {
		if sp.Source != dsh.SessionStartSourceStartup || sp.Agent == nil {
			return nil
		}
		return sp.Agent.Inject(ctx, dsh.UserMessage{ID: fmt.Sprintf("tool-search-%d", time.Now().UnixNano()),
			Role: dsh.UserMessageRoleUser, Content: blocks,
			Source: dsh.SourcePlugin{Plugin: plugin, Form: dsh.PluginFormCatalog}})
	})
}
