package differential

// Recordings: what an engine's run of a case showed, kept under testdata/recorded, so that
// the suite compares dsh with the engine without running the engine again while nothing
// that shapes the engine's run has changed. A recording's key covers the case (all of it,
// as JSON), the engine, and the harness: every file of this package that shapes an
// engine's run or what the suite observes of it (the mock, the engines' command lines and
// environment, the hook wrapper, the observation), and testdata's hook scripts and
// configurations. The comparison (compare.go), the cases' own files (covered by the case's
// JSON) and differences.md are not in it. A case whose recording is missing or has another
// key runs the engine, as does every case DSH_DIFFERENTIAL_LIVE matches (the smoke set by
// default), whose run is also checked against its recording.

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// RecordedDir is where the recordings are kept, relative to the package.
const RecordedDir = "testdata/recorded"

// SmokeCases are the cases that run under their engines on every run of the suite, even
// with a fresh recording: one or two per engine whose engine behaves the same from run to
// run (no `varies` row), so that the suite both runs each engine and checks its recordings
// against it.
const SmokeCases = `^(pre/deny|stop/block-once|gemini/tool/deny|gemini/all/exit0)$`

// Recording is one engine's run of one case as the suite keeps it.
type Recording struct {
	// Key is the recording key (Recorder.Key) the run was made under.
	Key    string `json:"key"`
	Case   string `json:"case"`
	Engine string `json:"engine"`
	// Paths are the run's own paths, which the comparison normalizes.
	Paths     RecordedPaths     `json:"paths"`
	Effects   []string          `json:"effects,omitempty"`
	Calls     int               `json:"calls"`
	Summaries []string          `json:"summaries,omitempty"`
	Sent      []Next            `json:"sent,omitempty"`
	Hooks     []RecordedHook    `json:"hooks,omitempty"`
	Placed    map[string]string `json:"placed,omitempty"`
	// ChildModels are Observation.ChildModels.
	ChildModels map[string]string `json:"childModels,omitempty"`
	// ChildTools are Observation.ChildTools.
	ChildTools map[string][]string `json:"childTools,omitempty"`
	// Tools names the file of RecordedDir/tools that holds the tools the run's requests
	// offered (OfferedTools), which many runs share; "" when they offered none.
	Tools string `json:"tools,omitempty"`
}

// RecordedPaths are the paths of a recorded run, and the PATH it was started with.
type RecordedPaths struct {
	Root    string `json:"root"`
	Home    string `json:"home"`
	WS      string `json:"ws"`
	Wrap    string `json:"wrap"`
	HookURL string `json:"hookURL,omitempty"`
	PATH    string `json:"PATH"`
}

// RecordedHook is a HookRun as recorded: its stdin raw (Stdin is decoded from it again),
// and of its environment only PATH and the variables an engine sets (RecordedEnv).
type RecordedHook struct {
	Name    string            `json:"name"`
	Start   int64             `json:"start"`
	Raw     string            `json:"raw"`
	Env     map[string]string `json:"env,omitempty"`
	Exit    string            `json:"exit"`
	Headers map[string]string `json:"headers,omitempty"`
}

// RecordedEnv says whether a recording keeps a hook's environment variable: PATH, and
// those an engine sets (CLAUDE*, GEMINI*, CODEX*), a superset of TrackedEnv.
func RecordedEnv(name string) bool {
	return name == "PATH" || strings.HasPrefix(name, "CLAUDE") || strings.HasPrefix(name, "GEMINI") || strings.HasPrefix(name, "CODEX")
}

// Recorder reads and writes the recordings of one package directory.
type Recorder struct {
	dir     string // the package directory
	harness string // the digest of the harness files (HarnessDigest)
}

// NewRecorder returns the Recorder of the package directory dir, its harness digested.
func NewRecorder(dir string) (*Recorder, error) {
	h, err := HarnessDigest(dir)
	if err != nil {
		return nil, err
	}
	return &Recorder{dir: dir, harness: h}, nil
}

