package load_test

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/dshkit/dsh/gen/ir"
	"github.com/dshkit/dsh/gen/load"
	"github.com/dshkit/dsh/spec"
)

// writeSpec extracts the .cue files of a txtar archive into a fresh spec directory,
// adding the real meta.cue unless the archive brings its own.
func writeSpec(t *testing.T, a *txtar.Archive) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "spec")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	hasMeta := false
	for _, f := range a.Files {
		if !strings.HasSuffix(f.Name, ".cue") {
			continue
		}
		hasMeta = hasMeta || f.Name == "meta.cue"
		if err := os.WriteFile(filepath.Join(dir, f.Name), f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if !hasMeta {
		meta, err := spec.FS.ReadFile("meta.cue")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "meta.cue"), meta, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func section(a *txtar.Archive, name string) string {
	for _, f := range a.Files {
		if f.Name == name {
			return strings.TrimSpace(string(f.Data))
		}
	}
	return ""
}

// TestBadSpecs checks that every bad-spec case is rejected with an *Error whose first
// line names the CUE position of the problem.
func TestBadSpecs(t *testing.T) {
	cases, err := filepath.Glob("../testdata/badspec/*.txtar")
	if err != nil || len(cases) == 0 {
		t.Fatalf("no bad-spec cases: %v", err)
	}
	for _, c := range cases {
		t.Run(strings.TrimSuffix(filepath.Base(c), ".txtar"), func(t *testing.T) {
			a, err := txtar.ParseFile(c)
			if err != nil {
				t.Fatal(err)
			}
			dir := writeSpec(t, a)
			_, err = load.Dir(dir, "spec")
			if err == nil {
				t.Fatalf("load succeeded; want an error matching %q", section(a, "want"))
			}
			if !errors.Is(err, load.ErrSpec) {
				t.Errorf("error does not wrap ErrSpec: %v", err)
			}
			want := regexp.MustCompile(section(a, "want"))
			if !want.MatchString(err.Error()) {
				t.Errorf("error:\n%v\nwant a line matching %q", err, want)
			}
			first, _, _ := strings.Cut(err.Error(), "\n")
			if !regexp.MustCompile(`^spec/[a-z_]+\.cue:\d+:\d+: `).MatchString(first) {
				t.Errorf("first line %q does not start with the CUE file:line:col", first)
			}
		})
	}
}

// TestEmbeddedSpec loads the real spec from the embedded files and checks the surface the
// runtime depends on.
func TestEmbeddedSpec(t *testing.T) {
	s, err := load.FS(spec.FS, "spec")
	if err != nil {
		t.Fatal(err)
	}
	disk, err := load.Dir("../../spec", "spec")
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Types) != len(disk.Types) || len(s.Events) != len(disk.Events) {
		t.Errorf("embedded and on-disk spec differ: %d/%d types, %d/%d events", len(s.Types), len(disk.Types), len(s.Events), len(disk.Events))
	}
	kinds := func(name string) []string {
		u := s.Lookup(name)
		if u == nil || u.Kind != ir.Union {
			t.Fatalf("%s is not a union", name)
		}
		var ks []string
		for _, v := range u.Variants {
			ks = append(ks, v.Type.Name)
		}
		return ks
	}
	for union, want := range map[string]string{
		"PreToolDecision":  "PreToolAllow PreToolDeny PreToolAsk PreToolHalt",
		"PreStepDecision":  "PreStepEnter PreStepReject PreStepHalt",
		"GuardVerdict":     "GuardDeny GuardAbstain",
		"PostToolDecision": "PostToolAccept PostToolBlock PostToolHalt PostToolTail",
	} {
		if got := strings.Join(kinds(union), " "); got != want {
			t.Errorf("%s variants = %s, want %s", union, got, want)
		}
	}
	domains := map[string]ir.Domain{}
	for _, e := range s.Events {
		domains[e.Name] = e.Domain
		if e.Doc == "" {
			t.Errorf("%s has no doc", e.Name)
		}
	}
	for name, d := range map[string]ir.Domain{
		"agent/session-start": ir.Notification, "agent/pre-step": ir.Waterfall, "agent/turn-stopping": ir.Notification,
		"agent/request": ir.Fold, "agent/response": ir.Fold, "agent/request-error": ir.Waterfall, "tools/pre-execute": ir.Waterfall,
		"tools/guard": ir.Guard, "tools/execute": ir.Wrapper, "tools/post-execute": ir.Waterfall, "tools/result": ir.Observer,
	} {
		if domains[name] != d {
			t.Errorf("event %s: domain %q, want %q", name, domains[name], d)
		}
	}
	accept := s.Lookup("PostToolAccept")
	if len(accept.Exclusive) != 1 || strings.Join(accept.Exclusive[0], ",") != "content,value" {
		t.Errorf("PostToolAccept exclusive groups = %v", accept.Exclusive)
	}
	// @dsh(accessors) marks a record in its body and a union after its disjunction.
	for name, want := range map[string]bool{"ToolExecution": true, "ToolExecutionResult": true, "PostToolDecision": true, "AssistantChunk": false, "ToolSuccess": false} {
		if got := s.Lookup(name).Accessors; got != want {
			t.Errorf("%s: Accessors = %v, want %v", name, got, want)
		}
	}
}

// TestKeyOrder: a package's _keyOrder puts the fields it names first in every record, in
// its order, the rest after them in declaration order; CUE alone interleaves an embedded
// definition's fields with the record's own.
func TestKeyOrder(t *testing.T) {
	dir := writeSpec(t, txtar.Parse([]byte(`-- x.cue --
package dsh

_keyOrder: ["session_id", "cwd", "hook_event_name"]

// #Common are the shared fields.
#Common: {
	// session_id identifies the session.
	session_id!: string
	// cwd is the directory.
	cwd!: string
	// model is the model.
	model?: string
}

// #In is a stdin.
#In: {
	#Common
	// hook_event_name names the event.
	hook_event_name!: "X"
	// tool_name names the tool.
	tool_name!: string
	// tool_input is the input.
	tool_input!: _
}
`)))
	s, err := load.Dir(dir, "spec")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range s.Lookup("In").Fields {
		got = append(got, f.JSONName)
	}
	if want := "session_id cwd hook_event_name model tool_name tool_input"; strings.Join(got, " ") != want {
		t.Errorf("In's fields: %s, want %s", strings.Join(got, " "), want)
	}
}

// TestRecordKeyOrder: a record named in _keyOrders gets that order, whatever _keyOrder
// and its declaration say; the other records keep _keyOrder's.
func TestRecordKeyOrder(t *testing.T) {
	dir := writeSpec(t, txtar.Parse([]byte(`-- x.cue --
package dsh

_keyOrder: ["session_id", "transcript_path", "cwd"]

_keyOrders: Own: ["session_id", "cwd", "transcript_path", "model"]

// #Own is written in an order of its own.
#Own: {
	// model is the model.
	model!: string
	// transcript_path is the transcript.
	transcript_path!: string
	// cwd is the directory.
	cwd!: string
	// session_id identifies the session.
	session_id!: string
}

// #Other follows _keyOrder.
#Other: {
	// cwd is the directory.
	cwd!: string
	// transcript_path is the transcript.
	transcript_path!: string
	// session_id identifies the session.
	session_id!: string
}
`)))
	s, err := load.Dir(dir, "spec")
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"Own": "session_id cwd transcript_path model", "Other": "session_id transcript_path cwd"} {
		var got []string
		for _, f := range s.Lookup(name).Fields {
			got = append(got, f.JSONName)
		}
		if strings.Join(got, " ") != want {
			t.Errorf("%s's fields: %s, want %s", name, strings.Join(got, " "), want)
		}
	}
}

