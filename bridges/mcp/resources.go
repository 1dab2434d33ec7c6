package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// RPCError is a JSON-RPC error a server answered a request with.
type RPCError struct {
	Code    int64
	Message string
	Data    json.RawMessage
}

// Error is the error as code, message and data.
func (e *RPCError) Error() string {
	s := fmt.Sprintf("%d: %s", e.Code, e.Message)
	if len(e.Data) > 0 {
		s += " (" + string(e.Data) + ")"
	}
	return s
}

// RPC returns the error's code, message and data (builtin.RPCError).
func (e *RPCError) RPC() (code int64, message string, data json.RawMessage) {
	return e.Code, e.Message, e.Data
}

// ResourceServers returns the names of the servers that started, in configuration
// order: the servers whose resources ListResources, ListResourceTemplates and
// ReadResource reach.
func (s *Set) ResourceServers() []string { return s.Servers() }

// ListResources lists one page of the resources of the started server name (cursor "":
// the first page) as the server sent them, and the next page's cursor ("": none). A
// server that does not declare the resources capability lists none; a server's failure
// is an error (an *RPCError when it answered one).
func (s *Set) ListResources(ctx context.Context, name, cursor string) ([]json.RawMessage, string, error) {
	srv, err := s.resourceServer(name)
	if err != nil || !srv.hasResources() {
		return nil, "", err
	}
	ctx, cancel := context.WithTimeout(ctx, srv.o.CallTimeout)
	defer cancel()
	res, err := srv.sess.ListResources(ctx, &sdk.ListResourcesParams{Cursor: cursor})
	if err != nil {
		return nil, "", rpcError(err)
	}
	out, err := rawList(res.Resources)
	return out, res.NextCursor, err
}

// ListResourceTemplates is ListResources for the server's resource templates.
func (s *Set) ListResourceTemplates(ctx context.Context, name, cursor string) ([]json.RawMessage, string, error) {
	srv, err := s.resourceServer(name)
	if err != nil || !srv.hasResources() {
		return nil, "", err
	}
	ctx, cancel := context.WithTimeout(ctx, srv.o.CallTimeout)
	defer cancel()
	res, err := srv.sess.ListResourceTemplates(ctx, &sdk.ListResourceTemplatesParams{Cursor: cursor})
	if err != nil {
		return nil, "", rpcError(err)
	}
	out, err := rawList(res.ResourceTemplates)
	return out, res.NextCursor, err
}

// ReadResource reads the resource uri of the started server name: its contents, as the
// server sent them. The request goes to the server whatever its capabilities, which
// answers for itself.
func (s *Set) ReadResource(ctx context.Context, name, uri string) ([]json.RawMessage, error) {
	srv, err := s.resourceServer(name)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, srv.o.CallTimeout)
	defer cancel()
	res, err := srv.sess.ReadResource(ctx, &sdk.ReadResourceParams{URI: uri})
	if err != nil {
		return nil, rpcError(err)
	}
	return rawList(res.Contents)
}

// resourceServer is the started server name.
func (s *Set) resourceServer(name string) (*server, error) {
	for _, srv := range s.servers {
		if srv.cfg.Name == name && srv.err == nil && srv.sess != nil {
			return srv, nil
		}
	}
	return nil, fmt.Errorf("MCP server %q is not running", name)
}

// hasResources says whether the server declared the resources capability.
func (srv *server) hasResources() bool {
	r := srv.sess.InitializeResult()
	return r != nil && r.Capabilities != nil && r.Capabilities.Resources != nil
}

// rpcError is err as an *RPCError when the server answered with a JSON-RPC error.
func rpcError(err error) error {
	var w *jsonrpc.Error
	if errors.As(err, &w) {
		return &RPCError{Code: w.Code, Message: w.Message, Data: w.Data}
	}
	return err
}

// rawList is each element of list as JSON.
func rawList[T any](list []T) ([]json.RawMessage, error) {
	out := make([]json.RawMessage, 0, len(list))
	for _, v := range list {
		b, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, nil
}
