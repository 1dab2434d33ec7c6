package gen_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/dshkit/dsh/gen"
	"github.com/dshkit/dsh/spec"
)

// specCopy writes the embedded spec tree to a temporary directory, plus extra files
// (relative path → content), and returns the directory.
func specCopy(t *testing.T, extra map[string]string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "spec")
	err := fs.WalkDir(spec.FS, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := spec.FS.ReadFile(p)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(p)), 0o755); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dir, p), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	for p, content := range extra {
		if err := os.WriteFile(filepath.Join(dir, p), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestBadScenarios: a scenario naming an unknown behaviour, extension point, decision kind
// or session event type fails loading with the scenario's CUE position.
func TestBadScenarios(t *testing.T) {
	for name, c := range map[string]struct{ scenario, want string }{
		"unknown behaviour": {
			`{refs: ["x"], setup: listeners: [{point: "tools/pre-execute", do: [{kind: "jump"}]}], run: [], expect: {}}`,
			`^spec/conformance/zz_bad\.cue:\d+:\d+: .*_scenarios\."zz-bad"\.setup\.listeners\.0\.do\.0`,
		},
		"unknown extension point": {
			`{refs: ["x"], setup: listeners: [{point: "tools/pre-exec", do: [{kind: "next"}]}], run: [], expect: {}}`,
			`^spec/conformance/zz_bad\.cue:5:2: scenario "zz-bad": setup\.listeners\[0\]\.point: unknown extension point "tools/pre-exec"`,
		},
		"unknown decision kind": {
			`{refs: ["x"], setup: listeners: [{point: "tools/pre-execute", do: [{kind: "decide", decision: {kind: "maybe"}}]}], run: [], expect: {}}`,
			`^spec/conformance/zz_bad\.cue:5:2: scenario "zz-bad": setup\.listeners\[0\]\.do\[0\]\.decision: "maybe" is not a kind of PreToolDecision`,
		},
		"decision without its required field": {
			`{refs: ["x"], setup: listeners: [{point: "tools/pre-execute", do: [{kind: "decide", decision: {kind: "deny"}}]}], run: [], expect: {}}`,
			`needs field "reason"`,
		},
		"unknown event type": {
			`{refs: ["x"], run: [], expect: log: ["turn/start", "turn/finish"]}`,
			`^spec/conformance/zz_bad\.cue:5:2: scenario "zz-bad": expect\.log\[1\]: unknown session event type "turn/finish"`,
		},
	} {
		t.Run(name, func(t *testing.T) {
			dir := specCopy(t, map[string]string{"conformance/zz_bad.cue": "package conformance\n\n_scenarios: {\n\t// zz-bad is broken on purpose.\n\t\"zz-bad\": " + c.scenario + "\n}\n"})
			_, err := gen.Load(dir, "spec", gen.DefaultLayout)
			if err == nil {
				t.Fatal("loaded a bad scenario")
			}
			if !regexp.MustCompile(c.want).MatchString(err.Error()) {
				t.Errorf("error:\n%v\nwant a match for %q", err, c.want)
			}
		})
	}
}

// TestBadBridgeTable: a table naming an unknown point, wire type or output path fails
// loading with the table's CUE position.
func TestBadBridgeTable(t *testing.T) {
	wantLoadErrors(t, "codex.cue", []string{
		`contexts: \["hookSpecificOutput\.additionalContext"\]`, `contexts: ["hookSpecificOutput.additionalContxt"]`,
		`point:\s+"tools/post-execute"`, `point: "tools/post-exec"`,
	},
		`spec/bridges/codex\.cue:\d+:\d+: bridge "codex" event "PostToolUse": unknown extension point "tools/post-exec"`,
		`spec/bridges/codex\.cue:\d+:\d+: bridge "codex" event "\w+": "hookSpecificOutput\.additionalContxt" is not a field path of \w+Output`,
	)
}

// TestBadAlsoEntry: an also entry at compaction/post-compact of an event that is not at
// agent/session-start, or whose before names no event of the table at its point, fails
// loading with the row's CUE position.
func TestBadAlsoEntry(t *testing.T) {
	wantLoadErrors(t, "claudecode.cue", []string{
		`before: "PostCompact"`, `before: "PreCompact"`,
		`also: \[\{point: "agent/status"`, `also: [{point: "compaction/post-compact"`,
	},
		`spec/bridges/claudecode\.cue:\d+:\d+: bridge "claude-code" event "SessionStart": also: before "PreCompact" is not an event of the table at compaction/post-compact`,
		`spec/bridges/claudecode\.cue:\d+:\d+: bridge "claude-code" event "Notification": also at compaction/post-compact: only an event at agent/session-start fires there`,
	)
}

// wantLoadErrors applies edits (pairs of a regexp and its replacement, each of which must
// change the file) to spec/bridges/file in a copy of the spec, loads the copy, and checks
// that loading fails with a line matching each of want.
func wantLoadErrors(t *testing.T, file string, edits []string, want ...string) {
	t.Helper()
	dir := specCopy(t, nil)
	path := filepath.Join(dir, "bridges", file)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(edits); i += 2 {
		edited := regexp.MustCompile(edits[i]).ReplaceAll(data, []byte(edits[i+1]))
		if string(edited) == string(data) {
			t.Fatalf("the edit %q changed nothing in %s", edits[i], file)
		}
		data = edited
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = gen.Load(dir, "spec", gen.DefaultLayout)
	if err == nil {
		t.Fatal("loaded a bad bridge table")
	}
	for _, w := range want {
		if !regexp.MustCompile(w).MatchString(err.Error()) {
			t.Errorf("error:\n%v\nwant a line matching %q", err, w)
		}
	}
}
