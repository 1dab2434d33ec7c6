package differential

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// MCPServerEnv names the hook log an MCP hook server records into; a process started
// with it set serves MCP on stdio (ServeMCPHooks) instead of running the tests.
const MCPServerEnv = "DSH_DIFFERENTIAL_MCP_LOG"

// MCPResourcesEnv, set to "1" beside MCPServerEnv, makes the MCP hook server offer
// resources too (MCPResources): an engine offers its resource tools for a server that has
// them (Claude Code), so the other cases' servers have none.
const MCPResourcesEnv = "DSH_DIFFERENTIAL_MCP_RESOURCES"

// MCPServerName is the name the runs give the MCP hook server in their MCP
// configurations (Claude Code's --mcp-config, Codex's [mcp_servers], dsh's --mcp-config).
const MCPServerName = "hk"

// MCPAnswer makes a Hook an mcp_tool handler (Hook.MCP) that calls the run's MCP hook
// server: its tool "hook" records the call as a run of the hook (its arguments as the
// stdin) and answers as the handler's input says.
type MCPAnswer struct {
	// Tool is the tool called ("" is "hook"); "absent" names a tool the server does not
	// have.
	Tool string
	// Server is the server named ("" is MCPServerName): another name is a server that is
	// not mounted.
	Server string
	// Answer is the tool's text answer, read as a command's stdout.
	Answer string
	// Error makes the tool answer with isError and Answer as its text.
	Error bool
	// Sleep is how long the tool waits before it answers.
	Sleep time.Duration
	// Input are further arguments of the handler's input, where ${path} reads the hook's
	// input (e.g. "${tool_input.command}").
	Input map[string]any
	// OnFailure is the handler's onFailure ("" leaves it out).
	OnFailure string
}

// MCPHandler is the mcp_tool handler of hook name: the server's tool "hook", told (in
// its input) which hook it is and how to answer.
func MCPHandler(name string, hk Hook) map[string]any {
	a := hk.MCP
	input := map[string]any{"name": name, "answer": a.Answer}
	if a.Error {
		input["error"] = true
	}
	if a.Sleep > 0 {
		input["sleep_ms"] = a.Sleep.Milliseconds()
	}
	for k, v := range a.Input {
		input[k] = v
	}
	server, tool := a.Server, a.Tool
	if server == "" {
		server = MCPServerName
	}
	if tool == "" {
		tool = "hook"
	}
	h := map[string]any{"type": "mcp_tool", "server": server, "tool": tool, "input": input}
	if hk.Timeout > 0 {
		h["timeout"] = hk.Timeout
	}
	if a.OnFailure != "" {
		h["onFailure"] = a.OnFailure
	}
	return h
}

// MCPConfig is the .mcp.json shape (Claude Code's --mcp-config, dsh's) of the run's MCP
// hook server: this test binary, started with MCPServerEnv naming the hook log.
// With resources the server offers MCPResources.
func MCPConfig(exe, hooklog string, resources bool) []byte {
	data, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		MCPServerName: map[string]any{"type": "stdio", "command": exe, "args": []string{}, "env": mcpEnv(hooklog, resources)},
	}})
	return data
}

// mcpEnv is the MCP hook server's environment.
func mcpEnv(hooklog string, resources bool) map[string]string {
	env := map[string]string{MCPServerEnv: hooklog}
	if resources {
		env[MCPResourcesEnv] = "1"
	}
	return env
}

// CodexMCPConfig is the config.toml table of the run's MCP hook server.
func CodexMCPConfig(exe, hooklog string, resources bool) string {
	out := "[mcp_servers." + MCPServerName + "]\ncommand = " + strconv.Quote(exe) + "\nargs = []\n" +
		"[mcp_servers." + MCPServerName + ".env]\n" + MCPServerEnv + " = " + strconv.Quote(hooklog) + "\n"
	if resources {
		out += MCPResourcesEnv + " = \"1\"\n"
	}
	return out
}

// ServeMCPHooks serves the MCP hook server on stdin and stdout until the client goes,
// recording each call of its tool "hook" under the hook log logDir as a run of the hook
// its input names (the arguments as the stdin, "0" as the exit once it answered).
// With resources it offers MCPResources as well.
func ServeMCPHooks(ctx context.Context, logDir string, resources bool) error {
	s := sdk.NewServer(&sdk.Implementation{Name: "dsh-differential-hooks", Version: "1"}, nil)
	if resources {
		addMCPResources(s)
	}
	s.AddTool(&sdk.Tool{Name: "hook", Description: "records a hook call and answers as told",
		InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			start := time.Now().UnixNano()
			var args map[string]any
			_ = json.Unmarshal(req.Params.Arguments, &args)
			name, _ := args["name"].(string)
			d, err := os.MkdirTemp(logDir, "run.")
			if err != nil {
				return nil, err
			}
			write := func(file, text string) { _ = os.WriteFile(filepath.Join(d, file), []byte(text), 0o644) }
			raw, _ := json.Marshal(args) // sorted keys: what the tool got, whatever order it came in
			write("start", strconv.FormatInt(start, 10)+"\n")
			write("stdin", string(raw))
			write("name", name+"\n")
			if ms, ok := args["sleep_ms"].(float64); ok && ms > 0 {
				t := time.NewTimer(time.Duration(ms) * time.Millisecond)
				select {
				case <-t.C:
				case <-ctx.Done():
					t.Stop()
					return nil, ctx.Err() // the client gave up: no exit
				}
			}
			answer, _ := args["answer"].(string)
			isErr, _ := args["error"].(bool)
			write("exit", "0\n")
			return &sdk.CallToolResult{IsError: isErr, Content: []sdk.Content{&sdk.TextContent{Text: answer}}}, nil
		})
	return s.Run(ctx, &sdk.StdioTransport{})
}

// GeminiMCPServers is the settings.json mcpServers block (Gemini CLI's) of the run's MCP
// hook server.
func GeminiMCPServers(exe, hooklog string, resources bool) map[string]any {
	return map[string]any{MCPServerName: map[string]any{"command": exe, "args": []string{}, "env": mcpEnv(hooklog, resources)}}
}

// The resources the MCP hook server offers under MCPResourcesEnv: two texts, one of them
// with a MIME type and a description, and a template.
const (
	MCPResourceNote  = "hk://notes/one"
	MCPResourceOther = "hk://notes/two"
	MCPResourceTmpl  = "hk://notes/{name}"
)

// addMCPResources adds the server's resources and its template to s; reading a URI of
// the template that is neither resource fails with the SDK's "not found".
func addMCPResources(s *sdk.Server) {
	text := func(uri, body, mime string) sdk.ResourceHandler {
		return func(_ context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: uri, MIMEType: mime, Text: body}}}, nil
		}
	}
	s.AddResource(&sdk.Resource{URI: MCPResourceNote, Name: "note-one", Title: "Note one", Description: "the first note", MIMEType: "text/plain"},
		text(MCPResourceNote, "first note body", "text/plain"))
	s.AddResource(&sdk.Resource{URI: MCPResourceOther, Name: "note-two"}, text(MCPResourceOther, "second note body", ""))
	s.AddResourceTemplate(&sdk.ResourceTemplate{URITemplate: MCPResourceTmpl, Name: "note", Description: "a note by name", MIMEType: "text/plain"},
		func(_ context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			return nil, sdk.ResourceNotFoundError(req.Params.URI)
		})
}
