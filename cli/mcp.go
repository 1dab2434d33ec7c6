package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/dshkit/dsh/bridges/mcp"
	"github.com/dshkit/dsh/runtime/tools"
)

// mcpServers returns the MCP servers of a session: those of --mcp-config (an unreadable
// file is a usage error; a malformed server is a warning and the others still load),
// then the project's .mcp.json, which loads only with --trust (as Claude Code asks
// before it starts a project's servers); a server of the project file replaces one of
// the same name.
func mcpServers(configFile, projectDir string, trust bool, logger *slog.Logger) ([]mcp.ServerConfig, error) {
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

// mountMCP starts the servers of dsh run's --mcp-config and project .mcp.json and
// registers their tools; the returned func stops them.
func mountMCP(ctx context.Context, o runOptions, workspace string, reg *tools.Registry, logger *slog.Logger, stderr io.Writer) (func(), error) {
	projectDir := o.projectDir
	if projectDir == "" {
		projectDir = workspace
	}
	servers, err := mcpServers(o.mcpConfig, projectDir, o.trust, logger)
	if err != nil || len(servers) == 0 {
		return func() {}, err
	}
	set, errs := mcp.Start(ctx, servers, mcp.Options{Dir: workspace, Logger: logger, Env: o.envDeny.childEnv()})
	for _, e := range errs {
		fmt.Fprintf(stderr, "dsh run: %v\n", e)
	}
	unregister, rerrs := set.Register(reg, "")
	for _, e := range rerrs {
		fmt.Fprintf(stderr, "dsh run: %v\n", e)
	}
	return func() { unregister(); set.Close() }, nil
}
