package builtin_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/tools/builtin"
)

// TestClaudeReadNotebook: under the claude-code style Read shows a notebook as its cells
// and gives the hooks Claude Code's {type: "notebook", file: {filePath, cells}}, as the
// engine did for the differential suite's notebook (tools/notebook); dsh's own style
// reads the file as text.
func TestClaudeReadNotebook(t *testing.T) {
	const nb = `{"cells": [{"cell_type": "code", "id": "c1", "metadata": {}, "source": ["print(1)\n"], "outputs": [], "execution_count": null}, {"cell_type": "markdown", "id": "c2", "metadata": {}, "source": ["# Title"]}], "metadata": {"language_info": {"name": "python"}}, "nbformat": 4, "nbformat_minor": 5}` + "\n"
	rt, ws := setup(t, builtin.Options{Style: builtin.StyleClaudeCode})
	path := filepath.Join(ws, "nb.ipynb")
	if err := os.WriteFile(path, []byte(nb), 0o644); err != nil {
		t.Fatal(err)
	}
	r := run(t, rt, "Read", `{"file_path":"`+path+`"}`)
	if want := "<cell id=\"c1\">print(1)\n</cell id=\"c1\">\n<cell id=\"c2\"><cell_type>markdown</cell_type># Title</cell id=\"c2\">"; r.IsError() || text(r) != want {
		t.Errorf("content %q (error %v), want %q", text(r), r.IsError(), want)
	}
	wantValue := `{"type":"notebook","file":{"filePath":"` + path + `","cells":[{"cellType":"code","source":"print(1)\n","cell_id":"c1","language":"python"},{"cellType":"markdown","source":"# Title","cell_id":"c2"}]}}`
	if s, ok := r.Outcome.(dsh.ToolSuccess); !ok || string(s.Value) != wantValue {
		t.Errorf("value %s, want %s", r.Outcome, wantValue)
	}

	// Outputs: a stream's text, an error's name, value and traceback, an image, an output
	// of a type the engine does not show; a cell without an id; another language.
	const outs = `{"cells": [{"cell_type": "code", "source": "x", "execution_count": 3, "outputs": [` +
		`{"output_type": "stream", "name": "stdout", "text": ["a\n", "b"]},` +
		`{"output_type": "execute_result", "data": {"text/plain": "42", "image/png": "iVBO\nRw0K"}},` +
		`{"output_type": "error", "ename": "E", "evalue": "bad", "traceback": ["t1", "t2"]},` +
		`{"output_type": "weird"}]}], "metadata": {"language_info": {"name": "R"}}}`
	if err := os.WriteFile(path, []byte(outs), 0o644); err != nil {
		t.Fatal(err)
	}
	r = run(t, rt, "Read", `{"file_path":"`+path+`"}`)
	c := r.Content()
	if len(c) != 3 {
		t.Fatalf("%d blocks: %+v", len(c), c)
	}
	if got, want := c[0].(dsh.TextBlock).Text, "<cell id=\"cell-0\"><language>R</language>x</cell id=\"cell-0\">\n\na\nb\n\n42"; got != want {
		t.Errorf("first text %q, want %q", got, want)
	}
	if img, ok := c[1].(dsh.ImageBlock); !ok || img.MediaType != "image/png" || img.Data != "iVBORw0K" {
		t.Errorf("image %+v", c[1])
	}
	if got, want := c[2].(dsh.TextBlock).Text, "\nE: bad\nt1\nt2\n\nOutputs of an unknown type are not shown."; got != want {
		t.Errorf("last text %q, want %q", got, want)
	}
	if v := string(r.Outcome.(dsh.ToolSuccess).Value); !strings.Contains(v, `"execution_count":3,"cell_id":"cell-0","language":"R","outputs":[{"output_type":"stream","text":"a\nb"}`) || !strings.Contains(v, `null]`) {
		t.Errorf("value %s", v)
	}

	// Not a notebook's JSON: the engine's words.
	if err := os.WriteFile(path, []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := run(t, rt, "Read", `{"file_path":"`+path+`"}`); !r.IsError() || !strings.Contains(text(r), "Notebook file is not valid JSON") {
		t.Errorf("bad notebook: %q", text(r))
	}

	// dsh's style reads the file as text.
	rt, ws = setup(t, builtin.Options{})
	path = filepath.Join(ws, "nb.ipynb")
	if err := os.WriteFile(path, []byte(nb), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := run(t, rt, "Read", `{"file_path":"`+path+`"}`); !strings.Contains(text(r), `"cells": [`) {
		t.Errorf("dsh style: %q", text(r))
	}
}