// TestBridgeTableChecks: a table whose toolInputs default names no key of its tool, or
// whose event is both pending and unfired, is a spec error naming the bridge; the real
// tables load.
func TestBridgeTableChecks(t *testing.T) {
	schema, err := os.ReadFile("../../spec/bridges/bridges.cue")
	if err != nil {
		t.Fatal(err)
	}
	base := `package bridges

_bridges: {
	// codex is a table.
	codex: {
		wire:              "codex"
		plugin:            "hooks-x"
		defaultTimeoutSec: 1
		exit2EmptyStderr:  "block"
		jsonPrefixes: ["{"]
		invalidJSON:  "error"
		stdinNewline: false
		regexDialect: "re2"
		events: {}
`
	for name, c := range map[string]struct{ table, want string }{
		"default not a key": {`		toolInputs: Edit: {keys: ["file_path"], defaults: replace_all: false}
	}
}
`, `bridge "codex" toolInputs "Edit": default "replace_all" is not one of its keys`},
		"pending and unfired": {`		pending: Setup: "at start"
		unfired: Setup: "never"
	}
}
`, `bridge "codex" event "Setup": both pending and unfired`},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "bridges.cue"), schema, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "x.cue"), []byte(base+c.table), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := load.Bridges(dir, "spec/bridges")
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("load.Bridges: %v, want an error holding %q", err, c.want)
			}
		})
	}
	if _, err := load.Bridges("../../spec/bridges", "spec/bridges"); err != nil {
		t.Fatalf("the real tables: %v", err)
	}
}
