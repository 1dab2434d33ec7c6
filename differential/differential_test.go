package differential

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// setup installs the engines and builds dsh; outside CI a failure to install skips.
func setup(t *testing.T) (Engines, string) {
	t.Helper()
	if testing.Short() {
		t.Skip("the differential suite runs the real engines; not in -short mode")
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	e, err := Install(ctx, CacheDir(root))
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("differential: cannot install the pinned engines: %v", err)
		}
		t.Skipf("differential: cannot install the pinned engines (CI would fail): %v", err)
	}
	bin := filepath.Join(t.TempDir(), "dsh")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/dsh")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/dsh: %v\n%s", err, out)
	}
	return e, bin
}

// Result is the comparison of one case under one engine.
type Result struct {
	Case, Engine string
	Diffs        []Diff
	Err          string
	EngineTime   time.Duration
	DshTime      time.Duration
	EngineHooks  int
	DshHooks     int
	// EngineOnly says the case ran under the engine alone (DSH_DIFFERENTIAL_ENGINE_ONLY).
	EngineOnly bool
	// Replayed says the engine's run is its recording (record.go); Unrecorded that the
	// engine ran for want of a recording under the case's key.
	Replayed, Unrecorded bool
}

// recordPolicy is how TestDifferential uses the recordings: rec reads and writes them,
// record writes one of every engine run (DSH_DIFFERENTIAL_RECORD), and the cases live
// matches run under their engines even with a fresh recording (LiveCases).
type recordPolicy struct {
	rec    *Recorder
	record bool
	live   *regexp.Regexp
}

// engineNormalizer is the Normalizer of a run of a case under engine with paths p.
func engineNormalizer(engine string, p RecordedPaths) Normalizer {
	n := Normalizer{Paths: map[string]string{p.WS: "<ws>", p.Home: "<home>", p.Root: "<run>", p.Wrap: "<wrap>"}, CallerPath: p.PATH}
	if p.HookURL != "" {
		n.Paths[p.HookURL] = "<hooks>" // each run has its own hook server
	}
	n.NoErrorFlag = engine == "codex" // the Responses API has no error flag
	return n
}

