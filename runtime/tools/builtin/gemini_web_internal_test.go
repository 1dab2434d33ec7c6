package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/dshkit/dsh/runtime/tools"
)

// TestWebFetchLocal: web_fetch against a local server (the refusal of loopback lifted
// for the test): the page's text in a <source> element, a page that fails beside one that
// does not, and a failure of every page.
func TestWebFetchLocal(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/page":
			if r.UserAgent() != webFetchUserAgent {
				http.Error(w, "bad agent", http.StatusBadRequest)
				return
			}
			w.Header().Set("Content-Type", "text/html")
			_, _ = w.Write([]byte("<html><head><title>T</title><script>x()</script></head><body><h1>Hello &amp; welcome</h1><p>Some <b>text</b> <img src=x></p></body></html>"))
		case "/plain":
			w.Header().Set("Content-Type", "text/plain")
			_, _ = w.Write([]byte("a < b"))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	f := webFetcher{blocked: func(context.Context, string) bool { return false }, client: srv.Client()}
	ctx := context.Background()

	r, err := f.run(ctx, geminiWebFetchInput{Prompt: "Summarize " + srv.URL + "/page and " + srv.URL + "/plain/"})
	if err != nil {
		t.Fatal(err)
	}
	want := "<untrusted_context>\n<source url=\"" + srv.URL + "/page\">\nHello &amp; welcome\n\nSome text\n</source>\n" +
		"<source url=\"" + srv.URL + "/plain\">\na &lt; b\n</source>\n</untrusted_context>"
	if r.LLMContent != want {
		t.Errorf("llmContent = %q\nwant %q", r.LLMContent, want)
	}
	if r.ReturnDisplay != "Content for 2 URL(s) processed using fallback fetch." {
		t.Errorf("returnDisplay = %v", r.ReturnDisplay)
	}

	r, err = f.run(ctx, geminiWebFetchInput{Prompt: "Read " + srv.URL + "/missing and " + srv.URL + "/plain"})
	if err != nil || !strings.Contains(r.LLMContent, "<source url=\""+srv.URL+"/missing\">\nError: Request failed with status code 404 Not Found\n</source>") {
		t.Errorf("one page missing: %q %v", r.LLMContent, err)
	}

	_, err = f.run(ctx, geminiWebFetchInput{Prompt: "Read " + srv.URL + "/missing"})
	if want := "All fallback fetch attempts failed: " + srv.URL + "/missing: Request failed with status code 404 Not Found"; err == nil || err.Error() != want {
		t.Errorf("every page missing: %v, want %q", err, want)
	}
}

// TestWebFetchRefuses: the engine's checks of the prompt and its refusal of loopback,
// private and local hosts, by name and at the dial (a name resolved or redirected to
// such an address).
func TestWebFetchRefuses(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte("secret"))
	}))
	defer srv.Close()
	f := newWebFetcher()
	ctx := context.Background()
	for prompt, want := range map[string]string{
		"":                              "The 'prompt' parameter cannot be empty and must contain URL(s) and instructions.",
		"Summarize nothing":             "The 'prompt' must contain at least one valid URL (starting with http:// or https://).",
		"Summarize ftp://example.com/x": "Error(s) in prompt URLs:\n- Unsupported protocol in URL: \"ftp://example.com/x\". Only http and https are supported.",
		"Read " + srv.URL:               "All requested URLs were skipped: [Blocked Host] " + srv.URL + "/",
		"Read http://localhost:9/a http://10.1.2.3/ http://[::1]:9/ http://169.254.169.254/latest http://x.internal/": "All requested URLs were skipped: [Blocked Host] http://localhost:9/a, [Blocked Host] http://10.1.2.3/, [Blocked Host] http://[::1]:9/, [Blocked Host] http://169.254.169.254/latest, [Blocked Host] http://x.internal/",
	} {
		_, err := f.run(ctx, geminiWebFetchInput{Prompt: prompt})
		if err == nil || err.Error() != want {
			t.Errorf("%q: %v, want %q", prompt, err, want)
		}
	}
	// A host the name check let through still cannot be dialled at a loopback address.
	open := webFetcher{blocked: func(context.Context, string) bool { return false }, client: f.client}
	_, err := open.run(ctx, geminiWebFetchInput{Prompt: "Read " + srv.URL + "/x"})
	var te *tools.Error
	if !errors.As(err, &te) || !strings.Contains(err.Error(), "Access to blocked or private host 127.0.0.1 is not allowed.") {
		t.Errorf("dial to loopback: %v", err)
	}
}

// TestWriteTodos: the list numbered with its statuses, cleared, and the engine's checks.
func TestWriteTodos(t *testing.T) {
	raw := func(s ...string) *[]json.RawMessage {
		out := make([]json.RawMessage, len(s))
		for i, v := range s {
			out[i] = json.RawMessage(v)
		}
		return &out
	}
	ctx := context.Background()
	r, err := runGeminiWriteTodos(ctx, geminiTodosInput{Todos: raw(`{"description":"look","status":"completed"}`, `{"description":"change","status":"in_progress"}`)})
	if want := "Successfully updated the todo list. The current list is now:\n1. [completed] look\n2. [in_progress] change"; err != nil || r.LLMContent != want {
		t.Errorf("list: %q %v", r.LLMContent, err)
	}
	if r, err := runGeminiWriteTodos(ctx, geminiTodosInput{Todos: raw()}); err != nil || r.LLMContent != "Successfully cleared the todo list." {
		t.Errorf("cleared: %q %v", r.LLMContent, err)
	}
	for in, want := range map[*[]json.RawMessage]string{
		nil:        "`todos` parameter must be an array",
		raw(`"x"`): "Each todo item must be an object",
		raw(`{"description":" ","status":"pending"}`):                                                   "Each todo must have a non-empty description string",
		raw(`{"description":"a","status":"done"}`):                                                      "Each todo must have a valid status (pending, in_progress, completed, cancelled, blocked)",
		raw(`{"description":"a","status":"in_progress"}`, `{"description":"b","status":"in_progress"}`): `Invalid parameters: Only one task can be "in_progress" at a time.`,
	} {
		if _, err := runGeminiWriteTodos(ctx, geminiTodosInput{Todos: in}); err == nil || err.Error() != want {
			t.Errorf("%v: %v, want %q", in, err, want)
		}
	}
}
