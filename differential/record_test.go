package differential

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// recorderIn is a Recorder of a package directory made in a temporary directory, with one
// harness file and one case file.
func recorderIn(t *testing.T) (*Recorder, string) {
	t.Helper()
	dir := t.TempDir()
	for name, body := range map[string]string{"mock.go": "package x // the mock", "cases_x.go": "package x // cases"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r, err := NewRecorder(dir)
	if err != nil {
		t.Fatal(err)
	}
	return r, dir
}

func TestRecordingRoundTrip(t *testing.T) {
	r, _ := recorderIn(t)
	c := Case{Name: "pre/deny", Hooks: []Hook{{Event: "PreToolUse", Script: "exit 2"}}}
	key, err := r.Key(c, "claude")
	if err != nil {
		t.Fatal(err)
	}
	raw := `{"hook_event_name":"PreToolUse","n":1}`
	o := Observation{
		Effects: []string{"ran_1"}, Calls: 2, Summaries: []string{"w"},
		Sent:        []Next{{{Kind: "result", Error: true, Text: "no"}}},
		Hooks:       []HookRun{{Name: "PreToolUse-0", Start: 7, Raw: raw, Exit: "2", Env: map[string]string{"PATH": "/bin", "CLAUDE_PROJECT_DIR": "/ws", "HOSTNAME": "h"}}, {Name: "plain", Raw: "not json", Exit: "0", Env: map[string]string{}}},
		Placed:      map[string]string{"probe": "system"},
		Tools:       map[string]string{"Bash": `{"description":"d"}`},
		ChildModels: map[string]string{"CHILD-A": "claude-haiku-5-5"},
	}
	paths := RecordedPaths{Root: "/r", Home: "/r/home", WS: "/r/ws", Wrap: "/w.sh", PATH: "/bin"}
	if err := r.Save(c, "claude", key, o, paths); err != nil {
		t.Fatal(err)
	}
	got, gotPaths, err := r.Load(c, "claude", key)
	if err != nil {
		t.Fatal(err)
	}
	want := o
	want.Hooks = []HookRun{
		{Name: "PreToolUse-0", Start: 7, Raw: raw, Stdin: map[string]any{"hook_event_name": "PreToolUse", "n": 1.0}, Exit: "2", Env: map[string]string{"PATH": "/bin", "CLAUDE_PROJECT_DIR": "/ws"}},
		{Name: "plain", Raw: "not json", Exit: "0", Env: map[string]string{}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Load after Save:\n got %#v\nwant %#v", got, want)
	}
	if gotPaths != paths {
		t.Errorf("paths: got %+v, want %+v", gotPaths, paths)
	}
	// Under another key (the case changed) there is no recording.
	c.Hooks[0].Script = "exit 0"
	other, err := r.Key(c, "claude")
	if err != nil {
		t.Fatal(err)
	}
	if other == key {
		t.Fatal("the key does not change with the case")
	}
	if _, _, err := r.Load(c, "claude", other); !errors.Is(err, ErrNoRecording) {
		t.Errorf("Load under another key: %v, want ErrNoRecording", err)
	}
	if _, _, err := r.Load(c, "codex", other); !errors.Is(err, ErrNoRecording) {
		t.Errorf("Load of a run never recorded: %v, want ErrNoRecording", err)
	}
}

func TestRecordingKeyFollowsTheHarness(t *testing.T) {
	r, dir := recorderIn(t)
	c := Case{Name: "x"}
	k1, _ := r.Key(c, "claude")
	if k2, _ := r.Key(c, "codex"); k2 == k1 {
		t.Error("the key does not change with the engine")
	}
	// A case file, the comparison, a test and the differences are not the harness.
	for name, body := range map[string]string{"cases_x.go": "package x // other cases", "compare.go": "package x", "x_test.go": "package x", "testdata/differences.md": "| x |", RecordedDir + "/claude/x.json": "{}"} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if r2, _ := NewRecorder(dir); mustKey(t, r2, c) != k1 {
		t.Error("a file outside the harness changed the key")
	}
	// The mock, the engine's run and testdata's scripts are.
	for _, name := range []string{"mock.go", "engine_test.go", "testdata/real/hook.sh"} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("changed "+name), 0o644); err != nil {
			t.Fatal(err)
		}
		r2, err := NewRecorder(dir)
		if err != nil {
			t.Fatal(err)
		}
		k := mustKey(t, r2, c)
		if k == k1 {
			t.Errorf("changing %s left the key as it was", name)
		}
		k1 = k
	}
}

