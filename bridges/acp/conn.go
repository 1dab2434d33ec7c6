package acp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
)

// JSON-RPC error codes used by the agent (ACP's ErrorCode list).
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternalError  = -32603
	CodeNotFound       = -32002
	// CodeServerBusy answers a request past Config.MaxInFlight (a JSON-RPC server error).
	CodeServerBusy = -32000
)

// MaxFrame is the largest frame the agent reads (the TypeScript SDK's default limit).
const MaxFrame = 32 << 20

// RPCError is a JSON-RPC error object.
type RPCError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// Error returns the message and code.
func (e *RPCError) Error() string { return fmt.Sprintf("%s (%d)", e.Message, e.Code) }

func rpcErr(code int, format string, args ...any) *RPCError {
	return &RPCError{Code: code, Message: fmt.Sprintf(format, args...)}
}

// frame is any JSON-RPC message.
type frame struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *RPCError       `json:"error,omitempty"`
}

// errClosed is the failure of an outgoing request whose connection ended.
var errClosed = errors.New("acp: connection closed")

// conn is the agent's end of an NDJSON JSON-RPC stream: one compact object per line.
// Writes are serialized; outgoing requests are numbered from 0 and matched to their
// responses (ids are per direction).
type conn struct {
	wmu sync.Mutex
	w   *bufio.Writer
	// wrote, if set, is called after every frame is flushed (benchmarks).
	wrote func()

	pmu     sync.Mutex
	next    int64
	pending map[string]chan frame
	closed  bool
}

func newConn(w io.Writer) *conn {
	return &conn{w: bufio.NewWriterSize(w, 64<<10), pending: map[string]chan frame{}}
}

// write sends one frame. A write error is returned (the client is gone).
func (c *conn) write(f any) error {
	b, err := json.Marshal(f)
	if err != nil {
		return err
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.w.Write(b)
	c.w.WriteByte('\n')
	err = c.w.Flush()
	if c.wrote != nil {
		c.wrote()
	}
	return err
}

// notify sends a notification.
func (c *conn) notify(method string, params any) error {
	return c.write(notification{JSONRPC: "2.0", Method: method, Params: params})
}

// notification is an outgoing notification, encoded in one pass.
type notification struct {
	JSONRPC string `json:"jsonrpc"`
	Method  string `json:"method"`
	Params  any    `json:"params"`
}

// reply answers request id with result, or with e when it is not nil.
func (c *conn) reply(id json.RawMessage, result any, e *RPCError) error {
	if id == nil {
		id = json.RawMessage("null")
	}
	if e != nil {
		return c.write(frame{JSONRPC: "2.0", ID: id, Error: e})
	}
	r, err := json.Marshal(result)
	if err != nil {
		return c.write(frame{JSONRPC: "2.0", ID: id, Error: rpcErr(CodeInternalError, "encoding the result: %v", err)})
	}
	return c.write(frame{JSONRPC: "2.0", ID: id, Result: r})
}

// call sends a request and decodes its result into out. It returns ctx's error when ctx
// ends first (a late response is dropped), errClosed when the connection ends, and an
// *RPCError when the peer answers with one.
func (c *conn) call(ctx context.Context, method string, params, out any) error {
	p, err := json.Marshal(params)
	if err != nil {
		return err
	}
	ch := make(chan frame, 1)
	c.pmu.Lock()
	if c.closed {
		c.pmu.Unlock()
		return errClosed
	}
	id := strconv.FormatInt(c.next, 10)
	c.next++
	c.pending[id] = ch
	c.pmu.Unlock()
	defer func() {
		c.pmu.Lock()
		delete(c.pending, id)
		c.pmu.Unlock()
	}()
	if err := c.write(frame{JSONRPC: "2.0", ID: json.RawMessage(id), Method: method, Params: p}); err != nil {
		return fmt.Errorf("%w: %v", errClosed, err)
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case f, ok := <-ch:
		if !ok {
			return errClosed
		}
		if f.Error != nil {
			return f.Error
		}
		if out != nil {
			return json.Unmarshal(f.Result, out)
		}
		return nil
	}
}

// deliver hands a response to its waiting call; a response nobody waits for is dropped.
func (c *conn) deliver(f frame) {
	id := string(bytes.TrimSpace(f.ID))
	c.pmu.Lock()
	ch := c.pending[id]
	delete(c.pending, id)
	c.pmu.Unlock()
	if ch != nil {
		ch <- f
	}
}

// shut fails every pending and future outgoing request with errClosed.
func (c *conn) shut() {
	c.pmu.Lock()
	defer c.pmu.Unlock()
	c.closed = true
	for id, ch := range c.pending {
		close(ch)
		delete(c.pending, id)
	}
}

// readFrames calls fn with every line of r (without its newline, blank lines skipped)
// until r ends. A line longer than MaxFrame is passed to fn truncated to nil, so that it
// is answered as a parse error.
func readFrames(r io.Reader, fn func(line []byte)) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var buf []byte
	tooLong := false
	for {
		chunk, err := br.ReadSlice('\n')
		if len(chunk) > 0 && !tooLong {
			buf = append(buf, chunk...)
			if len(buf) > MaxFrame {
				tooLong, buf = true, buf[:0]
			}
		}
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err != nil && !errors.Is(err, io.EOF):
			return err
		}
		line := bytes.TrimSpace(buf)
		switch {
		case tooLong:
			fn(nil)
		case len(line) > 0:
			fn(bytes.Clone(line))
		}
		buf, tooLong = buf[:0], false
		if err != nil {
			return nil
		}
	}
}
