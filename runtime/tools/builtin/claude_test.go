package builtin_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dshkit/dsh/runtime/tools"
	"github.com/dshkit/dsh/runtime/tools/builtin"
)

// TestClaudeToolsetOffers checks that the claude-code style offers exactly the recorded
// rows that name an implementation, in their order, with the engine's descriptions and
// schemas, and fewer to a model the toolset says is offered fewer.
func TestClaudeToolsetOffers(t *testing.T) {
	all, err := builtin.Toolsets()
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(all, func(ts builtin.Toolset) bool { return ts.Style == builtin.StyleClaudeCode })
	if i < 0 {
		t.Fatal("no claude-code toolset")
	}
	ts := all[i]
	// The agent tool is the host's (runtime/subagent): offered only when the host gives it.
	agent := tools.Definition{Run: func(context.Context, *tools.RunContext) (any, error) { return "child", nil }}
	bare, err := builtin.Definitions(builtin.Options{Workspace: t.TempDir(), Style: builtin.StyleClaudeCode})
	if err != nil {
		t.Fatal(err)
	}
	if slices.ContainsFunc(bare, func(d tools.Definition) bool { return d.Name == "Agent" }) {
		t.Error("Agent is offered without a subagent runner")
	}
	for _, model := range []string{ts.Model, "claude-opus-5-5"} {
		defs, err := builtin.Definitions(builtin.Options{Workspace: t.TempDir(), Style: builtin.StyleClaudeCode, Model: model, Agent: agent})
		if err != nil {
			t.Fatal(err)
		}
		var want []builtin.ToolRow
		for _, r := range ts.Tools {
			if r.Impl != "" && !slices.Contains(ts.Models[model].Without, r.Name) {
				for _, o := range ts.Models[model].Tools {
					if o.Name == r.Name {
						r.Description, r.InputSchema = o.Description, o.InputSchema
					}
				}
				want = append(want, r)
			}
		}
		if len(defs) != len(want) {
			t.Fatalf("%s: %d tools, want %d", model, len(defs), len(want))
		}
		for j, d := range defs {
			if d.Name != want[j].Name || d.Description != want[j].Description || !bytes.Equal(d.InputSchema, want[j].InputSchema) {
				t.Errorf("%s: tool %d is %s, want the row of %s as recorded", model, j, d.Name, want[j].Name)
			}
		}
	}
	names := func(model string) []string {
		defs, _ := builtin.Definitions(builtin.Options{Workspace: t.TempDir(), Style: builtin.StyleClaudeCode, Model: model})
		var n []string
		for _, d := range defs {
			n = append(n, d.Name)
		}
		return n
	}
	if got := names("claude-sonnet-4-5"); !slices.Contains(got, "TaskCreate") || !slices.Contains(got, "WebFetch") {
		t.Errorf("sonnet tools %v: want TaskCreate and WebFetch", got)
	}
	if got := names("claude-opus-5-5"); slices.Contains(got, "TaskCreate") || !slices.Contains(got, "NotebookEdit") {
		t.Errorf("opus tools %v: want NotebookEdit and no TaskCreate", got)
	}
	// The engine words Bash otherwise for claude-opus-5-5.
	bash := func(model string) string {
		defs, _ := builtin.Definitions(builtin.Options{Workspace: t.TempDir(), Style: builtin.StyleClaudeCode, Model: model})
		return defs[slices.IndexFunc(defs, func(d tools.Definition) bool { return d.Name == "Bash" })].Description
	}
	if s, o := bash("claude-sonnet-4-5"), bash("claude-opus-5-5"); !strings.HasPrefix(s, "Executes a given bash command") || !strings.HasPrefix(o, "Executes a bash command") {
		t.Errorf("Bash's description: sonnet %.40q, opus %.40q", s, o)
	}
}

