package builtin_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dshkit/dsh/runtime/tools/builtin"
	"github.com/dshkit/dsh/spec"
)

// execHeader is Codex's exec_command header, as the engine sends it (measured on 0.169.0:
// differential cases all/exit0 and codex/write-stdin-*).
var execHeader = regexp.MustCompile(`^Chunk ID: [0-9a-f]{6}\nWall time: \d+\.\d{4} seconds\nProcess (exited with code|running with session ID) (\d+)\nOriginal token count: (\d+)\nOutput:\n`)

// chunk splits an exec_command or write_stdin text into its status ("exited" or
// "running"), the code or session id, the token count and the output.
func chunk(t *testing.T, got string) (status string, n, tokens int, out string) {
	t.Helper()
	m := execHeader.FindStringSubmatch(got)
	if m == nil {
		t.Fatalf("not an exec chunk: %q", got)
	}
	n, _ = strconv.Atoi(m[2])
	tokens, _ = strconv.Atoi(m[3])
	status = "exited"
	if m[1] != "exited with code" {
		status = "running"
	}
	return status, n, tokens, got[len(m[0]):]
}

// TestCodexExec: exec_command's output under Codex's header; a non-zero exit is a success;
// stdout and stderr merge in order; workdir is taken under the workspace.
func TestCodexExec(t *testing.T) {
	rt, ws := setup(t, builtin.Options{Style: builtin.StyleCodex})
	if err := os.Mkdir(filepath.Join(ws, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args, out  string
		code, toks int
	}{
		{`{"cmd":"echo bad >&2; exit 3"}`, "bad\n", 3, 1},
		{`{"cmd":"echo out1"}`, "out1\n", 0, 2},
		{`{"cmd":"true"}`, "", 0, 0},
		{`{"cmd":"echo a; echo b >&2; echo c"}`, "a\nb\nc\n", 0, 2},
		{`{"cmd":"basename \"$PWD\"","workdir":"sub"}`, "sub\n", 0, 1},
	} {
		r := run(t, rt, "exec_command", c.args)
		if r.IsError() {
			t.Fatalf("%s: %s", c.args, text(r))
		}
		status, code, toks, out := chunk(t, text(r))
		if status != "exited" || code != c.code || toks != c.toks || out != c.out {
			t.Errorf("%s = %q", c.args, text(r))
		}
	}
	if r := run(t, rt, "exec_command", `{"cmd":"true","workdir":"nowhere"}`); !r.IsError() || errCode(r) != builtin.CodeBadInput {
		t.Errorf("missing workdir: %+v", r.Outcome)
	}
}

// TestCodexExecSession: a command still running after its yield time answers with a
// session; write_stdin polls it to its end, after which the session is gone; writing to a
// command run without tty fails in Codex's words, and with tty reaches its stdin.
func TestCodexExecSession(t *testing.T) {
	rt, _ := setup(t, builtin.Options{Style: builtin.StyleCodex})
	r := run(t, rt, "exec_command", `{"cmd":"echo first; sleep 1; echo second","yield_time_ms":500}`)
	status, id, _, out := chunk(t, text(r))
	if status != "running" || id < 1000 || id > 99999 || out != "first\n" {
		t.Fatalf("first chunk: %q", text(r))
	}
	start := time.Now()
	r = run(t, rt, "write_stdin", fmt.Sprintf(`{"session_id":%d,"chars":"","yield_time_ms":20000}`, id))
	status, code, _, out := chunk(t, text(r))
	if status != "exited" || code != 0 || out != "second\n" {
		t.Errorf("poll: %q", text(r))
	}
	if time.Since(start) > 5*time.Second {
		t.Errorf("the poll waited %s for a command that ended within a second", time.Since(start))
	}
	r = run(t, rt, "write_stdin", fmt.Sprintf(`{"session_id":%d,"chars":"x"}`, id))
	if want := fmt.Sprintf("write_stdin failed: Unknown process id %d", id); !r.IsError() || text(r) != want || errCode(r) != builtin.CodeExecSession {
		t.Errorf("finished session: %q (error %v), want %q", text(r), r.IsError(), want)
	}
	if r := run(t, rt, "write_stdin", `{"session_id":4242,"chars":""}`); text(r) != "write_stdin failed: Unknown process id 4242" {
		t.Errorf("unknown session: %q", text(r))
	}

	// Without tty the command's stdin is closed: read sees its end at once.
	r = run(t, rt, "exec_command", `{"cmd":"read x; echo got $x","yield_time_ms":2000}`)
	if status, _, _, out := chunk(t, text(r)); status != "exited" || out != "got\n" {
		t.Errorf("read without tty: %q", text(r))
	}
	r = run(t, rt, "exec_command", `{"cmd":"sleep 2","yield_time_ms":250}`)
	_, id, _, _ = chunk(t, text(r))
	r = run(t, rt, "write_stdin", fmt.Sprintf(`{"session_id":%d,"chars":"abc\n"}`, id))
	if text(r) != "write_stdin failed: stdin is closed for this session; rerun exec_command with tty=true to keep stdin open" {
		t.Errorf("write without tty: %q", text(r))
	}

	r = run(t, rt, "exec_command", `{"cmd":"read x; echo got $x","tty":true,"yield_time_ms":300}`)
	status, id, _, _ = chunk(t, text(r))
	if status != "running" {
		t.Fatalf("read with tty: %q", text(r))
	}
	r = run(t, rt, "write_stdin", fmt.Sprintf(`{"session_id":%d,"chars":"abc\n","yield_time_ms":3000}`, id))
	if status, _, _, out := chunk(t, text(r)); status != "exited" || out != "got abc\n" {
		t.Errorf("write with tty: %q", text(r))
	}
}

// TestCodexToolsetDefinitions: the codex dialect's tools are the rows of
// spec/toolsets/codex.json that name an implementation, in their order, with the name,
// description and input schema recorded from the engine.
func TestCodexToolsetDefinitions(t *testing.T) {
	data, err := spec.FS.ReadFile("toolsets/codex.json")
	if err != nil {
		t.Fatal(err)
	}
	var ts builtin.Toolset
	if err := json.Unmarshal(data, &ts); err != nil {
		t.Fatal(err)
	}
	defs, err := builtin.Definitions(builtin.Options{Workspace: t.TempDir(), Style: builtin.StyleCodex})
	if err != nil {
		t.Fatal(err)
	}
	var want []builtin.ToolRow
	for _, r := range ts.Tools {
		// The agent functions are the host's (Options.Agents): none here; nor MCP servers,
		// without which the resource tools are not offered.
		if r.Impl != "" && r.Only == nil && !builtin.AgentImpl(r.Impl) && !r.WithMCP {
			want = append(want, r)
		}
	}
	if len(defs) != len(want) || len(want) < 2 {
		t.Fatalf("%d definitions, %d rows with an implementation", len(defs), len(want))
	}
	for i, d := range defs {
		var a, b bytes.Buffer
		_ = json.Compact(&a, d.InputSchema)
		_ = json.Compact(&b, want[i].InputSchema)
		if d.Name != want[i].Name || d.Description != want[i].Description || a.String() != b.String() {
			t.Errorf("definition %d: %s %q %s, want the row's %s %q %s", i, d.Name, d.Description, a.String(), want[i].Name, want[i].Description, b.String())
		}
	}
	if defs[0].Name != "exec_command" || defs[1].Name != "write_stdin" {
		t.Errorf("tools %s, %s: want exec_command and write_stdin first, as Codex lists them", defs[0].Name, defs[1].Name)
	}
}

// TestCodexExecTruncate: output over the call's max_output_tokens keeps the budget's first
// and last halves around "…N tokens truncated…", after a warning with the original token
// count and the line count; over the default budget (10000 bytes) the marker counts chars.
// The figures are Codex 0.169.0's for the same commands (differential codex/exec-truncate).
func TestCodexExecTruncate(t *testing.T) {
	rt, _ := setup(t, builtin.Options{Style: builtin.StyleCodex})
	r := run(t, rt, "exec_command", `{"cmd":"seq 1 400","max_output_tokens":50}`)
	_, _, toks, out := chunk(t, text(r))
	want := "Warning: truncated output (original token count: 373)\nTotal output lines: 400\n\n" +
		"1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13\n14\n15\n16\n17\n18\n19\n20\n21\n22\n23\n24\n25\n26\n27\n28\n29\n30\n31\n32\n33\n34\n35\n36\n3" +
		"…323 tokens truncated…" +
		"376\n377\n378\n379\n380\n381\n382\n383\n384\n385\n386\n387\n388\n389\n390\n391\n392\n393\n394\n395\n396\n397\n398\n399\n400\n"
	if toks != 373 || out != want {
		t.Errorf("seq 1 400 in 50 tokens: %d tokens\n%q\nwant\n%q", toks, out, want)
	}
	r = run(t, rt, "exec_command", `{"cmd":"seq 1 20000"}`)
	_, _, toks, out = chunk(t, text(r))
	head, tail, ok := strings.Cut(out, "…98894 chars truncated…")
	if toks != 27224 || !ok || !strings.HasPrefix(head, "Warning: truncated output (original token count: 27224)\nTotal output lines: 20000\n\n1\n2\n") ||
		len(head) != len("Warning: truncated output (original token count: 27224)\nTotal output lines: 20000\n\n")+5000 || len(tail) != 5000 || !strings.HasSuffix(tail, "19999\n20000\n") {
		t.Errorf("seq 1 20000: %d tokens, %d+%d bytes around the marker (found %v)", toks, len(head), len(tail), ok)
	}
	r = run(t, rt, "exec_command", `{"cmd":"seq 1 3","max_output_tokens":50}`)
	if _, _, toks, out := chunk(t, text(r)); toks != 2 || out != "1\n2\n3\n" {
		t.Errorf("within the budget: %q", text(r))
	}
}