func mustKey(t *testing.T, r *Recorder, c Case) string {
	t.Helper()
	k, err := r.Key(c, "claude")
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestRecordingCorruptNamesTheFile(t *testing.T) {
	r, dir := recorderIn(t)
	p := filepath.Join(dir, RecordedDir, "claude", "pre_deny.json")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err := r.Load(Case{Name: "pre/deny"}, "claude", "k")
	if err == nil || errors.Is(err, ErrNoRecording) || !strings.Contains(err.Error(), p) {
		t.Errorf("Load of a corrupt recording: %v, want an error naming %s", err, p)
	}
}

func TestRecordingPrune(t *testing.T) {
	r, dir := recorderIn(t)
	o := Observation{Tools: map[string]string{"Bash": "b"}}
	for _, name := range []string{"kept", "gone"} {
		c := Case{Name: name}
		if name == "gone" {
			o.Tools = map[string]string{"Other": "o"}
		}
		if err := r.Save(c, "claude", "k", o, RecordedPaths{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.Prune(map[string]bool{"claude/kept": true}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := r.Load(Case{Name: "kept"}, "claude", "k"); err != nil {
		t.Errorf("the kept recording: %v", err)
	}
	if _, _, err := r.Load(Case{Name: "gone"}, "claude", "k"); !errors.Is(err, ErrNoRecording) {
		t.Errorf("the recording of a case that is gone: %v, want it removed", err)
	}
	tools, _ := os.ReadDir(filepath.Join(dir, RecordedDir, "tools"))
	if len(tools) != 1 {
		t.Errorf("tools files after Prune: %d, want the kept recording's alone", len(tools))
	}
}

// TestCaseKeyCoversTheCase checks that a case's JSON, which its recording key digests,
// holds all of it: no field of Case (or of what it holds) is unexported, a function or a
// channel, which JSON would leave out.
func TestCaseKeyCoversTheCase(t *testing.T) {
	seen := map[reflect.Type]bool{}
	var walk func(path string, typ reflect.Type)
	walk = func(path string, typ reflect.Type) {
		if seen[typ] {
			return
		}
		seen[typ] = true
		switch typ.Kind() {
		case reflect.Func, reflect.Chan, reflect.UnsafePointer:
			t.Errorf("%s is a %s, which a case's JSON leaves out", path, typ.Kind())
		case reflect.Pointer, reflect.Slice, reflect.Array:
			walk(path+"[]", typ.Elem())
		case reflect.Map:
			walk(path+"[key]", typ.Key())
			walk(path+"[]", typ.Elem())
		case reflect.Struct:
			for f := range typ.Fields() {
				if !f.IsExported() {
					t.Errorf("%s.%s is unexported, which a case's JSON leaves out", path, f.Name)
				}
				if f.Tag.Get("json") == "-" {
					t.Errorf("%s.%s has json:\"-\"", path, f.Name)
				}
				walk(path+"."+f.Name, f.Type)
			}
		}
	}
	walk("Case", reflect.TypeFor[Case]())
	if len(Cases()) == 0 {
		t.Fatal("no cases")
	}
}

func TestHarnessFile(t *testing.T) {
	for rel, want := range map[string]bool{
		"mock.go": true, "engines.go": true, "observe.go": true, "record.go": true,
		"engine_test.go": true, "main_test.go": true, "testdata/real/devkit/hooks/post-validate.sh": true,
		"compare.go": false, "cases.go": false, "cases_subagent.go": false, "prompt_cases.go": false,
		"differential_test.go": false, "record_test.go": false, "README.md": false,
		"testdata/differences.md": false, RecordedDir + "/claude/pre_deny.json": false,
	} {
		if got := harnessFile(rel); got != want {
			t.Errorf("harnessFile(%q) = %v, want %v", rel, got, want)
		}
	}
}