// TestClaudeTasks replays the task calls of the differential case tools/tasks: each
// result reads as Claude Code 2.1.328's did (measured).
func TestClaudeTasks(t *testing.T) {
	rt, _ := setup(t, builtin.Options{Style: builtin.StyleClaudeCode})
	for _, step := range []struct{ tool, args, want string }{
		{"TaskList", `{}`, "No tasks found"},
		{"TaskCreate", `{"subject":"first task","description":"do it","activeForm":"Doing it"}`, "Task #1 created successfully: first task"},
		{"TaskCreate", `{"subject":"second task","description":"then this"}`, "Task #2 created successfully: second task"},
		{"TaskUpdate", `{"taskId":"1","status":"in_progress"}`, "Updated task #1 status"},
		{"TaskUpdate", `{"taskId":"2","addBlockedBy":["1"],"owner":"me"}`, "Updated task #2 owner, blockedBy"},
		{"TaskGet", `{"taskId":"2"}`, "Task #2: second task\nStatus: pending\nDescription: then this\nBlocked by: #1"},
		{"TaskGet", `{"taskId":"1"}`, "Task #1: first task\nStatus: in_progress\nDescription: do it\nBlocks: #2"},
		{"TaskList", `{}`, "#1 [in_progress] first task\n#2 [pending] second task (me) [blocked by #1]"},
		{"TaskUpdate", `{"taskId":"1","status":"completed"}`, "Updated task #1 status"},
		{"TaskList", `{}`, "#1 [completed] first task\n#2 [pending] second task (me)"},
		{"TaskUpdate", `{"taskId":"2","status":"deleted"}`, "Updated task #2 deleted"},
		{"TaskGet", `{"taskId":"9"}`, "Task not found"},
		{"TaskUpdate", `{"taskId":"9","status":"completed"}`, "Task not found"},
		{"TaskList", `{}`, "#1 [completed] first task"},
	} {
		r := run(t, rt, step.tool, step.args)
		if r.IsError() || text(r) != step.want {
			t.Fatalf("%s %s: %q (error %v), want %q", step.tool, step.args, text(r), r.IsError(), step.want)
		}
	}
	if r := run(t, rt, "TaskUpdate", `{"taskId":"1","status":"nope"}`); !r.IsError() {
		t.Errorf("a bad status: %q, want a failure", text(r))
	}
	// Each session (each Definitions call) has a list of its own.
	other, _ := setup(t, builtin.Options{Style: builtin.StyleClaudeCode})
	if r := run(t, other, "TaskList", `{}`); text(r) != "No tasks found" {
		t.Errorf("another session's list: %q", text(r))
	}
}

const notebook = `{"cells": [{"cell_type": "code", "id": "c1", "metadata": {}, "source": ["print(1)\n"], "outputs": [], "execution_count": 3}, {"cell_type": "markdown", "id": "c2", "metadata": {}, "source": ["# Title <b>"]}], "metadata": {"language_info": {"name": "python"}}, "nbformat": 4, "nbformat_minor": 5}` + "\n"

