package builtin_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/llm"
	"github.com/dshkit/dsh/runtime/tools"
	"github.com/dshkit/dsh/runtime/tools/builtin"
)

// patchCall runs apply_patch with the patch text (the freeform call's "input").
func patchCall(t *testing.T, o builtin.Options, ws string, patch string) (string, bool) {
	t.Helper()
	o.Workspace, o.Style, o.Model = ws, builtin.StyleCodex, "gpt-5.5"
	rt := setupIn(t, o)
	args, _ := json.Marshal(map[string]string{"input": patch})
	r := run(t, rt, "apply_patch", string(args))
	got := text(r)
	if m := wallTime.FindStringSubmatch(got); m != nil {
		// The wall time is the call's own (a tenth of a second once the machine is slow).
		got = strings.Replace(got, m[0], "Wall time: 0 seconds", 1)
	}
	return got, r.IsError()
}

// wallTime is the wall time of an apply_patch result: seconds to a tenth, "0" without
// a fraction.
var wallTime = regexp.MustCompile(`Wall time: (0|[1-9]\d*|\d+\.\d) seconds`)

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// TestCodexApplyPatch: add, update (chunks with and without context, at the end of the
// file), move and delete, with the summary Codex 0.169.0 writes (differential
// codex/apply-patch).
func TestCodexApplyPatch(t *testing.T) {
	ws := t.TempDir()
	got, failed := patchCall(t, builtin.Options{}, ws, "*** Begin Patch\n*** Add File: a.txt\n+alpha\n+beta\n+gamma\n*** Add File: sub/gone.txt\n+bye\n*** End Patch")
	if failed || got != "Exit code: 0\nWall time: 0 seconds\nOutput:\nSuccess. Updated the following files:\nA a.txt\nA sub/gone.txt\n" {
		t.Fatalf("add: %q (failed %v)", got, failed)
	}
	if s := readFile(t, filepath.Join(ws, "a.txt")); s != "alpha\nbeta\ngamma\n" {
		t.Fatalf("a.txt = %q", s)
	}
	got, failed = patchCall(t, builtin.Options{}, ws, "*** Begin Patch\n*** Update File: a.txt\n@@\n alpha\n-beta\n+BETA\n gamma\n+delta\n*** End of File\n*** Delete File: sub/gone.txt\n*** End Patch")
	if failed || got != "Exit code: 0\nWall time: 0 seconds\nOutput:\nSuccess. Updated the following files:\nM a.txt\nD sub/gone.txt\n" {
		t.Fatalf("update: %q (failed %v)", got, failed)
	}
	if s := readFile(t, filepath.Join(ws, "a.txt")); s != "alpha\nBETA\ngamma\ndelta\n" {
		t.Fatalf("a.txt = %q", s)
	}
	if _, err := os.Stat(filepath.Join(ws, "sub/gone.txt")); !os.IsNotExist(err) {
		t.Fatalf("sub/gone.txt still there: %v", err)
	}
	got, failed = patchCall(t, builtin.Options{}, ws, "*** Begin Patch\n*** Update File: a.txt\n*** Move to: b/b.txt\n@@ alpha\n-BETA\n+beta2\n*** End Patch")
	if failed || !strings.HasSuffix(got, "\nM b/b.txt\n") {
		t.Fatalf("move: %q (failed %v)", got, failed)
	}
	if s := readFile(t, filepath.Join(ws, "b/b.txt")); s != "alpha\nbeta2\ngamma\ndelta\n" {
		t.Fatalf("b/b.txt = %q", s)
	}
	if _, err := os.Stat(filepath.Join(ws, "a.txt")); !os.IsNotExist(err) {
		t.Fatalf("a.txt still there after the move: %v", err)
	}
}

// TestCodexApplyPatchFuzzy: the old lines are found ignoring trailing blanks, then blanks
// at both ends, then typographic punctuation, as Codex seeks them; a heredoc around the
// patch is taken off.
func TestCodexApplyPatchFuzzy(t *testing.T) {
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "f.txt"), []byte("x = 1   \n  y = \u201cq\u201d\nz\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, failed := patchCall(t, builtin.Options{}, ws, "<<'EOF'\n*** Begin Patch\n*** Update File: f.txt\n-x = 1\n+x = 2\n@@\n-y = \"q\"\n+y = 3\n*** End Patch\nEOF")
	if failed {
		t.Fatalf("fuzzy: %q", got)
	}
	if s := readFile(t, filepath.Join(ws, "f.txt")); s != "x = 2\ny = 3\nz\n" {
		t.Fatalf("f.txt = %q", s)
	}
}

