package acp

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/dshkit/dsh/bridges/mcp"
	"github.com/dshkit/dsh/runtime/loop"
	"github.com/dshkit/dsh/runtime/session"
)

// open creates (load=false) or loads a session.
func (s *Server) open(ctx context.Context, id, cwd string, servers []mcpServer, load bool) (*acpSession, *RPCError) {
	if err := CheckCWD(cwd); err != nil {
		return nil, rpcErr(CodeInvalidParams, "Invalid params: %v", err)
	}
	mcpCfgs, e := mcpConfigs(servers)
	if e != nil {
		return nil, e
	}
	if !validID.MatchString(id) {
		return nil, rpcErr(CodeInvalidParams, "Invalid params: session id %q (want letters, digits, _ and -)", id)
	}
	if s.cfg.Logs == nil {
		if err := os.MkdirAll(s.cfg.SessionsDir, 0o700); err != nil {
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
			if !quiet {
				ss.replayChild(e)
			}
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
		if err := env.Started(ctx, agent); err != nil {
			return fail(CodeInternalError, "starting the agent: %v", err)
		}
	}
	return ss, nil
}