func TestClaudeNotebookEdit(t *testing.T) {
	rt, ws := setup(t, builtin.Options{Style: builtin.StyleClaudeCode})
	nb := filepath.Join(ws, "nb.ipynb")
	if err := os.WriteFile(nb, []byte(notebook), 0o644); err != nil {
		t.Fatal(err)
	}
	edit := func(args string) (string, bool) {
		r := run(t, rt, "NotebookEdit", args)
		return text(r), r.IsError()
	}
	if got, bad := edit(`{"notebook_path":"` + nb + `","cell_id":"c1","new_source":"print(2)"}`); bad || got != "Updated cell c1 with print(2)" {
		t.Fatalf("replace: %q %v", got, bad)
	}
	got, bad := edit(`{"notebook_path":"` + nb + `","cell_id":"c1","new_source":"x = 3","cell_type":"code","edit_mode":"insert"}`)
	if bad || !strings.HasPrefix(got, "Inserted cell ") || !strings.HasSuffix(got, " with x = 3") {
		t.Fatalf("insert: %q %v", got, bad)
	}
	newID := strings.TrimSuffix(strings.TrimPrefix(got, "Inserted cell "), " with x = 3")
	if got, bad := edit(`{"notebook_path":"` + nb + `","cell_id":"c2","new_source":"","edit_mode":"delete"}`); bad || got != "Deleted cell c2" {
		t.Fatalf("delete: %q %v", got, bad)
	}
	data, _ := os.ReadFile(nb)
	want := "{\n \"cells\": [\n  {\n   \"cell_type\": \"code\",\n   \"id\": \"c1\",\n   \"metadata\": {},\n   \"source\": \"print(2)\",\n   \"outputs\": [],\n   \"execution_count\": null\n  },\n" +
		"  {\n   \"cell_type\": \"code\",\n   \"id\": \"" + newID + "\",\n   \"source\": \"x = 3\",\n   \"metadata\": {},\n   \"execution_count\": null,\n   \"outputs\": []\n  }\n ],\n" +
		" \"metadata\": {\n  \"language_info\": {\n   \"name\": \"python\"\n  }\n },\n \"nbformat\": 4,\n \"nbformat_minor\": 5\n}\n"
	if string(data) != want {
		t.Errorf("notebook:\n%s\nwant:\n%s", data, want)
	}
	// The final newline is the notebook's: one without keeps none (tools/notebook: the
	// engine kept the one the notebook had).
	if err := os.WriteFile(nb, []byte(strings.TrimSuffix(notebook, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, bad := edit(`{"notebook_path":"` + nb + `","cell_id":"c1","new_source":"print(2)"}`); bad {
		t.Fatal("replace in a notebook without a final newline failed")
	}
	if data, _ := os.ReadFile(nb); strings.HasSuffix(string(data), "\n") || !strings.HasSuffix(string(data), "}") {
		t.Errorf("a notebook without a final newline got one: %q", data[len(data)-5:])
	}
	if err := os.WriteFile(nb, []byte(notebook), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ args, want string }{
		{`{"notebook_path":"` + nb + `","cell_id":"zz","new_source":"y"}`, `<tool_use_error>Cell with ID "zz" not found in notebook.</tool_use_error>`},
		{`{"notebook_path":"` + filepath.Join(ws, "a.txt") + `","cell_id":"c1","new_source":"y"}`, "<tool_use_error>File must be a Jupyter notebook (.ipynb file). For editing other file types, use the FileEdit tool.</tool_use_error>"},
		{`{"notebook_path":"` + nb + `","new_source":"y"}`, "<tool_use_error>Cell ID must be specified when not inserting a new cell.</tool_use_error>"},
		{`{"notebook_path":"../out.ipynb","cell_id":"c1","new_source":"y"}`, "outside the workspace"},
	} {
		if got, bad := edit(tc.args); !bad || !strings.Contains(got, tc.want) {
			t.Errorf("%s: %q (error %v), want a failure with %q", tc.args, got, bad, tc.want)
		}
	}
	if err := os.WriteFile(nb, []byte("not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, bad := edit(`{"notebook_path":"` + nb + `","cell_id":"c1","new_source":"y"}`); !bad || !strings.Contains(got, "not valid JSON") {
		t.Errorf("a broken notebook: %q %v", got, bad)
	}
}

func TestClaudeWebFetch(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/page":
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, "<html><head><title>t</title><style>p{}</style></head><body><h1>Hello</h1><p>one &amp; two</p><script>x()</script></body></html>")
		case "/long":
			w.Header().Set("Content-Type", "text/plain")
			fmt.Fprint(w, strings.Repeat("a", 100010))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	// A client of the test's own: the default one refuses loopback addresses. An http URL
	// is fetched as https, as Claude Code upgrades it.
	rt, _ := setup(t, builtin.Options{Style: builtin.StyleClaudeCode, HTTPClient: srv.Client()})
	if r := run(t, rt, "WebFetch", `{"url":"`+strings.Replace(srv.URL, "https:", "http:", 1)+`/page","prompt":"what"}`); r.IsError() || text(r) != "Hello\n\none & two" {
		t.Fatalf("an http URL: %q %v", text(r), r.IsError())
	}
	r := run(t, rt, "WebFetch", `{"url":"`+srv.URL+`/page","prompt":"what"}`)
	if r.IsError() || text(r) != "Hello\n\none & two" {
		t.Fatalf("page: %q %v", text(r), r.IsError())
	}
	r = run(t, rt, "WebFetch", `{"url":"`+srv.URL+`/long","prompt":"what"}`)
	if !strings.HasSuffix(text(r), "call WebFetch again with offset 100000 to read on.]") {
		t.Errorf("long page: %q", text(r)[len(text(r))-120:])
	}
	if r = run(t, rt, "WebFetch", `{"url":"`+srv.URL+`/long","prompt":"what","offset":100000}`); text(r) != "aaaaaaaaaa" {
		t.Errorf("offset: %q", text(r))
	}
	if r = run(t, rt, "WebFetch", `{"url":"`+srv.URL+`/none","prompt":"what"}`); !r.IsError() || text(r) != "Request failed with status code 404" {
		t.Errorf("404: %q %v", text(r), r.IsError())
	}
	def, _ := setup(t, builtin.Options{Style: builtin.StyleClaudeCode})
	for _, tc := range []struct{ url, code, want string }{
		{srv.URL + "/page", builtin.CodeFetchRefused, "not a public address"},
		{"http://[::1]:9/", builtin.CodeFetchRefused, "not a public address"},
		{"http://localhost:9/", builtin.CodeFetchRefused, "WebFetch cannot fetch localhost or other hostnames without a dot."},
		{"file:///etc/passwd", builtin.CodeBadInput, "want an absolute http or https URL"},
		{"not a url", builtin.CodeBadInput, "want an absolute http or https URL"},
	} {
		r := run(t, def, "WebFetch", `{"url":"`+tc.url+`","prompt":"what"}`)
		if errCode(r) != tc.code || !strings.Contains(text(r), tc.want) || strings.HasPrefix(text(r), "Error: ") {
			t.Errorf("%s: %q (%s), want %s with %q", tc.url, text(r), errCode(r), tc.code, tc.want)
		}
	}
}

// TestClaudeUnsupportedInputs checks that the inputs of Claude Code's schemas dsh does
// not honour fail, saying so, and run nothing.
func TestClaudeUnsupportedInputs(t *testing.T) {
	rt, ws := setup(t, builtin.Options{Style: builtin.StyleClaudeCode})
	r := run(t, rt, "Bash", `{"command":"touch bg","run_in_background":true}`)
	if errCode(r) != builtin.CodeUnsupported || !strings.Contains(text(r), "run_in_background") {
		t.Errorf("run_in_background: %q (%s)", text(r), errCode(r))
	}
	if _, err := os.Stat(filepath.Join(ws, "bg")); err == nil {
		t.Error("run_in_background ran the command")
	}
	if r := run(t, rt, "Bash", `{"command":"echo hi","timeout":1500.5,"dangerouslyDisableSandbox":true}`); r.IsError() || text(r) != "hi\n" {
		t.Errorf("unsandboxed, dangerouslyDisableSandbox and a fractional timeout: %q %v", text(r), r.IsError())
	}
	if err := os.WriteFile(filepath.Join(ws, "a.txt"), []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := run(t, rt, "Read", `{"file_path":"a.txt","pages":"1-2"}`); errCode(r) != builtin.CodeUnsupported {
		t.Errorf("pages: %q (%s)", text(r), errCode(r))
	}
	big := strings.Repeat("line\n", 60000) // 300000 bytes: over ReadMaxBytes
	if err := os.WriteFile(filepath.Join(ws, "big.txt"), []byte(big), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := run(t, rt, "Read", `{"file_path":"big.txt"}`); errCode(r) != builtin.CodeFileTooLarge {
		t.Errorf("a large file: %s", errCode(r))
	}
	if r := run(t, rt, "Read", `{"file_path":"big.txt","allow_large":true}`); r.IsError() {
		t.Errorf("allow_large: %q", text(r)[:100])
	}
}
