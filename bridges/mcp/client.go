package mcp

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/internal/procgroup"
	"github.com/dshkit/dsh/runtime/llm"
	"github.com/dshkit/dsh/runtime/tools"
)

// Defaults of the Options fields.
const (
	// DefaultStartTimeout bounds a server's start: spawn (or connect), initialize and the
	// tool listing.
	DefaultStartTimeout = 30 * time.Second
	// DefaultCallTimeout bounds one tool call.
	DefaultCallTimeout = 10 * time.Minute
	// DefaultStopGrace is how long a stdio server gets to exit once its stdin is closed,
	// and then once it got SIGTERM, before its process group is killed.
	DefaultStopGrace = 2 * time.Second
	// DefaultMaxResultBytes caps what a tool result keeps (its content and structured
	// value, in bytes of JSON): about Claude Code's 25,000-token cap on MCP output, at four
	// bytes a token.
	DefaultMaxResultBytes = 100_000
	// DefaultMaxMessageBytes caps one message a server sends (a stdio line, an HTTP body,
	// one server-sent event), as the SDK caps a stdio line: a tool result over it fails
	// the call (CodeResultTooLarge) after that many bytes are read, and the server's
	// connection is closed.
	DefaultMaxMessageBytes = 16 << 20
	// DefaultMaxToolPages caps the pages of a server's tools/list.
	DefaultMaxToolPages = 100
	// DefaultMaxToolListBytes caps the tools of a server, in bytes of their JSON.
	DefaultMaxToolListBytes = 16 << 20
	// MaxToolName is the longest tool name the model APIs accept (names match
	// ^[a-zA-Z0-9_-]{1,64}$).
	MaxToolName = 64
)

// Failure codes of MCP tool calls (the info.code of a failed result).
const (
	// CodeToolError is a result the server marked isError.
	CodeToolError = "MCP_TOOL_ERROR"
	// CodeServerError is a server that failed: crashed, closed the connection, answered
	// garbage or an error.
	CodeServerError = "MCP_SERVER_ERROR"
	// CodeTimeout is a call that ran past Options.CallTimeout.
	CodeTimeout = "MCP_TIMEOUT"
	// CodeUnavailable is a call to a server that did not start.
	CodeUnavailable = "MCP_SERVER_UNAVAILABLE"
	// CodeResultTooLarge is a call whose answer crossed Options.MaxMessageBytes.
	CodeResultTooLarge = "MCP_RESULT_TOO_LARGE"
)

// Options configures Start.
type Options struct {
	// Dir is the working directory of stdio servers (the session's workspace).
	Dir string
	// Env is the base environment of stdio servers (default os.Environ()).
	Env []string
	// StartTimeout, CallTimeout and StopGrace default to the Default* constants.
	StartTimeout time.Duration
	CallTimeout  time.Duration
	StopGrace    time.Duration
	// Logger receives start failures and server diagnostics (default: discard).
	Logger *slog.Logger
	// ClientVersion is reported to servers as the client's version (default "dev").
	ClientVersion string
	// TrustedServers names the servers whose tool annotations are trusted: only their
	// tools' readOnlyHint counts for [Set.ReadOnly]. The MCP specification has clients
	// treat annotations from untrusted servers as untrusted, and a server can claim
	// anything.
	TrustedServers []string
	// MaxResultBytes caps a tool result (default DefaultMaxResultBytes; negative: no cap):
	// text past it is cut, other blocks past it are replaced by a note, and a note says
	// what was cut.
	MaxResultBytes int
	// MaxMessageBytes caps one message a server sends, while it is read (default
	// DefaultMaxMessageBytes; negative: no cap).
	MaxMessageBytes int
	// MaxToolPages and MaxToolListBytes bound a server's tool listing, in pages and in
	// bytes of the tools' JSON (defaults DefaultMaxToolPages, DefaultMaxToolListBytes): a
	// server past either is not mounted.
	MaxToolPages     int
	MaxToolListBytes int
	// NameFormat is the name a tool is mounted under: {server} and {tool} stand for the
	// sanitized names (every character outside [A-Za-z0-9_-] replaced by _); empty:
	// "mcp__{server}__{tool}" (ToolName). A name longer than MaxToolName is cut as
	// ToolName cuts it.
	NameFormat string
	// Loading is how the model's requests declare the servers' tools (the zero value: in
	// full; tools.LoadDeferred: behind a tool search, as Claude Code offers them).
	Loading tools.Loading
	// Properties, if set, is a JSON object of property schemas added to every tool's
	// input schema that is an object schema, after the server's own (Gemini CLI's
	// wait_for_previous); a tool without an input schema gets none.
	Properties json.RawMessage
	// WrapText, if set, is how each text block of a result reads for the model: the
	// server's text in, the model's out (Gemini CLI's <untrusted_context>).
	WrapText func(string) string
	// Namespace, if set, offers each server's tools in a namespace of their own
	// (llm.NamespaceKey), {server} standing for the sanitized server name (Codex's
	// "mcp__{server}"): the model calls a tool by its sanitized name there, while its dsh
	// name (NameFormat's) stays what hooks and policies see. NamespaceDescription is the
	// namespace's description, {namespace} standing for its name.
	Namespace            string
	NamespaceDescription string
	// Header, if set, is a text block before the content of a result the model reads,
	// and before the message of a result the server marked isError, {seconds} standing
	// for the call's wall time in seconds (Codex's "Wall time: {seconds} seconds\nOutput:").
	Header string
}

