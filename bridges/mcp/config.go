package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
)

// Server types.
const (
	// TypeStdio is a server run as a subprocess speaking MCP on its stdio.
	TypeStdio = "stdio"
	// TypeHTTP is a streamable-HTTP server.
	TypeHTTP = "http"
	// TypeSSE is a server on the older HTTP+SSE transport.
	TypeSSE = "sse"
)

// ServerConfig is one MCP server to mount.
type ServerConfig struct {
	// Name is the server's name: its tools are named mcp__<Name>__<tool>.
	Name string
	// Type is TypeStdio, TypeHTTP or TypeSSE.
	Type string
	// Command and Args start a stdio server; Env is added to its environment
	// (NAME=value).
	Command string
	Args    []string
	Env     []string
	// URL is the endpoint of an HTTP or SSE server; Headers are sent with every request.
	URL     string
	Headers map[string]string
	// Source says where the server was configured (a file path, "acp session/new").
	Source string
}

// ConfigError is a problem with one server of a configuration: the file, the field (a
// dotted path such as mcpServers.github.command) and what is wrong. The other servers
// of the file still load.
type ConfigError struct {
	File  string
	Field string
	Err   error
}

// Error returns "FILE: FIELD: problem".
func (e *ConfigError) Error() string {
	switch {
	case e.Field == "":
		return fmt.Sprintf("%s: %v", e.File, e.Err)
	default:
		return fmt.Sprintf("%s: %s: %v", e.File, e.Field, e.Err)
	}
}

// Unwrap returns the underlying problem.
func (e *ConfigError) Unwrap() error { return e.Err }

// LoadFile reads a configuration in Claude Code's .mcp.json shape:
//
//	{"mcpServers": {"NAME": {"command": "...", "args": [...], "env": {...}},
//	                "NAME": {"type": "http", "url": "...", "headers": {...}}}}
//
// ${VAR} and ${VAR:-default} are expanded from env (os.LookupEnv when nil) in command,
// args, env values, url and headers, as Claude Code does. It returns the valid servers in
// name order and a *ConfigError for every invalid one; a file that cannot be read or is
// not a JSON object gives no servers and one error.
func LoadFile(path string, env func(string) (string, bool)) ([]ServerConfig, []error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, []error{&ConfigError{File: path, Err: err}}
	}
	return Parse(data, path, env)
}

// Parse is LoadFile on data already read; source names it in errors.
func Parse(data []byte, source string, env func(string) (string, bool)) ([]ServerConfig, []error) {
	if env == nil {
		env = os.LookupEnv
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, []error{&ConfigError{File: source, Err: fmt.Errorf("not a JSON object: %v", jsonProblem(data, err))}}
	}
	raw, ok := top["mcpServers"]
	if !ok {
		return nil, []error{&ConfigError{File: source, Field: "mcpServers", Err: errors.New("missing")}}
	}
	var servers map[string]json.RawMessage
	if err := json.Unmarshal(raw, &servers); err != nil {
		return nil, []error{&ConfigError{File: source, Field: "mcpServers", Err: errors.New("must be an object of servers by name")}}
	}
	names := make([]string, 0, len(servers))
	for n := range servers {
		names = append(names, n)
	}
	slices.Sort(names)
	var (
		out  []ServerConfig
		errs []error
	)
	for _, name := range names {
		sc, err := parseServer(name, servers[name], source, env)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, sc)
	}
	return out, errs
}

// jsonProblem adds the line and column of a syntax error.
func jsonProblem(data []byte, err error) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		line := 1 + bytes.Count(data[:se.Offset], []byte("\n"))
		col := int(se.Offset) - bytes.LastIndexByte(data[:se.Offset], '\n')
		return fmt.Errorf("line %d, column %d: %v", line, col, err)
	}
	return err
}

// fileServer is one server entry of a .mcp.json file.
type fileServer struct {
	Type    *string           `json:"type"`
	Command *string           `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env"`
	URL     *string           `json:"url"`
	Headers map[string]string `json:"headers"`
}