// TestCodexApplyPatchBad: Codex 0.169.0's words for patches that do not parse or do not
// apply (differential codex/apply-patch-bad), nothing written when a later hunk fails, and
// dsh's refusal of a path outside the workspace (codex/apply-patch-escape).
func TestCodexApplyPatchBad(t *testing.T) {
	ws := t.TempDir()
	if err := os.MkdirAll(filepath.Join(ws, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "s.txt"), []byte("one\ntwo\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	vf := "apply_patch verification failed: "
	for _, c := range []struct{ patch, want string }{
		{"*** Begin Patch\n*** Frobnicate File: x\n*** End Patch", vf + "invalid hunk at line 2, '*** Frobnicate File: x' is not a valid hunk header. Valid hunk headers: '*** Add File: {path}', '*** Delete File: {path}', '*** Update File: {path}'"},
		{"*** Begin Patch\n*** Add File: x.txt\n+x\n", vf + "invalid patch: The last line of the patch must be '*** End Patch'"},
		{"{\"input\": \"x\"}", vf + "invalid patch: The first line of the patch must be '*** Begin Patch'"},
		{"*** Begin Patch\n*** Add File: s2.txt\none\n*** End Patch", vf + "invalid hunk at line 3, 'one' is not a valid hunk header. Valid hunk headers: '*** Add File: {path}', '*** Delete File: {path}', '*** Update File: {path}'"},
		{"*** Begin Patch\n*** Update File: s.txt\n*** End Patch", vf + "invalid hunk at line 2, Update file hunk for path 's.txt' is empty"},
		{"*** Begin Patch\n*** Update File: s.txt\n@@\n-three\n+four\n*** End Patch", vf + "Failed to find expected lines in " + ws + "/s.txt:\nthree"},
		{"*** Begin Patch\n*** Update File: s.txt\n@@ nothere\n-one\n+ONE\n*** End Patch", vf + "Failed to find context 'nothere' in " + ws + "/s.txt"},
		{"*** Begin Patch\n*** Update File: missing.txt\n@@\n-a\n+b\n*** End Patch", vf + "Failed to read file to update " + ws + "/missing.txt: No such file or directory (os error 2)"},
		{"*** Begin Patch\n*** Delete File: missing.txt\n*** End Patch", vf + "Failed to read " + ws + "/missing.txt: No such file or directory (os error 2)"},
		{"*** Begin Patch\n*** Delete File: sub\n*** End Patch", vf + "Failed to read " + ws + "/sub: path `" + ws + "/sub` is not a file"},
		{"*** Begin Patch\n*** Add File: p.txt\n+p\n*** Update File: s.txt\n@@\n-zzz\n+y\n*** End Patch", vf + "Failed to find expected lines in " + ws + "/s.txt:\nzzz"},
		{"*** Begin Patch\n*** End Patch", "patch rejected: empty patch"},
		{"*** Begin Patch\n*** Add File: ../out.txt\n+out\n*** End Patch", vf + "../out.txt is outside the workspace " + ws},
		{"*** Begin Patch\n*** Add File: " + filepath.Dir(ws) + "/abs.txt\n+out\n*** End Patch", vf + filepath.Dir(ws) + "/abs.txt is outside the workspace " + ws},
		{"*** Begin Patch\n*** Update File: s.txt\n*** Move to: ../moved.txt\n@@\n-one\n+1\n*** End Patch", vf + "../moved.txt is outside the workspace " + ws},
	} {
		got, failed := patchCall(t, builtin.Options{}, ws, c.patch)
		if !failed || got != c.want {
			t.Errorf("%q:\n got %q (failed %v)\nwant %q", c.patch, got, failed, c.want)
		}
	}
	if s := readFile(t, filepath.Join(ws, "s.txt")); s != "one\ntwo\n" {
		t.Errorf("s.txt changed: %q", s)
	}
	for _, p := range []string{filepath.Join(ws, "p.txt"), filepath.Join(ws, "s2.txt"), filepath.Join(filepath.Dir(ws), "out.txt"), filepath.Join(filepath.Dir(ws), "abs.txt"), filepath.Join(filepath.Dir(ws), "moved.txt")} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s was written", p)
		}
	}
}