// harnessFile says whether a file of the package (a path relative to it, slash-separated)
// shapes an engine's run or what the suite observes of it: every Go file but the
// comparison, the cases and the other tests (engine_test.go and main_test.go are in), and
// testdata but the differences and the recordings.
func harnessFile(rel string) bool {
	name := filepath.Base(rel)
	switch {
	case strings.HasPrefix(rel, RecordedDir+"/"), rel == "testdata/differences.md":
		return false
	case strings.HasPrefix(rel, "testdata/"):
		return true
	case strings.Contains(rel, "/"), !strings.HasSuffix(name, ".go"):
		return false
	case strings.HasSuffix(name, "_test.go"):
		return name == "engine_test.go" || name == "main_test.go"
	}
	return name != "compare.go" && name != "prompt_cases.go" && !strings.HasPrefix(name, "cases")
}

// HarnessDigest is the SHA-256 of the harness files of the package directory dir
// (harnessFile), their names and contents, in name order.
func HarnessDigest(dir string) (string, error) {
	h := sha256.New()
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel == RecordedDir {
				return filepath.SkipDir
			}
			return nil
		}
		if !harnessFile(rel) {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s\x00%d\x00", rel, len(data))
		h.Write(data)
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("differential: digest of the harness: %w", err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Key is the recording key of c under engine: the digest of c's JSON, the engine and the
// harness.
func (r *Recorder) Key(c Case, engine string) (string, error) {
	data, err := json.Marshal(c)
	if err != nil {
		return "", fmt.Errorf("differential: case %s: %w", c.Name, err)
	}
	sum := sha256.Sum256(slices.Concat(data, []byte("\x00"+engine+"\x00"+r.harness)))
	return hex.EncodeToString(sum[:]), nil
}

// path is the file of the recording of c under engine.
func (r *Recorder) path(caseName, engine string) string {
	return filepath.Join(r.dir, RecordedDir, engine, slug(caseName)+".json")
}

// ErrNoRecording is returned by Load when a case has no recording under the key.
var ErrNoRecording = errors.New("no recording")

// Load returns the observation of the recording of c under engine made under key, and its
// paths; ErrNoRecording (wrapped) when there is none or it was made under another key.
func (r *Recorder) Load(c Case, engine, key string) (Observation, RecordedPaths, error) {
	data, err := os.ReadFile(r.path(c.Name, engine))
	if errors.Is(err, fs.ErrNotExist) {
		return Observation{}, RecordedPaths{}, fmt.Errorf("%s under %s: %w", c.Name, engine, ErrNoRecording)
	}
	if err != nil {
		return Observation{}, RecordedPaths{}, err
	}
	var rec Recording
	if err := json.Unmarshal(data, &rec); err != nil {
		return Observation{}, RecordedPaths{}, fmt.Errorf("differential: %s: %w", r.path(c.Name, engine), err)
	}
	if rec.Key != key {
		return Observation{}, RecordedPaths{}, fmt.Errorf("%s under %s: %w under this key (the case or the harness changed)", c.Name, engine, ErrNoRecording)
	}
	o := Observation{Effects: rec.Effects, Calls: rec.Calls, Summaries: rec.Summaries, Sent: rec.Sent, Placed: rec.Placed, ChildModels: rec.ChildModels, ChildTools: rec.ChildTools}
	for _, h := range rec.Hooks {
		run := HookRun{Name: h.Name, Start: h.Start, Raw: h.Raw, Env: h.Env, Exit: h.Exit, Headers: h.Headers}
		if run.Env == nil {
			run.Env = map[string]string{}
		}
		var m map[string]any
		if json.Unmarshal([]byte(h.Raw), &m) == nil {
			run.Stdin = m
		}
		o.Hooks = append(o.Hooks, run)
	}
	if rec.Tools != "" {
		tools, err := os.ReadFile(filepath.Join(r.dir, RecordedDir, "tools", rec.Tools+".json"))
		if err != nil {
			return Observation{}, RecordedPaths{}, fmt.Errorf("differential: the tools of %s: %w", r.path(c.Name, engine), err)
		}
		if err := json.Unmarshal(tools, &o.Tools); err != nil {
			return Observation{}, RecordedPaths{}, fmt.Errorf("differential: the tools of %s: %w", r.path(c.Name, engine), err)
		}
	}
	return o, rec.Paths, nil
}

// Save writes the recording of o, the observation of c's run under engine with paths,
// made under key.
func (r *Recorder) Save(c Case, engine, key string, o Observation, paths RecordedPaths) error {
	rec := Recording{Key: key, Case: c.Name, Engine: engine, Paths: paths, Effects: o.Effects, Calls: o.Calls,
		Summaries: o.Summaries, Sent: o.Sent, Placed: o.Placed, ChildModels: o.ChildModels, ChildTools: o.ChildTools}
	for _, h := range o.Hooks {
		env := map[string]string{}
		for k, v := range h.Env {
			if RecordedEnv(k) {
				env[k] = v
			}
		}
		rec.Hooks = append(rec.Hooks, RecordedHook{Name: h.Name, Start: h.Start, Raw: h.Raw, Env: env, Exit: h.Exit, Headers: h.Headers})
	}
	if o.Tools != nil {
		tools, err := json.MarshalIndent(o.Tools, "", "  ")
		if err != nil {
			return err
		}
		sum := sha256.Sum256(tools)
		rec.Tools = hex.EncodeToString(sum[:8])
		if err := writeFile(filepath.Join(r.dir, RecordedDir, "tools", rec.Tools+".json"), append(tools, '\n')); err != nil {
			return err
		}
	}
	data, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return err
	}
	return writeFile(r.path(c.Name, engine), append(data, '\n'))
}

// Prune removes the recordings not in kept (case and engine, as "engine/case") and the
// tools files no recording names: after a run that recorded every case.
func (r *Recorder) Prune(kept map[string]bool) error {
	root := filepath.Join(r.dir, RecordedDir)
	named := map[string]bool{}
	var stale []string
	ents, _ := os.ReadDir(root)
	for _, e := range ents {
		if !e.IsDir() || e.Name() == "tools" {
			continue
		}
		files, err := os.ReadDir(filepath.Join(root, e.Name()))
		if err != nil {
			return err
		}
		for _, f := range files {
			p := filepath.Join(root, e.Name(), f.Name())
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			var rec Recording
			if json.Unmarshal(data, &rec) != nil || !kept[rec.Engine+"/"+rec.Case] {
				stale = append(stale, p)
				continue
			}
			named[rec.Tools] = true
		}
	}
	tools, _ := os.ReadDir(filepath.Join(root, "tools"))
	for _, f := range tools {
		if !named[strings.TrimSuffix(f.Name(), ".json")] {
			stale = append(stale, filepath.Join(root, "tools", f.Name()))
		}
	}
	for _, p := range stale {
		if err := os.Remove(p); err != nil {
			return err
		}
	}
	return nil
}

// writeFile writes data to path through a temporary file beside it, creating the
// directory.
func writeFile(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".rec-*")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// LiveCases is the pattern of the cases that run under their engines even with a fresh
// recording: DSH_DIFFERENTIAL_LIVE when set ("." for every case), SmokeCases otherwise.
func LiveCases(env string) (*regexp.Regexp, error) {
	re, err := regexp.Compile(cmp.Or(env, SmokeCases))
	if err != nil {
		return nil, fmt.Errorf("DSH_DIFFERENTIAL_LIVE: %w", err)
	}
	return re, nil
}

// slug is a case name as a file name: its slashes and spaces underscores.
func slug(s string) string { return strings.NewReplacer("/", "_", " ", "_").Replace(s) }
