// Package scenarios emits the conformance suite of a spec package that declares
// scenarios (spec/conformance): the scenarios as JSON (for runtimes in any language), a Go
// file embedding them, one Go test per scenario run by the conformance harness, and a
// Markdown index of scenario ids per extension point.
package scenarios

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path"
	"sort"
	"strings"
	"text/template"

	"github.com/dshkit/dsh/gen/emit"
	"github.com/dshkit/dsh/gen/ir"
)

// Options says where the suite goes and what the generated tests run.
type Options struct {
	// GoDir is the generated Go package directory (e.g. "generated/conformance").
	GoDir string
	// IndexFile is the Markdown index (e.g. "conformance/SCENARIOS.md"); "" for none.
	IndexFile string
	// Harness is the import path of the harness package the tests call (RunID).
	Harness string
	// Runtime is the import path of the package whose New func builds the runtime under
	// test (e.g. the dsh adapter).
	Runtime string
}

// scenario is the JSON shape of one exported scenario.
type scenario struct {
	ID   string          `json:"id"`
	Doc  string          `json:"doc"`
	File string          `json:"file"`
	Data json.RawMessage `json:"-"`
}

// Emit writes the suite for s's scenarios.
func Emit(s *ir.Spec, o Options) ([]emit.File, error) {
	if len(s.Scenarios) == 0 {
		return nil, nil
	}
	header := emit.Header("conformance/*.cue")
	js, err := scenariosJSON(s, header)
	if err != nil {
		return nil, err
	}
	files := []emit.File{{Path: path.Join(o.GoDir, "scenarios.json"), Data: js}}
	embed, err := render(embedTmpl, map[string]any{"Header": header, "Package": s.Package, "Count": len(s.Scenarios)})
	if err != nil {
		return nil, err
	}
	files = append(files, emit.File{Path: path.Join(o.GoDir, "scenarios.go"), Data: embed})
	var tests []map[string]any
	for _, sc := range s.Scenarios {
		timed, err := timed(sc.Data)
		if err != nil {
			return nil, fmt.Errorf("%s: scenario %q: %v", sc.Pos, sc.ID, err)
		}
		tests = append(tests, map[string]any{"Func": "Test" + ir.GoName(sc.ID), "ID": sc.ID, "Doc": sc.Doc, "Parallel": !timed})
	}
	test, err := render(testTmpl, map[string]any{"Header": header, "Package": s.Package, "Tests": tests, "Harness": o.Harness, "Runtime": o.Runtime})
	if err != nil {
		return nil, err
	}
	files = append(files, emit.File{Path: path.Join(o.GoDir, "scenarios_test.go"), Data: test})
	if o.IndexFile != "" {
		files = append(files, emit.File{Path: o.IndexFile, Data: index(s)})
	}
	emit.Sort(files)
	return files, nil
}

// timingFields are the scenario fields that make it depend on the wall clock: a delay, a
// wait or a timeout.
var timingFields = map[string]bool{"delayMs": true, "async": true, "ms": true, "sessionStartTimeoutMs": true, "timeoutSec": true}

// timed reports whether the scenario data holds a timing field anywhere. Such a scenario's
// test runs on its own (before the others, which run in parallel): its outcome depends
// on how fast things run, which a loaded machine would change.
func timed(data []byte) (bool, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber() // scenarios hold numbers beyond float64 (1E+400)
	var v any
	if err := dec.Decode(&v); err != nil {
		return false, err
	}
	var walk func(v any) bool
	walk = func(v any) bool {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				if timingFields[k] || walk(x) {
					return true
				}
			}
		case []any:
			for _, x := range v {
				if walk(x) {
					return true
				}
			}
		}
		return false
	}
	return walk(v), nil
}

// scenariosJSON renders {"$comment", "scenarios": [{id, doc, file, refs, setup, run, expect}]}.
func scenariosJSON(s *ir.Spec, header string) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString("{\n  \"$comment\": ")
	c, _ := json.Marshal(header)
	b.Write(c)
	b.WriteString(",\n  \"scenarios\": [")
	for i, sc := range s.Scenarios {
		var data map[string]json.RawMessage
		if err := json.Unmarshal(sc.Data, &data); err != nil {
			return nil, fmt.Errorf("%s: scenario %q: %v", sc.Pos, sc.ID, err)
		}
		head, _ := json.Marshal(scenario{ID: sc.ID, Doc: sc.Doc, File: "spec/conformance/" + sc.File})
		obj := map[string]json.RawMessage{}
		if err := json.Unmarshal(head, &obj); err != nil {
			return nil, err
		}
		for k, v := range data {
			obj[k] = v
		}
		one, err := json.MarshalIndent(obj, "    ", "  ") // map keys are sorted
		if err != nil {
			return nil, err
		}
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString("\n    ")
		b.Write(one)
	}
	b.WriteString("\n  ]\n}\n")
	return b.Bytes(), nil
}