func parseServer(name string, raw json.RawMessage, source string, env func(string) (string, bool)) (ServerConfig, error) {
	field := "mcpServers." + name
	bad := func(sub string, err error) error {
		f := field
		if sub != "" {
			f += "." + sub
		}
		return &ConfigError{File: source, Field: f, Err: err}
	}
	if name == "" {
		return ServerConfig{}, bad("", errors.New("a server needs a non-empty name"))
	}
	var fs fileServer
	if err := json.Unmarshal(raw, &fs); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return ServerConfig{}, bad(te.Field, fmt.Errorf("must be %s, not %s", jsonKind(te.Type.Kind().String()), te.Value))
		}
		return ServerConfig{}, bad("", errors.New("must be an object"))
	}
	var missing []string
	x := func(sub, s string) string {
		v, miss := expand(s, env)
		for _, m := range miss {
			missing = append(missing, sub+": ${"+m+"}")
		}
		return v
	}
	sc := ServerConfig{Name: name, Source: source}
	typ := ""
	if fs.Type != nil {
		typ = *fs.Type
	}
	switch {
	case typ == "" && fs.URL != nil && fs.Command == nil:
		typ = TypeHTTP
	case typ == "":
		typ = TypeStdio
	}
	sc.Type = typ
	switch typ {
	case TypeStdio:
		if fs.Command == nil || strings.TrimSpace(*fs.Command) == "" {
			return sc, bad("command", errors.New("a stdio server needs a non-empty command"))
		}
		sc.Command = x("command", *fs.Command)
		if fs.Args != nil {
			sc.Args = []string{} // given, if empty (Gemini CLI's mcp_context writes it)
		}
		for i, a := range fs.Args {
			sc.Args = append(sc.Args, x(fmt.Sprintf("args[%d]", i), a))
		}
		keys := make([]string, 0, len(fs.Env))
		for k := range fs.Env {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			if k == "" || strings.ContainsRune(k, '=') {
				return sc, bad("env", fmt.Errorf("invalid variable name %q", k))
			}
			sc.Env = append(sc.Env, k+"="+x("env."+k, fs.Env[k]))
		}
	case TypeHTTP, TypeSSE:
		if fs.URL == nil || *fs.URL == "" {
			return sc, bad("url", fmt.Errorf("a %s server needs a url", typ))
		}
		sc.URL = x("url", *fs.URL)
		if !strings.HasPrefix(sc.URL, "http://") && !strings.HasPrefix(sc.URL, "https://") {
			return sc, bad("url", fmt.Errorf("%q is not an http(s) URL", sc.URL))
		}
		if len(fs.Headers) > 0 {
			sc.Headers = make(map[string]string, len(fs.Headers))
			for k, v := range fs.Headers {
				sc.Headers[k] = x("headers."+k, v)
			}
		}
	default:
		return sc, bad("type", fmt.Errorf("%q: want stdio, http or sse", typ))
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		return sc, bad("", fmt.Errorf("environment variables not set: %s", strings.Join(missing, ", ")))
	}
	return sc, nil
}

// jsonKind names a Go kind as a JSON type.
func jsonKind(k string) string {
	switch k {
	case "string":
		return "a string"
	case "slice":
		return "an array"
	case "map", "struct":
		return "an object"
	}
	return k
}

var varRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)(:-([^}]*))?\}`)

// expand replaces ${VAR} and ${VAR:-default}; it returns the names of the variables that
// are unset and have no default.
func expand(s string, env func(string) (string, bool)) (string, []string) {
	var missing []string
	out := varRef.ReplaceAllStringFunc(s, func(m string) string {
		g := varRef.FindStringSubmatch(m)
		if v, ok := env(g[1]); ok {
			return v
		}
		if g[2] != "" {
			return g[3]
		}
		missing = append(missing, g[1])
		return m
	})
	return out, missing
}
