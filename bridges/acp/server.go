package acp

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/dshkit/dsh/bridges/mcp"
	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/llm"
	"github.com/dshkit/dsh/runtime/loop"
	"github.com/dshkit/dsh/runtime/session"
	"github.com/dshkit/dsh/runtime/tools"
)

// AgentID is the loop agent id of every ACP session (each session has its own registries).
const AgentID = "main"

// Permissions is which tool calls ask the client before they run.
type Permissions string

const (
	// PermissionsAsk asks for every call except Read and MCP tools annotated read-only by
	// a trusted server (Config.MCP.TrustedServers) (the default, like Claude Code's
	// default mode).
	PermissionsAsk Permissions = "ask"
	// PermissionsAllow asks for none; a hook's or plugin's ask decision still asks.
	PermissionsAllow Permissions = "allow"
)

// SessionSpec describes a session being created or loaded, for Config.Setup.
type SessionSpec struct {
	// ID is the ACP session id.
	ID string
	// CWD is the session's absolute working directory: the workspace of its tools.
	CWD string
	// Log is the session's durable log; LogPath is its file.
	Log     *session.Log
	LogPath string
	// Loaded is true for session/load.
	Loaded bool
}

// Env is what Config.Setup builds for one session: the registries, model and hooks the
// agent loop runs with. The ACP bridge adds its own listeners (permissions, tool progress,
// prompt correlation) and the session's MCP tools to them.
type Env struct {
	// Hooks is the session's listener registry (native plugins and hook bridges).
	Hooks *dsh.Registry
	// Tools is the session's tool registry (the built-in tools).
	Tools *tools.Registry
	// Model and LLM are the model and its call configuration.
	Model llm.Model
	LLM   dsh.LLMCallConfig
	// System is the system prompt.
	System string
	// MCPServers are mounted in the session before its own mcpServers (a session server
	// of the same name replaces one of these): --mcp-config and the project's .mcp.json.
	MCPServers []mcp.ServerConfig
	// ContinuationCap is the loop's Stop continuation cap (loop.Config.ContinuationCap;
	// 0 is the loop's default).
	ContinuationCap int
	// Compaction configures the session's compaction (loop.Config.Compaction): the
	// model's context window, the threshold. A prompt "/compact [instructions]" compacts
	// the idle session instead of starting a turn.
	Compaction loop.CompactionConfig
	// ToolOptions are added to the session's tool runtime options (e.g.
	// tools.WithRewriteDeadline for hook bridges, whose PreToolUse hooks run in the
	// rewrite phase under their own timeouts).
	ToolOptions []tools.Option
	// FileText, if set, reads a file's current text for the diff that a Write's tool card
	// and permission prompt show, as the Write tool itself could read it: it must apply the
	// tools' confinement and caps (builtin.CurrentText with the session's tool options
	// does). An error shows no diff. Default: builtin.CurrentText with the session's cwd
	// as the workspace and the default caps.
	FileText func(ctx context.Context, filePath string) (text string, exists bool, err error)
	// Started, if set, is called with the agent once it exists (hook bridges need it).
	Started func(*loop.Agent)
	// Close, if set, releases what Setup acquired (hook bridges); called once.
	Close func()
}