// index renders the Markdown table of scenario ids per extension point.
func index(s *ir.Spec) []byte {
	byPoint := map[string][]string{}
	for _, sc := range s.Scenarios {
		var data struct {
			Setup struct {
				Listeners []struct {
					Point string `json:"point"`
				} `json:"listeners"`
				Hooks *struct {
					Dialect string `json:"dialect"`
				} `json:"hooks"`
			} `json:"setup"`
		}
		_ = json.Unmarshal(sc.Data, &data) // shape checked by the loader
		seen := map[string]bool{}
		for _, l := range data.Setup.Listeners {
			if !seen[l.Point] {
				seen[l.Point] = true
				byPoint[l.Point] = append(byPoint[l.Point], sc.ID)
			}
		}
		if data.Setup.Hooks != nil {
			key := "(" + data.Setup.Hooks.Dialect + " hooks)"
			seen[key] = true
			byPoint[key] = append(byPoint[key], sc.ID)
		}
		if len(seen) == 0 {
			byPoint["(no listeners)"] = append(byPoint["(no listeners)"], sc.ID)
		}
	}
	points := make([]string, 0, len(byPoint))
	for p := range byPoint {
		points = append(points, p)
	}
	sort.Strings(points)
	var b strings.Builder
	b.WriteString("<!-- " + emit.Header("conformance/*.cue") + " -->\n\n")
	fmt.Fprintf(&b, "# Conformance scenarios\n\n%d scenarios, generated from `spec/conformance/*.cue`. A scenario appears under every extension point it registers a listener at, and under the dialect of the shell hooks it attaches.\n\n", len(s.Scenarios))
	b.WriteString("| extension point | scenarios | ids |\n| --- | --- | --- |\n")
	for _, p := range points {
		ids := byPoint[p]
		quoted := make([]string, len(ids))
		for i, id := range ids {
			quoted[i] = "`" + id + "`"
		}
		fmt.Fprintf(&b, "| `%s` | %d | %s |\n", p, len(ids), strings.Join(quoted, " "))
	}
	b.WriteString("\n## Scenarios\n\n| id | checks | file |\n| --- | --- | --- |\n")
	for _, sc := range s.Scenarios {
		fmt.Fprintf(&b, "| `%s` | %s | `spec/conformance/%s` |\n", sc.ID, strings.ReplaceAll(strings.ReplaceAll(sc.Doc, "\n", " "), "|", "\\|"), sc.File)
	}
	return []byte(b.String())
}

func render(t *template.Template, data any) ([]byte, error) { return emit.RenderGo(t, data) }

var funcs = template.FuncMap{"lines": func(s string) []string { return strings.Split(s, "\n") }}

var embedTmpl = template.Must(template.New("embed").Funcs(funcs).Parse(`// {{.Header}}

package {{.Package}}

import (
	_ "embed"
	"encoding/json"
	"fmt"
)

// ScenariosJSON is the conformance suite as JSON: {"scenarios": [{id, doc, file, refs,
// setup, run, expect}]}, for runtimes in any language.
//
//go:embed scenarios.json
var ScenariosJSON []byte

// Entry is one scenario of the suite, with its id and doc.
type Entry struct {
	// ID is the scenario id.
	ID string
	// Doc says what the scenario checks.
	Doc string
	// File is the spec file the scenario is declared in.
	File string
	// Scenario is the scenario itself.
	Scenario Scenario
}

// Scenarios decodes the {{.Count}} scenarios of the suite, strictly.
func Scenarios() ([]Entry, error) {
	var doc struct {
		Scenarios []json.RawMessage ` + "`json:\"scenarios\"`" + `
	}
	if err := json.Unmarshal(ScenariosJSON, &doc); err != nil {
		return nil, err
	}
	out := make([]Entry, 0, len(doc.Scenarios))
	for _, raw := range doc.Scenarios {
		var head struct {
			ID   string ` + "`json:\"id\"`" + `
			Doc  string ` + "`json:\"doc\"`" + `
			File string ` + "`json:\"file\"`" + `
		}
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(raw, &head); err != nil {
			return nil, err
		}
		if err := json.Unmarshal(raw, &fields); err != nil {
			return nil, err
		}
		delete(fields, "id")
		delete(fields, "doc")
		delete(fields, "file")
		body, err := json.Marshal(fields)
		if err != nil {
			return nil, err
		}
		e := Entry{ID: head.ID, Doc: head.Doc, File: head.File}
		if err := e.Scenario.UnmarshalJSON(body); err != nil {
			return nil, fmt.Errorf("scenario %s: %w", head.ID, err)
		}
		out = append(out, e)
	}
	return out, nil
}
`))

var testTmpl = template.Must(template.New("test").Funcs(funcs).Parse(`// {{.Header}}

package {{.Package}}_test

import (
	"testing"

	harness {{printf "%q" .Harness}}
	runtime {{printf "%q" .Runtime}}
)
{{range .Tests}}
// {{.Func}} runs scenario {{.ID}}:
{{- range lines .Doc}}
// {{.}}
{{- end}}
func {{.Func}}(t *testing.T) {
{{- if .Parallel}}
	t.Parallel()
{{- end}}
	harness.RunID(t, runtime.New, {{printf "%q" .ID}})
}
{{end}}`))