// runCase runs c under engine and under dsh and compares.
func runCase(ctx context.Context, t *testing.T, e Engines, dshBin, base, wrap string, c Case, engine string, rp recordPolicy) Result {
	res := Result{Case: c.Name, Engine: engine}
	obs := func(dir runDir, reqs []Request, sent []Next) Observation {
		o, err := observe(c, dir, reqs, sent)
		if err != nil {
			res.Err += err.Error()
		}
		return o
	}
	engineOnly := os.Getenv("DSH_DIFFERENTIAL_ENGINE_ONLY") != ""
	key, err := rp.rec.Key(c, engine)
	if err != nil {
		res.Err = err.Error()
		return res
	}
	recorded, recordedPaths, recErr := rp.rec.Load(c, engine, key)
	if recErr != nil && !errors.Is(recErr, ErrNoRecording) {
		res.Err = recErr.Error()
		return res
	}
	var eo Observation
	var ep RecordedPaths
	if recErr == nil && !rp.record && !engineOnly && !rp.live.MatchString(c.Name) {
		// The engine's run as recorded under this key: nothing that shapes it changed.
		eo, ep, res.Replayed = recorded, recordedPaths, true
	} else {
		// The engine: again, up to engineAttempts runs in all, while a hook the case counts
		// on (Case.EngineUntil) did not run to its end.
		var ed runDir
		for attempt := 1; ; attempt++ {
			dir := filepath.Join(base, "engine")
			if attempt > 1 {
				dir += "-" + itoa(attempt)
			}
			var ok bool
			if eo, ed, ok = runEngine(ctx, t, e, dir, wrap, c, engine, &res, obs); !ok {
				return res
			}
			if c.EngineUntil == "" || attempt == engineAttempts || slices.ContainsFunc(eo.Hooks, func(r HookRun) bool { return r.Name == c.EngineUntil && r.Exit != "" }) {
				break
			}
			t.Logf("%s under %s: %s did not run to its end under the engine (attempt %d of %d); again", c.Name, engine, c.EngineUntil, attempt, engineAttempts)
		}
		if engineOnly {
			// Record the engine's behaviour alone (a dialect dsh does not run yet).
			data, _ := json.MarshalIndent(eo, "", "  ")
			_ = os.WriteFile(filepath.Join(ed.root, "observation.json"), data, 0o644)
			res.EngineOnly, res.EngineHooks = true, len(eo.Hooks)
			return res
		}
		ep = RecordedPaths{Root: ed.root, Home: ed.home, WS: ed.ws, Wrap: wrap, HookURL: ed.hookURL, PATH: os.Getenv("PATH")}
		res.Unrecorded = recErr != nil
		switch {
		case rp.record && res.Err == "":
			if err := rp.rec.Save(c, engine, key, eo, ep); err != nil {
				res.Err += fmt.Sprintf("recording the engine's run: %v", err)
			}
		case !rp.record && recErr == nil:
			// A live run with a fresh recording checks the recording: the engine must
			// show what it showed when it was recorded.
			if diffs := Compare(withToolset(eo, engine), withToolset(recorded, engine), engineNormalizer(engine, ep), engineNormalizer(engine, recordedPaths)); len(diffs) > 0 {
				res.Err += fmt.Sprintf("the engine's run differs from its recording (%s; DSH_DIFFERENTIAL_RECORD=1 records it again): %v", rp.rec.path(c.Name, engine), diffs)
			}
		}
	}
	prompts := c.prompts()
	// dsh.
	dd := newRunDir(t, filepath.Join(base, "dsh"), c.Workspace)
	if c.Interrupt {
		ctx = withInterrupt(ctx, filepath.Join(dd.state, "interrupt"))
	}
	if c.Stdin != "" {
		ctx = withStdin(ctx, c.Stdin)
	}
	dd.writeFiles(t, c, wrap)
	stopHooks := dd.serveHTTPHooks(t, c)
	defer stopHooks()
	hooksFile := filepath.Join(dd.root, "hooks.json")
	var extra []string
	if c.Plugin {
		_ = os.WriteFile(hooksFile, []byte(`{}`), 0o644)
		extra = []string{"--plugin-dir", dd.plugin(t, c, wrap)}
	} else if engine == "gemini" {
		data, _ := json.MarshalIndent(dd.geminiHooks(t, c, wrap), "", "  ")
		_ = os.WriteFile(hooksFile, data, 0o644)
		dd.geminiExtensions(t, c, wrap)
		if c.BrokenExtension || slices.ContainsFunc(c.Hooks, func(hk Hook) bool { return strings.HasPrefix(hk.Source, "ext:") }) {
			extra = append(extra, "--trust") // dsh loads the extensions with the project's files
		}
	} else {
		_ = os.WriteFile(hooksFile, dd.hooksJSON(t, c, wrap), 0o644)
	}
	dd.writeSources(t, c, wrap)
	if c.Sources {
		extra = append(extra, "--setting-sources", "user,project,local", "--trust")
	}
	if c.AskPermission {
		extra = append(extra, "--permission-mode", "default")
	}
	if c.TrustProject {
		extra = append(extra, "--trust")
	}
	if c.Sandbox != "" {
		extra = append(extra, "--sandbox", c.Sandbox)
	}
	switch {
	case c.Model != "" && engine == "claude":
		extra = append(extra, "--model", "anthropic:"+c.Model)
	case c.Model != "" && engine == "codex":
		extra = append(extra, "--model", "openai:"+c.Model)
	}
	if c.AutoCompact {
		extra = append(extra, DshAutoCompactArgs...)
	}
	if c.mcp() {
		extra = append(extra, "--mcp-config", dd.mcpConfig(t, c.MCPResources))
	}
	if c.CodexConfig != "" && engine == "codex" {
		// The agent roles of Codex's config.toml, where dsh run --dialect codex reads them.
		if err := os.MkdirAll(filepath.Join(dd.home, ".codex"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dd.home, ".codex", "config.toml"), []byte(c.CodexConfig), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	proto := map[string]Protocol{"claude": Anthropic, "codex": Responses, "gemini": Gemini}[engine]
	dm, err := NewMock(proto, In(c.Turns, dd.ws))
	if err != nil {
		res.Err = err.Error()
		return res
	}
	dm.HookModel(c.HookModel, c.HookModelDelay, c.HookModelFail)
	dm.Children(children(c.Children, dd.ws))
	dialect := map[string]string{"claude": "claude-code", "codex": "codex", "gemini": "gemini"}[engine]
	logFile := filepath.Join(dd.root, "session.jsonl")
	for i, p := range prompts {
		args := extra
		if i == 0 {
			args = append(append(append([]string(nil), extra...), c.Args...), c.DshArgs...)
		} else {
			dm.NextRun()
		}
		r := RunDsh(ctx, dshBin, dd.home, dd.ws, hooksFile, dialect, logFile, dm.URL(), p, args...)
		res.DshTime += r.Elapsed
		// A /compact that a hook defers or that fails exits 1, as does a turn that ends on a
		// model error or that is interrupted (the engine's exit status is not compared
		// either); what it did shows in the comparison.
		switch {
		case c.DshRefuses != "" && r.Err == nil:
			res.Err += fmt.Sprintf("dsh run started; it should refuse to (%s)", c.DshRefuses)
		case c.DshRefuses != "" && !(isExit(r.Err) && strings.Contains(r.Stderr, c.DshRefuses)):
			res.Err += fmt.Sprintf("dsh run: %v, not the refusal %q\n%s", r.Err, c.DshRefuses, r.Stderr)
		case c.DshRefuses != "":
		case r.Err != nil && !((strings.HasPrefix(p, "/compact") || c.fails() || c.Interrupt) && isExit(r.Err)):
			res.Err += fmt.Sprintf("dsh run: %v\n%s", r.Err, r.Stderr)
		}
	}
	dm.Close()
	saveRequests(dd.root, dm.Requests())
	sent := SentAnthropic(dm.Requests())
	switch engine {
	case "codex":
		sent = SentResponses(dm.Requests())
	case "gemini":
		sent = SentGemini(dm.Requests())
	}
	do := obs(dd, dm.Requests(), sent)
	res.EngineHooks, res.DshHooks = len(eo.Hooks), len(do.Hooks)
	ne := engineNormalizer(engine, ep)
	nd := engineNormalizer(engine, RecordedPaths{Root: dd.root, Home: dd.home, WS: dd.ws, Wrap: wrap, HookURL: dd.hookURL, PATH: os.Getenv("PATH")})
	res.Diffs = Compare(withToolset(eo, engine), withToolset(do, engine), ne, nd)
	return res
}

func isExit(err error) bool {
	_, ok := err.(*exec.ExitError)
	return ok
}

// budget is how long TestDifferential may run its cases: DSH_DIFFERENTIAL_BUDGET (a
// duration) when set, else until a minute before go test's -timeout deadline (leaving time
// to kill the engines, remove the temporary directories and report), else 20 minutes.
func budget(t *testing.T) time.Duration {
	if d, err := time.ParseDuration(os.Getenv("DSH_DIFFERENTIAL_BUDGET")); err == nil && d > 0 {
		return d
	}
	if deadline, ok := t.Deadline(); ok {
		return max(time.Until(deadline)-time.Minute, 10*time.Second)
	}
	return 20 * time.Minute
}

// TestDifferential runs every case under the real engines and under dsh run and fails on
// a difference testdata/differences.md does not list (and on a listed one that no longer
// occurs).
func TestDifferential(t *testing.T) {
	e, dshBin := setup(t)
	listed, err := ReadListed(filepath.Join("testdata", "differences.md"))
	if err != nil {
		t.Fatal(err)
	}
	cases := Cases()
	filter := os.Getenv("DSH_DIFFERENTIAL_CASES")
	var re *regexp.Regexp
	if filter != "" {
		re = regexp.MustCompile(filter)
	}
	base := t.TempDir()
	if keep := os.Getenv("DSH_DIFFERENTIAL_KEEP"); keep != "" {
		base = keep // keep every run's files for a look
		_ = os.RemoveAll(base)
		_ = os.MkdirAll(base, 0o755)
	}
	wrap := filepath.Join(base, "wrap.sh")
	if err := os.WriteFile(wrap, []byte(WrapScript), 0o755); err != nil {
		t.Fatal(err)
	}
	rec, err := NewRecorder(".")
	if err != nil {
		t.Fatal(err)
	}
	live, err := LiveCases(os.Getenv("DSH_DIFFERENTIAL_LIVE"))
	if err != nil {
		t.Fatal(err)
	}
	rp := recordPolicy{rec: rec, record: os.Getenv("DSH_DIFFERENTIAL_RECORD") != "", live: live}
	jobs := 3
	if n, err := strconv.Atoi(os.Getenv("DSH_DIFFERENTIAL_JOBS")); err == nil && n > 0 {
		jobs = n
	}
	type job struct {
		c      Case
		engine string
	}
	var todo []job
	// DSH_DIFFERENTIAL_ENGINES (a comma-separated list: claude,codex,gemini) runs the cases
	// under those engines alone.
	onlyEngines := os.Getenv("DSH_DIFFERENTIAL_ENGINES")
	for _, c := range cases {
		if re != nil && !re.MatchString(c.Name) {
			continue
		}
		for _, eng := range []string{"claude", "codex", "gemini"} {
			if c.RunsOn(eng) && (onlyEngines == "" || slices.Contains(strings.Split(onlyEngines, ","), eng)) {
				todo = append(todo, job{c, eng})
			}
		}
	}
	// The suite bounds its own run time, so that it ends (its engine processes killed, its
	// temporary directories removed) before go test's -timeout would kill it with neither.
	ctx, cancel := context.WithTimeout(context.Background(), budget(t))
	defer cancel()
	results := make([]Result, len(todo))
	sem := make(chan struct{}, jobs)
	var wg sync.WaitGroup
	for i, j := range todo {
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
			}
			if ctx.Err() != nil {
				results[i] = Result{Case: j.c.Name, Engine: j.engine, Err: "not run: the suite's time budget ran out (DSH_DIFFERENTIAL_BUDGET, or go test -timeout)"}
				return
			}
			defer func() { <-sem }()
			results[i] = runCase(ctx, t, e, dshBin, filepath.Join(base, slug(j.c.Name), j.engine), wrap, j.c, j.engine, rp)
			if ctx.Err() != nil {
				results[i].Err += " (the suite's time budget ran out during the case)"
			}
		}()
	}
	wg.Wait()

	used := make([]bool, len(listed))
	same, accepted := 0, map[string]int{}
	var engineTime, dshTime time.Duration
	var engineHooks, dshHooks int
	engineOnly, replayed, unrecorded := 0, 0, 0
	for _, r := range results {
		if r.Replayed {
			replayed++
		}
		if r.Unrecorded {
			unrecorded++
		}
		if r.EngineOnly && r.Err == "" {
			engineOnly++
			engineTime += r.EngineTime
			engineHooks += r.EngineHooks
			continue
		}
		engineTime += r.EngineTime
		dshTime += r.DshTime
		engineHooks += r.EngineHooks
		dshHooks += r.DshHooks
		if r.Err != "" {
			t.Errorf("%s under %s: %s", r.Case, r.Engine, r.Err)
			continue
		}
		if len(r.Diffs) == 0 {
			same++
			continue
		}
		for _, d := range r.Diffs {
			ok := false
			for i, l := range listed {
				if l.Matches(r.Case, r.Engine, d.Aspect) {
					used[i], ok = true, true
					accepted[l.Kind]++
				}
			}
			if !ok {
				t.Errorf("%s under %s: %s", r.Case, r.Engine, d)
			}
		}
	}
	if engineOnly > 0 {
		t.Logf("differential: %d comparisons ran under the engine alone (DSH_DIFFERENTIAL_ENGINE_ONLY): nothing compared", engineOnly)
	}
	if re == nil && onlyEngines == "" && engineOnly == 0 {
		for i, l := range listed {
			if !used[i] && l.Kind != "varies" {
				t.Errorf("differential/testdata/differences.md:%d lists %s/%s/%s, which no longer differs: remove the row", l.Line, l.Case, l.Engine, l.Aspect)
			}
		}
	}
	t.Logf("differential: %d cases, %d comparisons, %d SAME; accepted differences: %d deliberate, %d varies, %d pending",
		len(cases), len(results), same, accepted["deliberate"], accepted["varies"], accepted["pending"])
	if rp.record {
		t.Logf("differential: %d engine runs live, recorded in %s (DSH_DIFFERENTIAL_RECORD)", len(results), RecordedDir)
	} else {
		t.Logf("differential: %d engine runs from their recordings (%s), %d live, %d of them for want of a recording under the case's key (DSH_DIFFERENTIAL_RECORD=1 records them)",
			replayed, RecordedDir, len(results)-replayed, unrecorded)
	}
	if rp.record && re == nil && onlyEngines == "" {
		kept := map[string]bool{}
		for _, j := range todo {
			kept[j.engine+"/"+j.c.Name] = true
		}
		if err := rec.Prune(kept); err != nil {
			t.Errorf("differential: removing the recordings of cases that are gone: %v", err)
		}
	}
	t.Logf("differential: engines %v for %d hook runs, dsh %v for %d hook runs", engineTime.Round(time.Millisecond), engineHooks, dshTime.Round(time.Millisecond), dshHooks)
	if p := os.Getenv("DSH_DIFFERENTIAL_REPORT"); p != "" {
		sort.SliceStable(results, func(i, j int) bool { return results[i].Case < results[j].Case })
		data, _ := json.MarshalIndent(results, "", "  ")
		_ = os.WriteFile(p, data, 0o644)
	}
}
