package acp

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"regexp"
	"strings"
	"sync"

	"github.com/dshkit/dsh/bridges/mcp"
	"github.com/dshkit/dsh/generated/dsh"
)

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