// Config configures a Server.
type Config struct {
	// Setup builds a session's environment. Required.
	Setup func(ctx context.Context, spec SessionSpec) (*Env, error)
	// SessionsDir holds the session logs, one <sessionId>.jsonl each. Required unless
	// Logs is set.
	SessionsDir string
	// Logs, if set, keeps the session logs instead of SessionsDir (dsh acp --sessions
	// postgres://... sets one on PostgreSQL).
	Logs LogStore
	// MCP configures the MCP clients (Dir is set per session).
	MCP mcp.Options
	// Permissions is the default permission policy (default PermissionsAsk).
	Permissions Permissions
	// Name and Version are reported in agentInfo (default "dsh", "dev").
	Name, Version string
	// Logger receives diagnostics (stderr in dsh acp; default: discard).
	Logger *slog.Logger
	// MaxInFlight bounds the requests of the connection being handled at once (default
	// DefaultMaxInFlight). A request past the bound is answered at once with
	// CodeServerBusy, from the reading goroutine: while the client does not read its
	// output, that answer blocks, and so reading stops (backpressure) and memory stays
	// flat however many requests the client sends.
	MaxInFlight int
	// MaxOpenSessions bounds the sessions kept open (default DefaultMaxOpenSessions).
	// Past it, the least recently used idle sessions (no prompt in flight) are closed:
	// their agent, hooks, MCP servers and log file are released. A session closed so is
	// reopened from its log, as session/load does but without replaying it to the client,
	// when a prompt names it (or loaded again by session/load).
	MaxOpenSessions int
}

// Defaults of Config's bounds.
const (
	// DefaultMaxInFlight is the default Config.MaxInFlight.
	DefaultMaxInFlight = 64
	// DefaultMaxOpenSessions is the default Config.MaxOpenSessions.
	DefaultMaxOpenSessions = 16
)

// LogStore keeps session logs by session id, for a Server whose logs are not JSONL files.
type LogStore interface {
	// Create returns the store of a new session, id.
	Create(ctx context.Context, id string) (session.Store, error)
	// Load returns the store of the existing session id: an error wrapping fs.ErrNotExist
	// when there is no such session (session/load then answers the spec's
	// Resource-not-found error).
	Load(ctx context.Context, id string) (session.Store, error)
}

// Server is an ACP agent: it serves one client connection with any number of sessions.
type Server struct {
	cfg Config
	log *slog.Logger
	c   *conn

	mu           sync.Mutex
	initialized  bool
	terminalMeta bool // the client advertised _meta.terminal_output (Zed)
	sessions     map[string]*acpSession
	handlers     sync.WaitGroup
	// parked are the sessions closed for being idle (Config.MaxOpenSessions), by id:
	// what reopening them needs.
	parked map[string]parkedSession
	// tick orders the sessions' last use (acpSession.used), for closing the least
	// recently used first.
	tick int64
	// slots holds one token per request being handled (Config.MaxInFlight).
	slots chan struct{}
}

// parkedSession is a session closed for being idle: enough to reopen it from its log.
type parkedSession struct {
	cwd     string
	servers []mcp.ServerConfig
	// closed is closed once the session's resources are released (its log too, so that
	// reopening does not meet the log's single-writer lock).
	closed chan struct{}
}

