package mcp_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dshkit/dsh/bridges/mcp"
)

// A server's configured headers go to its origin only: a redirect to another origin is
// refused, naming the server, and the other origin receives nothing.
func TestHTTPRedirectToAnotherOriginIsRefused(t *testing.T) {
	var (
		mu   sync.Mutex
		seen []string // the configured headers the other origin received
		hits int
	)
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits++
		for _, h := range []string{"Authorization", "X-Token"} {
			if v := r.Header.Get(h); v != "" {
				seen = append(seen, h+": "+v)
			}
		}
		mu.Unlock()
		sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return fakeServer() }, nil).ServeHTTP(w, r)
	}))
	t.Cleanup(other.Close)
	home := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	t.Cleanup(home.Close)
	_, set, errs := mount(t, mcp.Options{StartTimeout: 10 * time.Second}, mcp.ServerConfig{Name: "web", Type: mcp.TypeHTTP, URL: home.URL + "/mcp",
		Headers: map[string]string{"Authorization": "Bearer s3cret", "X-Token": "t0ken"}, Source: "test"})
	mu.Lock()
	defer mu.Unlock()
	if len(seen) > 0 || hits > 0 {
		t.Errorf("the other origin received %d request(s), with the configured headers %q", hits, seen)
	}
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), `MCP server "web"`) || !strings.Contains(errs[0].Error(), "redirected to another origin") {
		t.Fatalf("errors = %v, want one naming the server and the refused redirect", errs)
	}
	if len(set.Servers()) != 0 {
		t.Errorf("servers mounted: %v", set.Servers())
	}
}

// A redirect within the origin is followed, with the headers.
func TestHTTPRedirectWithinTheOriginIsFollowed(t *testing.T) {
	var got atomic.Value
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return fakeServer() }, nil)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/old" {
			http.Redirect(w, r, "/mcp", http.StatusPermanentRedirect)
			return
		}
		if v := r.Header.Get("X-Token"); v != "" {
			got.Store(v)
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	rt, _, errs := mount(t, mcp.Options{}, mcp.ServerConfig{Name: "web", Type: mcp.TypeHTTP, URL: srv.URL + "/old",
		Headers: map[string]string{"X-Token": "s3cret"}, Source: "test"})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if r := call(t, rt, "mcp__web__echo", `{"text":"hi"}`); r.IsError() || text(r) != "echo: hi" {
		t.Fatalf("echo: %q", text(r))
	}
	if got.Load() != "s3cret" {
		t.Errorf("header at the redirect's target = %v", got.Load())
	}
}