func (o Options) withDefaults() Options {
	if o.Env == nil {
		o.Env = os.Environ()
	}
	if o.StartTimeout <= 0 {
		o.StartTimeout = DefaultStartTimeout
	}
	if o.CallTimeout <= 0 {
		o.CallTimeout = DefaultCallTimeout
	}
	if o.StopGrace <= 0 {
		o.StopGrace = DefaultStopGrace
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.ClientVersion == "" {
		o.ClientVersion = "dev"
	}
	if o.MaxResultBytes == 0 {
		o.MaxResultBytes = DefaultMaxResultBytes
	}
	if o.MaxMessageBytes == 0 {
		o.MaxMessageBytes = DefaultMaxMessageBytes
	}
	if o.MaxToolPages <= 0 {
		o.MaxToolPages = DefaultMaxToolPages
	}
	if o.MaxToolListBytes <= 0 {
		o.MaxToolListBytes = DefaultMaxToolListBytes
	}
	return o
}

// Set is the MCP servers of one session, started together. Its tools call the servers;
// Close stops them all.
type Set struct {
	o       Options
	servers []*server
	// mounted are the tools mounted, in configuration order; byName indexes them by
	// their dsh name.
	mounted []mountedTool
	byName  map[string]mountedTool
}

// mountedTool is one tool of a started server under its dsh name.
type mountedTool struct {
	name string
	srv  *server
	tool *sdk.Tool
}

// server is one mounted server.
type server struct {
	cfg   ServerConfig
	o     Options
	sess  *sdk.ClientSession
	group atomic.Pointer[procgroup.Group] // a stdio server's process group, once started
	tools []*sdk.Tool
	err   error // why it did not start
	// capped is Options.MaxMessageBytes once a message of the server crossed it.
	capped atomic.Int64

	closeOnce sync.Once
}

// ToolName is the dsh name of tool of server: mcp__<server>__<tool>, every character
// outside [A-Za-z0-9_-] replaced by _ (as Claude Code names MCP tools). A name longer
// than MaxToolName is cut to 55 characters followed by _ and the first 8 hex digits of
// the SHA-256 of the server and tool names (separated by a NUL byte), so that it is
// deterministic, fits the model APIs' ^[a-zA-Z0-9_-]{1,64}$, and two long names
// sharing a prefix stay apart.
func ToolName(server, tool string) string { return FormatToolName("", server, tool) }

// serverTools names all the tools of server under format, for a message.
func serverTools(format, server string) string {
	if format == "" {
		format = "mcp__{server}__{tool}"
	}
	return strings.NewReplacer("{server}", sanitize(server), "{tool}", "*").Replace(format)
}

// FormatToolName is the dsh name of tool of server under format ({server}, {tool}; empty:
// "mcp__{server}__{tool}"), the names sanitized and a long name cut as ToolName says.
func FormatToolName(format, server, tool string) string {
	if format == "" {
		format = "mcp__{server}__{tool}"
	}
	name := strings.NewReplacer("{server}", sanitize(server), "{tool}", sanitize(tool)).Replace(format)
	if len(name) <= MaxToolName {
		return name
	}
	sum := sha256.Sum256([]byte(server + "\x00" + tool))
	return name[:MaxToolName-9] + "_" + hex.EncodeToString(sum[:4])
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9_-]`)

func sanitize(s string) string { return unsafeName.ReplaceAllString(s, "_") }

// Start starts every server at once (session-start mounting, dsh decision: the model
// needs the tool list for its first request) and lists their tools, each bounded by
// Options.StartTimeout. A server that fails to start is reported in the returned errors,
// mounts no tools and does not stop the others. Close the Set to stop the servers.
func Start(ctx context.Context, servers []ServerConfig, o Options) (*Set, []error) {
	o = o.withDefaults()
	s := &Set{o: o}
	var wg sync.WaitGroup
	for _, cfg := range servers {
		srv := &server{cfg: cfg, o: o}
		s.servers = append(s.servers, srv)
		wg.Go(func() { srv.start(ctx) })
	}
	wg.Wait()
	var errs []error
	for _, srv := range s.servers {
		if srv.err != nil {
			errs = append(errs, srv.err)
			o.Logger.Warn("mcp: server not mounted", "server", srv.cfg.Name, "source", srv.cfg.Source, "error", srv.err)
		}
	}
	return s, append(errs, s.mount()...)
}

// mount names the tools of the started servers and returns an error for every
// collision, naming both sides; nothing is dropped silently. Two servers whose names
// sanitise alike (say "a b" and "a_b") would share the prefix mcp__a_b__ that hook
// matchers and the permission policy go by: the later one (in configuration order)
// mounts nothing. Two tools whose names come out alike (within a server, or across
// servers): the later one is not mounted.
func (s *Set) mount() []error {
	var errs []error
	s.byName = map[string]mountedTool{}
	prefixes := map[string]*server{}
	for _, srv := range s.servers {
		if srv.err != nil {
			continue
		}
		if first, dup := prefixes[sanitize(srv.cfg.Name)]; dup {
			errs = append(errs, fmt.Errorf("mcp: servers %q (%s) and %q (%s) both name their tools %s: rename one; %q mounts no tools",
				first.cfg.Name, first.cfg.Source, srv.cfg.Name, srv.cfg.Source, serverTools(s.o.NameFormat, srv.cfg.Name), srv.cfg.Name))
			continue
		}
		prefixes[sanitize(srv.cfg.Name)] = srv
		for _, tool := range srv.tools {
			m := mountedTool{name: FormatToolName(s.o.NameFormat, srv.cfg.Name, tool.Name), srv: srv, tool: tool}
			if first, dup := s.byName[m.name]; dup {
				errs = append(errs, fmt.Errorf("mcp: tool %q of server %q and tool %q of server %q are both named %s: %q is not mounted",
					first.tool.Name, first.srv.cfg.Name, tool.Name, srv.cfg.Name, m.name, tool.Name))
				continue
			}
			s.byName[m.name] = m
			s.mounted = append(s.mounted, m)
		}
	}
	for _, e := range errs {
		s.o.Logger.Warn("mcp: name collision", "error", e)
	}
	return errs
}

func (srv *server) start(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, srv.o.StartTimeout)
	defer cancel()
	fail := func(err error) {
		srv.err = fmt.Errorf("mcp server %q (%s): %w", srv.cfg.Name, srv.cfg.Source, err)
		srv.stop()
	}
	var t sdk.Transport
	switch srv.cfg.Type {
	case TypeStdio:
		cmd := exec.Command(srv.cfg.Command, srv.cfg.Args...)
		cmd.Dir = srv.o.Dir
		cmd.Env = append(append([]string(nil), srv.o.Env...), srv.cfg.Env...)
		cmd.Stderr = &logWriter{log: srv.o.Logger, server: srv.cfg.Name}
		cmd.WaitDelay = srv.o.StopGrace
		t = &stdioTransport{cmd: cmd, group: &srv.group, grace: srv.o.StopGrace, log: srv.o.Logger, server: srv.cfg.Name,
			max: srv.o.MaxMessageBytes, capped: &srv.capped}
	case TypeHTTP, TypeSSE:
		hc, err := srv.httpClient()
		if err != nil {
			fail(err)
			return
		}
		if srv.cfg.Type == TypeSSE {
			t = &sdk.SSEClientTransport{Endpoint: srv.cfg.URL, HTTPClient: hc, MaxEventSize: srv.o.MaxMessageBytes}
		} else {
			t = &sdk.StreamableClientTransport{Endpoint: srv.cfg.URL, HTTPClient: hc, MaxRetries: -1, MaxEventSize: srv.o.MaxMessageBytes}
		}
	default:
		fail(fmt.Errorf("unknown type %q", srv.cfg.Type))
		return
	}
	client := sdk.NewClient(&sdk.Implementation{Name: "dsh", Version: srv.o.ClientVersion},
		&sdk.ClientOptions{Logger: srv.o.Logger})
	type connected struct {
		sess *sdk.ClientSession
		err  error
	}
	ch := make(chan connected, 1)
	go func() {
		sess, err := client.Connect(ctx, t, nil)
		ch <- connected{sess, err}
	}()
	var c connected
	select {
	case c = <-ch:
	case <-ctx.Done():
		// A server that never answers initialize: kill it so that Connect returns.
		srv.killGroup()
		c = <-ch
		if c.err == nil {
			c.err = ctx.Err()
		}
	}
	if c.err != nil {
		if c.sess != nil {
			srv.sess = c.sess
		}
		fail(fmt.Errorf("start: %w", c.err))
		return
	}
	srv.sess = c.sess
	if err := srv.listTools(ctx); err != nil {
		fail(fmt.Errorf("list tools: %w", err))
	}
}

// listTools reads the server's tools page by page, within Options.MaxToolPages pages
// and Options.MaxToolListBytes bytes of tools, so that a server that pages without end
// fails its start instead of filling memory until the start timeout.
func (srv *server) listTools(ctx context.Context) error {
	params := &sdk.ListToolsParams{}
	size := 0
	for page := 1; ; page++ {
		if page > srv.o.MaxToolPages {
			return fmt.Errorf("the server is still paging after %d pages (%d tools): refused (Options.MaxToolPages)", srv.o.MaxToolPages, len(srv.tools))
		}
		res, err := srv.sess.ListTools(ctx, params)
		if err != nil {
			return err
		}
		for _, tool := range res.Tools {
			b, err := json.Marshal(tool)
			if err != nil {
				return fmt.Errorf("tool %q: %w", tool.Name, err)
			}
			if size += len(b); size > srv.o.MaxToolListBytes {
				return fmt.Errorf("the server's tools are over %d bytes (after %d tools, page %d): refused (Options.MaxToolListBytes)", srv.o.MaxToolListBytes, len(srv.tools), page)
			}
			srv.tools = append(srv.tools, tool)
		}
		if res.NextCursor == "" {
			return nil
		}
		params = &sdk.ListToolsParams{Cursor: res.NextCursor}
	}
}

// Servers returns the names of the servers that started, in configuration order.
func (s *Set) Servers() []string {
	var out []string
	for _, srv := range s.servers {
		if srv.err == nil {
			out = append(out, srv.cfg.Name)
		}
	}
	return out
}

// Definitions returns the dsh tool definitions of every tool of every started server.
// A tool whose input schema dsh cannot compile is given with no schema (any arguments;
// the server validates them).
func (s *Set) Definitions() []tools.Definition {
	var defs []tools.Definition
	for _, m := range s.mounted {
		defs = append(defs, m.srv.definition(m.name, m.tool))
	}
	return defs
}

// Register registers Definitions in reg for agentID ("" registers them globally) and
// returns a func that unregisters them. A definition reg refuses (say, a schema it cannot
// compile) is registered again without its schema; one refused twice is reported.
func (s *Set) Register(reg *tools.Registry, agentID string) (unregister func(), errs []error) {
	var unregs []func()
	for _, def := range s.Definitions() {
		def.Loading = s.o.Loading
		add := func(d tools.Definition) (func(), error) {
			if agentID == "" {
				return reg.Register(d)
			}
			return reg.RegisterForAgent(agentID, d)
		}
		u, err := add(def)
		if err != nil && def.InputSchema != nil && !errors.Is(err, tools.ErrDuplicate) {
			s.o.Logger.Warn("mcp: input schema not usable; the server validates the arguments", "tool", def.Name, "error", err)
			def.InputSchema = nil
			u, err = add(def)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("mcp: tool %s: %w", def.Name, err))
			continue
		}
		unregs = append(unregs, u)
	}
	return func() {
		for _, u := range unregs {
			u()
		}
	}, errs
}

// Origin returns, for the dsh tool name of a mounted MCP tool, its server's
// configuration and the server's own name of the tool; ok is false for any other name.
func (s *Set) Origin(name string) (server ServerConfig, tool string, ok bool) {
	if s == nil {
		return ServerConfig{}, "", false
	}
	m, ok := s.byName[name]
	if !ok {
		return ServerConfig{}, "", false
	}
	return m.srv.cfg, m.tool.Name, true
}

// ReadOnly reports whether the dsh tool name is an MCP tool its server annotates
// readOnlyHint and the server is one of Options.TrustedServers: an untrusted server's
// annotations are hints, not permissions.
func (s *Set) ReadOnly(name string) bool {
	m, ok := s.byName[name]
	if !ok || m.tool.Annotations == nil || !m.tool.Annotations.ReadOnlyHint {
		return false
	}
	return slices.Contains(s.o.TrustedServers, m.srv.cfg.Name)
}

// Close stops every server: the connection is closed (a stdio server's stdin first,
// SIGTERM after StopGrace, then SIGKILL), and then whatever remains of a stdio server's
// process group is killed. It is safe to call more than once.
func (s *Set) Close() error {
	if s == nil {
		return nil
	}
	var wg sync.WaitGroup
	for _, srv := range s.servers {
		wg.Go(srv.stop)
	}
	wg.Wait()
	return nil
}

func (srv *server) stop() {
	srv.closeOnce.Do(func() {
		if srv.sess != nil {
			_ = srv.sess.Close()
		}
		srv.killGroup()
	})
}

// killGroup kills the stdio server's process group (its children included).
func (srv *server) killGroup() {
	srv.group.Load().Kill()
}

// definition is the dsh tool of one MCP tool, named name.
func (srv *server) definition(name string, tool *sdk.Tool) tools.Definition {
	var schema json.RawMessage
	if tool.InputSchema != nil {
		if b, err := json.Marshal(tool.InputSchema); err == nil {
			schema = b
		}
	}
	if schema != nil && len(srv.o.Properties) > 0 {
		schema = withProperties(schema, srv.o.Properties)
	}
	mcpName := tool.Name
	rend := render
	if wrap := srv.o.WrapText; wrap != nil {
		rend = func(exec, value json.RawMessage) ([]dsh.ContentBlock, error) {
			blocks, err := render(exec, value)
			for i, b := range blocks {
				if t, ok := b.(dsh.TextBlock); ok {
					t.Text = wrap(t.Text)
					blocks[i] = t
				}
			}
			return blocks, err
		}
	}
	if srv.o.Namespace != "" {
		ns := strings.ReplaceAll(srv.o.Namespace, "{server}", sanitize(srv.cfg.Name))
		n := llm.Namespace{Name: ns, Description: strings.ReplaceAll(srv.o.NamespaceDescription, "{namespace}", ns), Function: sanitize(tool.Name)}
		if schema == nil {
			schema = json.RawMessage(`{}`)
		}
		if marked, err := n.Mark(schema); err == nil {
			schema = marked
		}
	}
	d := tools.Definition{
		Name:        name,
		Description: tool.Description,
		InputSchema: schema,
		Output:      &tools.Output{Render: rend},
		Run: func(ctx context.Context, rc *tools.RunContext) (any, error) {
			return srv.call(ctx, mcpName, rc.Exec().Arguments)
		},
	}
	if srv.o.Header != "" {
		headed(&d, srv.o.Header)
	}
	return d
}

// headed makes d's results the model reads begin with header (Options.Header): the
// call's wall time is kept by call id from its run to its finalization; a call that did
// not run (a denial) has none and keeps its content.
func headed(d *tools.Definition, header string) {
	var elapsed sync.Map // call id -> time.Duration
	run := d.Run
	d.Run = func(ctx context.Context, rc *tools.RunContext) (any, error) {
		start := time.Now()
		v, err := run(ctx, rc)
		elapsed.Store(rc.Exec().CallID, time.Since(start))
		return v, err
	}
	d.FinalizeContent = func(exec dsh.ToolExecution, result dsh.ToolExecutionResult) ([]dsh.ContentBlock, error) {
		v, ok := elapsed.LoadAndDelete(exec.CallID)
		if !ok {
			return nil, nil
		}
		head := dsh.TextBlock{Text: strings.ReplaceAll(header, "{seconds}", fmt.Sprintf("%.4f", v.(time.Duration).Seconds()))}
		switch r := result.(type) {
		case dsh.ToolSuccess:
			return append([]dsh.ContentBlock{head}, r.Content...), nil
		case dsh.ToolFailure:
			if r.Error.Info != nil && r.Error.Info.Code == CodeToolError {
				return []dsh.ContentBlock{head, dsh.TextBlock{Text: r.Error.Message}}, nil
			}
		}
		return nil, nil
	}
}

// withProperties is schema with props (a JSON object of property schemas) added to its
// properties, when schema is an object schema ("type": "object") whose properties, if
// any, are an object; otherwise schema as it is. A server's property of the same name is
// replaced, as the engine spreads its own after the server's.
func withProperties(schema, props json.RawMessage) json.RawMessage {
	var top map[string]json.RawMessage
	var add map[string]json.RawMessage
	if json.Unmarshal(schema, &top) != nil || json.Unmarshal(props, &add) != nil || string(top["type"]) != `"object"` {
		return schema
	}
	have := map[string]json.RawMessage{}
	if p, ok := top["properties"]; ok && json.Unmarshal(p, &have) != nil {
		return schema
	}
	maps.Copy(have, add)
	var err error
	if top["properties"], err = json.Marshal(have); err != nil {
		return schema
	}
	out, err := json.Marshal(top)
	if err != nil {
		return schema
	}
	return out
}

// ErrNotMounted is the error of [Set.CallText] for a server that is not mounted: none of
// that name is configured, or it did not start.
var ErrNotMounted = errors.New("MCP server not mounted")

// CallText calls tool of the mounted server named server with args (as mcp_tool hooks
// do) and returns the answer's text blocks joined with newlines (another block as
// "[type]", as Claude Code renders it) and whether the server marked it isError. A
// server that is not mounted is an [ErrNotMounted] error; a call that fails (the server
// crashed, answered garbage, ctx ended) is an error naming the server and the tool. It
// is safe on a nil Set (nothing is mounted).
func (s *Set) CallText(ctx context.Context, name, tool string, args map[string]any) (string, bool, error) {
	var srv *server
	if s != nil {
		for _, x := range s.servers {
			if x.cfg.Name == name {
				srv = x
			}
		}
	}
	if srv == nil || srv.err != nil || srv.sess == nil {
		return "", false, fmt.Errorf("%w: MCP server '%s' not connected", ErrNotMounted, name)
	}
	if args == nil {
		args = map[string]any{}
	}
	ctx, cancel := context.WithTimeout(ctx, srv.o.CallTimeout)
	defer cancel()
	res, err := srv.sess.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		if ctx.Err() != nil {
			return "", false, fmt.Errorf("MCP server %q: %s: %w", name, tool, ctx.Err())
		}
		return "", false, fmt.Errorf("MCP server %q: %s: %v", name, tool, err)
	}
	var parts []string
	for _, c := range res.Content {
		if t, ok := c.(*sdk.TextContent); ok {
			parts = append(parts, t.Text)
			continue
		}
		b, _ := json.Marshal(c)
		var typ struct {
			Type string `json:"type"`
		}
		_ = json.Unmarshal(b, &typ)
		parts = append(parts, "["+typ.Type+"]")
	}
	return strings.Join(parts, "\n"), res.IsError, nil
}