// NewServer returns a server for cfg.
func NewServer(cfg Config) (*Server, error) {
	if cfg.Setup == nil || (cfg.SessionsDir == "" && cfg.Logs == nil) {
		return nil, errors.New("acp: Config.Setup and Config.SessionsDir (or Config.Logs) are required")
	}
	if cfg.Permissions == "" {
		cfg.Permissions = PermissionsAsk
	}
	if cfg.Name == "" {
		cfg.Name = "dsh"
	}
	if cfg.Version == "" {
		cfg.Version = "dev"
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.MCP.Logger == nil {
		cfg.MCP.Logger = cfg.Logger
	}
	if cfg.MaxInFlight <= 0 {
		cfg.MaxInFlight = DefaultMaxInFlight
	}
	if cfg.MaxOpenSessions <= 0 {
		cfg.MaxOpenSessions = DefaultMaxOpenSessions
	}
	return &Server{cfg: cfg, log: cfg.Logger, sessions: map[string]*acpSession{},
		parked: map[string]parkedSession{}, slots: make(chan struct{}, cfg.MaxInFlight)}, nil
}

// Serve reads frames from in and writes frames to out until in ends or ctx is done. Then
// every session is cancelled, its prompt answered, its agent, MCP servers and log closed,
// and Serve returns (nil for a clean end of input). Nothing but frames goes to out.
func (s *Server) Serve(ctx context.Context, in io.Reader, out io.Writer) error {
	s.c = newConn(out)
	done := make(chan error, 1)
	go func() {
		done <- readFrames(in, func(line []byte) { s.handleLine(ctx, line) })
	}()
	var err error
	select {
	case err = <-done:
	case <-ctx.Done():
	}
	s.shutdown()
	return err
}

// shutdown cancels and settles every session, then closes them.
func (s *Server) shutdown() {
	for _, ss := range s.openSessions() {
		ss.cancel(dsh.CancelDisposed{})
	}
	s.handlers.Wait() // every prompt is answered, every session/new or load is done
	s.c.shut()
	for _, ss := range s.openSessions() {
		ss.close()
	}
}

// openSessions returns the open sessions (not those still being created).
func (s *Server) openSessions() []*acpSession {
	s.mu.Lock()
	defer s.mu.Unlock()
	sessions := make([]*acpSession, 0, len(s.sessions))
	for _, ss := range s.sessions {
		if ss != nil {
			sessions = append(sessions, ss)
		}
	}
	return sessions
}

func (s *Server) handleLine(ctx context.Context, line []byte) {
	if line == nil {
		s.c.reply(nil, nil, rpcErr(CodeParseError, "Parse error: frame larger than %d bytes", MaxFrame))
		return
	}
	if line[0] == '[' {
		s.c.reply(nil, nil, rpcErr(CodeInvalidRequest, "Invalid request: batches are not supported in ACP v1"))
		return
	}
	var f frame
	if err := json.Unmarshal(line, &f); err != nil {
		s.c.reply(nil, nil, rpcErr(CodeParseError, "Parse error: %v", err))
		return
	}
	isRequest := len(f.ID) > 0 && string(f.ID) != "null"
	switch {
	case f.Method == "" && isRequest:
		s.c.deliver(f)
	case f.Method == "":
		s.c.reply(nil, nil, rpcErr(CodeInvalidRequest, "Invalid request: no method"))
	case !isRequest:
		s.notification(f)
	case f.Method == "initialize", f.Method == "session/cancel":
		// initialize is answered in frame order, before the next frame is read: a request
		// sent right after it (without waiting for its response) sees the connection
		// initialized, as it would on a server that handles frames one at a time. A
		// session/cancel request is answered here too, so that it is never refused as busy.
		res, e := s.request(ctx, f)
		if err := s.c.reply(f.ID, res, e); err != nil {
			s.log.Warn("acp: writing a response failed", "method", f.Method, "error", err)
		}
	default:
		select {
		case s.slots <- struct{}{}:
		default:
			// Answered here, on the reading goroutine: a client that does not read its
			// output stops being read from (backpressure).
			if err := s.c.reply(f.ID, nil, rpcErr(CodeServerBusy, "Server busy: %d requests in flight; retry once some are answered", s.cfg.MaxInFlight)); err != nil {
				s.log.Warn("acp: writing a response failed", "method", f.Method, "error", err)
			}
			return
		}
		s.handlers.Add(1)
		go func() {
			defer s.handlers.Done()
			res, e := s.request(ctx, f)
			if err := s.c.reply(f.ID, res, e); err != nil {
				s.log.Warn("acp: writing a response failed", "method", f.Method, "error", err)
			}
			// The slot is held until the response is written (a client that does not
			// read keeps it), and no longer: the next request may use it.
			<-s.slots
			if e == nil {
				s.after(f.Method, res)
			}
		}()
	}
}

// after runs once a response is on the wire: a new or loaded session's commands.
func (s *Server) after(method string, res any) {
	var id string
	switch r := res.(type) {
	case newSessionResult:
		id = r.SessionID
	case loadedSession:
		id = r.id
	default:
		return
	}
	cmds := []json.RawMessage{json.RawMessage(compactCommandJSON)}
	s.sendUpdate(id, update{SessionUpdate: "available_commands_update", AvailableCommands: &cmds})
}

// loadedSession is the session/load result ({} on the wire: no modes, no config
// options) with the session id.
type loadedSession struct{ id string }

// MarshalJSON writes {}.
func (loadedSession) MarshalJSON() ([]byte, error) { return []byte("{}"), nil }

func (s *Server) sendUpdate(id string, u update) {
	if err := s.c.notify("session/update", sessionNotification{SessionID: id, Update: u}); err != nil {
		s.log.Debug("acp: session/update not written", "session", id, "error", err)
	}
}

func (s *Server) notification(f frame) {
	switch f.Method {
	case "session/cancel":
		var p sessionIDParams
		if json.Unmarshal(f.Params, &p) != nil {
			return
		}
		if ss := s.session(p.SessionID); ss != nil {
			ss.cancel(dsh.CancelUser{})
		}
	default:
		// Unknown notifications (extensions included) are ignored.
	}
}

func (s *Server) session(id string) *acpSession {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sessions[id]
}

func decodeParams(raw json.RawMessage, v any) *RPCError {
	if len(raw) == 0 {
		raw = json.RawMessage("{}")
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return rpcErr(CodeInvalidParams, "Invalid params: %v", err)
	}
	return nil
}

func (s *Server) request(ctx context.Context, f frame) (any, *RPCError) {
	s.mu.Lock()
	initialized := s.initialized
	s.mu.Unlock()
	if f.Method != "initialize" && !initialized {
		if !knownMethod(f.Method) {
			return nil, rpcErr(CodeMethodNotFound, "Method not found: %s", f.Method)
		}
		return nil, rpcErr(CodeInvalidRequest, "Invalid request: %s before initialize", f.Method)
	}
	switch f.Method {
	case "initialize":
		var p initializeParams
		if e := decodeParams(f.Params, &p); e != nil {
			return nil, e
		}
		if p.ProtocolVersion == nil {
			return nil, rpcErr(CodeInvalidParams, "Invalid params: protocolVersion is required")
		}
		s.mu.Lock()
		s.initialized = true
		s.terminalMeta = p.ClientCapabilities.Meta["terminal_output"] == true
		s.mu.Unlock()
		return initializeResult{
			ProtocolVersion: ProtocolVersion,
			AgentCapabilities: agentCapabilities{LoadSession: true,
				PromptCapabilities: promptCapabilities{EmbeddedContext: true},
				MCPCapabilities:    mcpCapabilities{HTTP: true, SSE: true}},
			AuthMethods: []authMethod{{ID: "dsh-model-flags", Name: "Model from dsh's command line",
				Description: "dsh uses the model given by its --model flag and environment; there is nothing to log in to."}},
			AgentInfo: implementation{Name: s.cfg.Name, Title: "dsh", Version: s.cfg.Version},
		}, nil
	case "authenticate":
		return struct{}{}, nil
	case "session/new":
		var p newSessionParams
		if e := decodeParams(f.Params, &p); e != nil {
			return nil, e
		}
		ss, e := s.open(ctx, newSessionID(), p.CWD, p.MCPServers, false)
		if e != nil {
			return nil, e
		}
		return newSessionResult{SessionID: ss.id}, nil
	case "session/load":
		var p loadSessionParams
		if e := decodeParams(f.Params, &p); e != nil {
			return nil, e
		}
		ss, e := s.open(ctx, p.SessionID, p.CWD, p.MCPServers, true)
		if e != nil {
			return nil, e
		}
		return loadedSession{id: ss.id}, nil
	case "session/prompt":
		var p promptParams
		if e := decodeParams(f.Params, &p); e != nil {
			return nil, e
		}
		ss, e := s.acquire(ctx, p.SessionID)
		if e != nil {
			return nil, e
		}
		defer s.release(ss)
		return ss.prompt(p.Prompt)
	case "session/cancel":
		// Some clients send it as a request: cancel, then answer.
		var p sessionIDParams
		if e := decodeParams(f.Params, &p); e != nil {
			return nil, e
		}
		if ss := s.session(p.SessionID); ss != nil {
			ss.cancel(dsh.CancelUser{})
		}
		return nil, nil
	}
	return nil, rpcErr(CodeMethodNotFound, "Method not found: %s", f.Method)
}

func knownMethod(m string) bool {
	switch m {
	case "authenticate", "session/new", "session/load", "session/prompt", "session/cancel":
		return true
	}
	return false
}

func sessionNotFound(id string) *RPCError {
	e := rpcErr(CodeNotFound, "Resource not found: session %q", id)
	e.Data, _ = json.Marshal(map[string]string{"sessionId": id})
	return e
}

var validID = regexp.MustCompile(`^[A-Za-z0-9_-]{1,128}$`)

func newSessionID() string { return "sess_" + strings.ToLower(rand.Text()) }

// open creates (load=false) or loads a session.
func (s *Server) open(ctx context.Context, id, cwd string, servers []mcpServer, load bool) (*acpSession, *RPCError) {
	if cwd == "" || !filepath.IsAbs(cwd) {
		return nil, rpcErr(CodeInvalidParams, "Invalid params: cwd must be an absolute path, got %q", cwd)
	}
	if fi, err := os.Stat(cwd); err != nil || !fi.IsDir() {
		return nil, rpcErr(CodeInvalidParams, "Invalid params: cwd %q is not a directory", cwd)
	}
	mcpCfgs, e := mcpConfigs(servers)
	if e != nil {
		return nil, e
	}
	if !validID.MatchString(id) {
		return nil, rpcErr(CodeInvalidParams, "Invalid params: session id %q (want letters, digits, _ and -)", id)
	}
	if s.cfg.Logs == nil {
		if err := os.MkdirAll(s.cfg.SessionsDir, 0o755); err != nil {
			return nil, rpcErr(CodeInternalError, "sessions directory: %v", err)
		}
	}
	path := s.logPath(id)
	s.mu.Lock()
	if _, dup := s.sessions[id]; dup {
		s.mu.Unlock()
		return nil, rpcErr(CodeInvalidParams, "Invalid params: session %q is already open on this connection", id)
	}
	s.sessions[id] = nil // reserved
	p, wasParked := s.parked[id]
	delete(s.parked, id)
	s.mu.Unlock()
	if wasParked {
		<-p.closed
	}
	ss, e := s.start(ctx, id, cwd, path, mcpCfgs, load, false)
	s.settle(id, ss, e, false)
	return ss, e
}

// settle records the end of opening session id: open (pinned for a prompt when pin), or
// forgotten. Then the least recently used idle sessions past Config.MaxOpenSessions are
// closed.
func (s *Server) settle(id string, ss *acpSession, e *RPCError, pin bool) {
	s.mu.Lock()
	if e != nil {
		delete(s.sessions, id)
	} else {
		s.sessions[id] = ss
		s.tick++
		ss.used = s.tick
		if pin {
			ss.pins++
		}
	}
	s.mu.Unlock()
	s.closeIdle(id)
}

// acquire returns open session id pinned for a prompt (never closed for being idle until
// release), reopening it from its log when it was closed for being idle.
func (s *Server) acquire(ctx context.Context, id string) (*acpSession, *RPCError) {
	s.mu.Lock()
	if ss := s.sessions[id]; ss != nil {
		ss.pins++
		s.tick++
		ss.used = s.tick
		s.mu.Unlock()
		return ss, nil
	}
	p, ok := s.parked[id]
	if !ok {
		s.mu.Unlock()
		return nil, sessionNotFound(id) // unknown, or still being opened
	}
	delete(s.parked, id)
	s.sessions[id] = nil // reserved
	s.mu.Unlock()
	<-p.closed
	ss, e := s.start(ctx, id, p.cwd, s.logPath(id), p.servers, true, true)
	if e != nil {
		s.mu.Lock()
		s.parked[id] = parkedSession{cwd: p.cwd, servers: p.servers, closed: p.closed} // a later prompt may retry
		s.mu.Unlock()
	}
	s.settle(id, ss, e, true)
	return ss, e
}

// release unpins a session acquire returned.
func (s *Server) release(ss *acpSession) {
	s.mu.Lock()
	ss.pins--
	s.mu.Unlock()
	s.closeIdle("")
}

// closeIdle closes the least recently used idle sessions (not pinned, no prompt; never
// session keep, just opened) while more than Config.MaxOpenSessions are open, and parks
// them for reopening.
func (s *Server) closeIdle(keep string) {
	var victims []*acpSession
	s.mu.Lock()
	open := 0
	for _, ss := range s.sessions {
		if ss != nil {
			open++
		}
	}
	for open > s.cfg.MaxOpenSessions {
		var lru *acpSession
		for _, ss := range s.sessions {
			if ss != nil && ss.id != keep && ss.pins == 0 && ss.idle() && (lru == nil || ss.used < lru.used) {
				lru = ss
			}
		}
		if lru == nil {
			break // every open session is busy
		}
		delete(s.sessions, lru.id)
		s.parked[lru.id] = parkedSession{cwd: lru.cwd, servers: lru.servers, closed: lru.closed}
		victims = append(victims, lru)
		open--
	}
	s.mu.Unlock()
	for _, ss := range victims {
		s.log.Debug("acp: closing an idle session", "session", ss.id)
		ss.close()
	}
}

// mcpConfigs converts ACP's mcpServers.
func mcpConfigs(servers []mcpServer) ([]mcp.ServerConfig, *RPCError) {
	var out []mcp.ServerConfig
	for i, m := range servers {
		sc := mcp.ServerConfig{Name: m.Name, Source: "session mcpServers"}
		if m.Name == "" {
			return nil, rpcErr(CodeInvalidParams, "Invalid params: mcpServers[%d].name is required", i)
		}
		switch m.Type {
		case "", "stdio":
			if m.Command == "" {
				return nil, rpcErr(CodeInvalidParams, "Invalid params: mcpServers[%d].command is required", i)
			}
			sc.Type, sc.Command, sc.Args = mcp.TypeStdio, m.Command, m.Args
			for _, e := range m.Env {
				sc.Env = append(sc.Env, e.Name+"="+e.Value)
			}
		case "http", "sse":
			if m.URL == "" {
				return nil, rpcErr(CodeInvalidParams, "Invalid params: mcpServers[%d].url is required", i)
			}
			sc.Type, sc.URL = m.Type, m.URL
			if len(m.Headers) > 0 {
				sc.Headers = map[string]string{}
				for _, h := range m.Headers {
					sc.Headers[h.Name] = h.Value
				}
			}
		default:
			return nil, rpcErr(CodeInvalidParams, "Invalid params: mcpServers[%d].type %q", i, m.Type)
		}
		out = append(out, sc)
	}
	return out, nil
}

// mergeServers puts session servers after the configured ones, replacing same names.
func mergeServers(base, session []mcp.ServerConfig) []mcp.ServerConfig {
	names := map[string]bool{}
	for _, s := range session {
		names[s.Name] = true
	}
	var out []mcp.ServerConfig
	for _, b := range base {
		if !names[b.Name] {
			out = append(out, b)
		}
	}
	return append(out, session...)
}

// logPath is the JSONL file of session id, or "" when the logs are kept in cfg.Logs.
func (s *Server) logPath(id string) string {
	if s.cfg.Logs != nil {
		return ""
	}
	return filepath.Join(s.cfg.SessionsDir, id+".jsonl")
}

// openStore opens the store of session id in cfg.Logs.
func (s *Server) openStore(ctx context.Context, id string, load bool) (session.Store, *RPCError) {
	open := s.cfg.Logs.Create
	if load {
		open = s.cfg.Logs.Load
	}
	st, err := open(ctx, id)
	switch {
	case load && errors.Is(err, fs.ErrNotExist):
		return nil, sessionNotFound(id)
	case err != nil:
		return nil, rpcErr(CodeInternalError, "session log: %v", err)
	}
	return st, nil
}

// start opens the log, builds the environment, replays a loaded log and starts the agent.
// path is the log's file, or "" for a log in cfg.Logs.
//
// quiet (a session reopened after being closed for idleness) does not replay the log to
// the client, which already shows it.
func (s *Server) start(ctx context.Context, id, cwd, path string, servers []mcp.ServerConfig, load, quiet bool) (*acpSession, *RPCError) {
	var store session.Store
	if path == "" {
		st, e := s.openStore(ctx, id, load)
		if e != nil {
			return nil, e
		}
		store = st
	} else if load {
		if _, err := os.Stat(path); err != nil {
			return nil, sessionNotFound(id)
		}
	} else if _, err := os.Stat(path); err == nil {
		return nil, rpcErr(CodeInternalError, "session id collision: %s exists", path)
	}
	if store == nil {
		f, rec, err := session.OpenFile(path)
		if err != nil {
			return nil, rpcErr(CodeInternalError, "session log %s: %v", path, err)
		}
		if rec.Truncated() {
			s.log.Warn("acp: recovered a damaged log tail", "log", path, "reason", rec.Reason, "bytes", rec.TruncatedBytes)
		}
		store = f
	}
	lg, err := session.Open(ctx, store)
	if err != nil {
		store.Close()
		name := path
		if name == "" {
			name = "of session " + id
		}
		return nil, rpcErr(CodeInternalError, "session log %s: %v", name, err)
	}
	if load && lg.Len() == 0 {
		lg.Close()
		return nil, sessionNotFound(id)
	}
	env, err := s.cfg.Setup(ctx, SessionSpec{ID: id, CWD: cwd, Log: lg, LogPath: path, Loaded: load})
	if err != nil {
		lg.Close()
		return nil, rpcErr(CodeInternalError, "session setup: %v", err)
	}
	ss := newSession(s, id, cwd, lg, env)
	ss.servers = servers
	fail := func(code int, format string, args ...any) (*acpSession, *RPCError) {
		ss.close()
		return nil, rpcErr(code, format, args...)
	}
	mo := s.cfg.MCP
	mo.Dir = cwd
	set, errs := mcp.Start(ctx, mergeServers(env.MCPServers, servers), mo)
	ss.mcp = set
	for _, e := range errs {
		s.log.Warn("acp: MCP server not mounted", "session", id, "error", e)
	}
	unreg, rerrs := set.Register(env.Tools, "")
	ss.closers = append(ss.closers, unreg)
	for _, e := range rerrs {
		s.log.Warn("acp: MCP tool not registered", "session", id, "error", e)
	}
	ss.wire()
	if load {
		send := ss.tr.send
		if quiet {
			ss.tr.send = func(update) {}
		}
		for e := range lg.Events() {
			ss.tr.observe(e, true)
		}
		ss.tr.send = send
	}
	ss.subscribe()
	cfg := loop.Config{ID: AgentID, SessionID: id, Registry: env.Hooks, Tools: ss.rt, Model: env.Model, Log: lg,
		LLM: env.LLM, System: env.System, Logger: s.log, ContinuationCap: env.ContinuationCap, Compaction: env.Compaction}
	var agent *loop.Agent
	if load {
		agent, err = loop.Resume(ctx, cfg)
	} else {
		agent, err = loop.New(ctx, cfg)
	}
	if err != nil {
		return fail(CodeInternalError, "starting the agent: %v", err)
	}
	ss.agent = agent
	if env.Started != nil {
		env.Started(agent)
	}
	return ss, nil
}