// rawServer is a streamable-HTTP MCP server written by hand, so that it can misbehave:
// it answers initialize, accepts notifications, and hands every other request to
// answer, which writes the whole HTTP response.
func rawServer(t *testing.T, answer func(w http.ResponseWriter, method string, id json.RawMessage, params json.RawMessage)) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			http.Error(w, "no stream", http.StatusMethodNotAllowed)
			return
		}
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		if err := json.NewDecoder(r.Body).Decode(&msg); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		switch {
		case msg.ID == nil:
			w.WriteHeader(http.StatusAccepted)
		case msg.Method == "initialize":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"raw","version":"1"}}}`, msg.ID)
		default:
			answer(w, msg.Method, msg.ID, msg.Params)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// endless writes prefix and then x's until the client stops reading or limit bytes are
// written (a safety net: the stream is endless as far as dsh can tell); it returns the
// bytes written.
func endless(w http.ResponseWriter, prefix string, limit int64) int64 {
	n, _ := io.WriteString(w, prefix)
	written := int64(n)
	chunk := bytes.Repeat([]byte("x"), 64<<10)
	for written < limit {
		n, err := w.Write(chunk)
		written += int64(n)
		if err != nil {
			break
		}
	}
	return written
}

// A tool result without end, as one JSON body or as one server-sent event, is read up to
// Options.MaxMessageBytes and no further: the call fails with MCP_RESULT_TOO_LARGE naming
// the server, and the session goes on.
func TestEndlessHTTPResultIsBounded(t *testing.T) {
	const safety = 256 << 20 // what the server writes at most if nothing stops it
	for _, kind := range []string{"json", "sse"} {
		t.Run(kind, func(t *testing.T) {
			var written atomic.Int64
			srv := rawServer(t, func(w http.ResponseWriter, method string, id, _ json.RawMessage) {
				switch method {
				case "tools/list":
					w.Header().Set("Content-Type", "application/json")
					fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"huge","inputSchema":{"type":"object"}}]}}`, id)
				case "tools/call":
					body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"`, id)
					if kind == "sse" {
						w.Header().Set("Content-Type", "text/event-stream")
						body = "event: message\ndata: " + body
					} else {
						w.Header().Set("Content-Type", "application/json")
					}
					written.Store(endless(w, body, safety))
				default:
					http.Error(w, "unknown method", http.StatusBadRequest)
				}
			})
			rt, _, errs := mount(t, mcp.Options{}, mcp.ServerConfig{Name: "big", Type: mcp.TypeHTTP, URL: srv.URL, Source: "test"})
			if len(errs) > 0 {
				t.Fatal(errs)
			}
			r := call(t, rt, "mcp__big__huge", `{}`)
			if code := failureCode(t, r); code != mcp.CodeResultTooLarge {
				t.Fatalf("code = %q (%q), want %s", code, text(r), mcp.CodeResultTooLarge)
			}
			if !strings.Contains(text(r), `MCP server "big"`) || !strings.Contains(text(r), "16777216 bytes") {
				t.Errorf("the error does not name the server and the cap: %q", text(r))
			}
			srv.CloseClientConnections()
			// The server's writes end once dsh stops reading: what it got out is the cap
			// plus what the socket buffers hold, nowhere near the stream's length.
			deadline := time.Now().Add(10 * time.Second)
			for written.Load() == 0 && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			if w := written.Load(); w == 0 || w > 2*mcp.DefaultMaxMessageBytes {
				t.Errorf("the server wrote %d bytes of the result; dsh should have stopped reading after %d", w, mcp.DefaultMaxMessageBytes)
			}
		})
	}
}

// A server that answers tools/list with a nextCursor forever, or with tools without
// end, is not mounted: its listing is bounded in pages and in bytes, and the error names
// the server.
func TestEndlessToolListIsBounded(t *testing.T) {
	for _, tc := range []struct {
		name, want string
		desc       int
	}{
		{"pages", "still paging after 100 pages", 10},
		{"bytes", "tools are over 1048576 bytes", 64 << 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var pages atomic.Int64
			srv := rawServer(t, func(w http.ResponseWriter, method string, id, _ json.RawMessage) {
				if method != "tools/list" {
					http.Error(w, "unknown method", http.StatusBadRequest)
					return
				}
				n := pages.Add(1)
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"t%d","description":%q,"inputSchema":{"type":"object"}}],"nextCursor":"c%d"}}`,
					id, n, strings.Repeat("d", tc.desc), n)
			})
			o := mcp.Options{StartTimeout: 20 * time.Second, MaxToolListBytes: 1 << 20}
			_, set, errs := mount(t, o, mcp.ServerConfig{Name: "pager", Type: mcp.TypeHTTP, URL: srv.URL, Source: "test"})
			if len(errs) != 1 || !strings.Contains(errs[0].Error(), `mcp server "pager"`) || !strings.Contains(errs[0].Error(), tc.want) {
				t.Fatalf("errors = %v, want one naming the server and %q", errs, tc.want)
			}
			if len(set.Servers()) != 0 || len(set.Definitions()) != 0 {
				t.Errorf("mounted: %v, %d tools", set.Servers(), len(set.Definitions()))
			}
			if n := pages.Load(); n > mcp.DefaultMaxToolPages {
				t.Errorf("%d pages served, more than the cap of %d", n, mcp.DefaultMaxToolPages)
			}
		})
	}
}
