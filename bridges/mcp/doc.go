// Package mcp mounts MCP (Model Context Protocol) servers in a dsh session, on the official
// Go SDK (github.com/modelcontextprotocol/go-sdk).
//
// [LoadFile] and [Parse] read Claude Code's .mcp.json shape ({"mcpServers": {NAME:
// {command, args, env} | {type: "http"|"sse", url, headers}}}), expanding ${VAR} and
// ${VAR:-default}; a malformed server is a [ConfigError] naming the file and the field,
// and the others still load. [Start] starts a session's servers together, at session
// start (the model needs their tools for its first request), each bounded by
// Options.StartTimeout; a server that does not start is reported and mounts nothing.
//
// Every tool of a started server becomes a dsh tool named mcp__<server>__<tool>
// ([ToolName], as Claude Code names them, so hook matchers such as mcp__github__.* work)
// with the server's input schema. Names fit the model APIs' ^[a-zA-Z0-9_-]{1,64}$: other
// characters become _, and a name over 64 characters is cut and ends in a short hash of
// the full names. Two servers whose names sanitise alike, or two tools named alike, are
// an error at mount naming both (the later one is not mounted); nothing is dropped
// silently. A stdio server's stdout lines that are not JSON-RPC (a banner, a stray log
// line) are logged and skipped, as the MCP TypeScript SDK does, instead of ending the
// connection. A tool's readOnlyHint counts ([Set.ReadOnly]) only for a server named in
// Options.TrustedServers. A call's value is a [Value] (the MCP content blocks and the
// structured result), capped at Options.MaxResultBytes (default 100,000 bytes, about
// Claude Code's 25,000-token cap on MCP output) with a truncation note; the model sees
// the content mapped to dsh blocks (text, images, and a text description of audio, links
// and resources). A result the server marks
// isError, a crashed server, a garbled connection or a call past Options.CallTimeout is a
// normalized tool failure (codes MCP_TOOL_ERROR, MCP_SERVER_ERROR, MCP_TIMEOUT,
// MCP_SERVER_UNAVAILABLE); the session goes on.
//
// What a server sends is bounded while it is read: one message (a stdio line, an HTTP
// body, one server-sent event) at Options.MaxMessageBytes (16 MiB; past it the call fails
// with MCP_RESULT_TOO_LARGE and the connection is closed), and the tool listing at
// Options.MaxToolPages pages and Options.MaxToolListBytes bytes (past either the server
// is not mounted). An HTTP or SSE server's configured headers go to the origin of its URL
// only, and a redirect to another origin is refused ([RedirectError]).
//
// [Set.Close] stops every server: a stdio server's stdin is closed, SIGTERM follows after
// Options.StopGrace, then SIGKILL, and finally its whole process group (servers run in
// their own) is killed, so that npx wrappers and their children do not outlive the
// session.
package mcp