// TestCodexApplyPatchSymlink: a link inside the workspace that leads outside is refused
// as a path outside the workspace; nothing is written through it.
func TestCodexApplyPatchSymlink(t *testing.T) {
	ws, out := t.TempDir(), t.TempDir()
	if err := os.Symlink(out, filepath.Join(ws, "link")); err != nil {
		t.Fatal(err)
	}
	got, failed := patchCall(t, builtin.Options{}, ws, "*** Begin Patch\n*** Add File: link/x.txt\n+x\n*** End Patch")
	if !failed || !strings.Contains(got, "is outside the workspace") {
		t.Fatalf("got %q (failed %v)", got, failed)
	}
	if ents, _ := os.ReadDir(out); len(ents) != 0 {
		t.Fatalf("written outside: %v", ents)
	}
}

// TestCodexCatalogToolset: a model of Codex's catalog gets apply_patch as a freeform tool
// with the engine's grammar (spec/toolsets/codex.json's rows with "only"); the unknown
// model does not.
func TestCodexCatalogToolset(t *testing.T) {
	names := func(model string) ([]string, map[string]json.RawMessage) {
		defs, err := builtin.Definitions(builtin.Options{Workspace: t.TempDir(), Style: builtin.StyleCodex, Model: model})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		schemas := map[string]json.RawMessage{}
		for _, d := range defs {
			out = append(out, d.Name)
			schemas[d.Name] = d.InputSchema
		}
		return out, schemas
	}
	got, schemas := names("gpt-5.5")
	if !slices.Equal(got, []string{"exec_command", "write_stdin", "apply_patch"}) {
		t.Fatalf("gpt-5.5: %v", got)
	}
	var s map[string]json.RawMessage
	if err := json.Unmarshal(schemas["apply_patch"], &s); err != nil {
		t.Fatal(err)
	}
	var format struct{ Type, Syntax, Definition string }
	if err := json.Unmarshal(s[llm.FreeformKey], &format); err != nil || format.Type != "grammar" || format.Syntax != "lark" || !strings.Contains(format.Definition, `"*** Begin Patch"`) {
		t.Fatalf("apply_patch's format: %s (%v)", s[llm.FreeformKey], err)
	}
	if got, _ := names("mock-model"); slices.Contains(got, "apply_patch") {
		t.Fatalf("mock-model: %v", got)
	}
}

// setupIn is setup in the workspace o names.
func setupIn(t *testing.T, o builtin.Options) *tools.Runtime {
	t.Helper()
	reg := tools.NewRegistry()
	unregister, err := builtin.Register(reg, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(unregister)
	return tools.New(reg, dsh.NewRegistry())
}

// TestCodexEscalationNever: an exec_command asking for unsandboxed execution that no one
// approved is refused in Codex's words (codex exec's approval policy is always never;
// differential codex/escalate-never), and runs nothing.
func TestCodexEscalationNever(t *testing.T) {
	rt, ws := setup(t, builtin.Options{Style: builtin.StyleCodex})
	r := run(t, rt, "exec_command", `{"cmd":"touch ran","sandbox_permissions":"require_escalated","justification":"need"}`)
	want := "approval policy is Never; reject command — you cannot ask for escalated permissions if the approval policy is Never"
	if !r.IsError() || text(r) != want {
		t.Fatalf("got %q (error %v), want %q", text(r), r.IsError(), want)
	}
	if _, err := os.Stat(filepath.Join(ws, "ran")); !os.IsNotExist(err) {
		t.Fatalf("the command ran: %v", err)
	}
	if r := run(t, rt, "exec_command", `{"cmd":"touch ran","sandbox_permissions":"use_default"}`); r.IsError() {
		t.Fatalf("use_default: %s", text(r))
	}
}
