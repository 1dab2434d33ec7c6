// Package scenarios emits the conformance suite of a spec package that declares
// scenarios (spec/conformance): the scenarios as JSON (for runtimes in any language), a Go
// file embedding them, one Go test that runs each scenario as a subtest through the
// conformance harness, and a Markdown index of scenario ids per extension point.
package scenarios

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/dave/jennifer/jen"

	"github.com/dshkit/dsh/gen/emit"
	"github.com/dshkit/dsh/gen/emit/gofile"
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
	embed, err := gofile.Render("scenarios.go", embedFile(s, header))
	if err != nil {
		return nil, err
	}
	files = append(files, emit.File{Path: path.Join(o.GoDir, "scenarios.go"), Data: embed})
	tf, err := testFile(s, header, o)
	if err != nil {
		return nil, err
	}
	test, err := gofile.Render("scenarios_test.go", tf)
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

// embedFile is scenarios.go: ScenariosJSON, which embeds scenarios.json, and its decoder.
func embedFile(s *ir.Spec, header string) *jen.File {
	f := gofile.New(s.Package, header)
	f.Anon("embed")
	js := func(name string) *jen.Statement { return jen.Qual("encoding/json", name) }
	raw := func() *jen.Statement { return js("RawMessage") }
	returnErr := jen.Return(jen.Nil(), jen.Err())
	// unmarshal is `if err := <call>; err != nil { <then> }`.
	unmarshal := func(call jen.Code, then jen.Code) *jen.Statement {
		return jen.If(jen.Err().Op(":=").Add(call), jen.Err().Op("!=").Nil()).Block(then)
	}
	tagged := func(name string) *jen.Statement {
		return jen.Id(name).String().Tag(map[string]string{"json": strings.ToLower(name)})
	}

	f.Add(gofile.Comment(`ScenariosJSON is the conformance suite as JSON: {"scenarios": [{id, doc, file, refs,
setup, run, expect}]}, for runtimes in any language.`)).
		Comment("//").Line().Comment("//go:embed scenarios.json").Line().Var().Id("ScenariosJSON").Index().Byte()
	f.Line()
	f.Add(gofile.Comment("Entry is one scenario of the suite, with its id and doc.")).Type().Id("Entry").Struct(
		gofile.Comment("ID is the scenario id.").Id("ID").String(),
		gofile.Comment("Doc says what the scenario checks.").Id("Doc").String(),
		gofile.Comment("File is the spec file the scenario is declared in.").Id("File").String(),
		gofile.Comment("Scenario is the scenario itself.").Id("Scenario").Id("Scenario"),
	)
	f.Line()
	f.Add(gofile.Comment(fmt.Sprintf("Scenarios decodes the %d scenarios of the suite, strictly.", len(s.Scenarios)))).
		Func().Id("Scenarios").Params().Params(jen.Index().Id("Entry"), jen.Error()).Block(
		jen.Var().Id("doc").Struct(jen.Id("Scenarios").Index().Add(raw()).Tag(map[string]string{"json": "scenarios"})),
		unmarshal(js("Unmarshal").Call(jen.Id("ScenariosJSON"), jen.Op("&").Id("doc")), returnErr),
		jen.Id("out").Op(":=").Make(jen.Index().Id("Entry"), jen.Lit(0), jen.Len(jen.Id("doc").Dot("Scenarios"))),
		jen.For(jen.List(jen.Id("_"), jen.Id("raw")).Op(":=").Range().Id("doc").Dot("Scenarios")).Block(
			jen.Var().Id("head").Struct(tagged("ID"), tagged("Doc"), tagged("File")),
			jen.Var().Id("fields").Map(jen.String()).Add(raw()),
			unmarshal(js("Unmarshal").Call(jen.Id("raw"), jen.Op("&").Id("head")), returnErr),
			unmarshal(js("Unmarshal").Call(jen.Id("raw"), jen.Op("&").Id("fields")), returnErr),
			jen.Delete(jen.Id("fields"), jen.Lit("id")),
			jen.Delete(jen.Id("fields"), jen.Lit("doc")),
			jen.Delete(jen.Id("fields"), jen.Lit("file")),
			jen.List(jen.Id("body"), jen.Err()).Op(":=").Add(js("Marshal")).Call(jen.Id("fields")),
			jen.If(jen.Err().Op("!=").Nil()).Block(returnErr),
			jen.Id("e").Op(":=").Id("Entry").Values(
				jen.Id("ID").Op(":").Id("head").Dot("ID"),
				jen.Id("Doc").Op(":").Id("head").Dot("Doc"),
				jen.Id("File").Op(":").Id("head").Dot("File")),
			unmarshal(jen.Id("e").Dot("Scenario").Dot("UnmarshalJSON").Call(jen.Id("body")),
				jen.Return(jen.Nil(), jen.Qual("fmt", "Errorf").Call(jen.Lit("scenario %s: %w"), jen.Id("head").Dot("ID"), jen.Err()))),
			jen.Id("out").Op("=").Append(jen.Id("out"), jen.Id("e")),
		),
		jen.Return(jen.Id("out"), jen.Nil()),
	)
	return f
}

// testFile is scenarios_test.go: the table of scenario ids, each marked when it depends on
// the wall clock (timed), and TestScenarios, which runs each on o.Runtime through o.Harness
// as a subtest named by its id (go test -run 'TestScenarios/<id>' picks one). A timed
// scenario does not run in parallel: its subtest runs while the loop does, before the
// parallel ones.
func testFile(s *ir.Spec, header string, o Options) (*jen.File, error) {
	f := gofile.New(s.Package+"_test", header)
	f.ImportAlias(o.Harness, "harness")
	f.ImportAlias(o.Runtime, "runtime")
	rows := make([]jen.Code, 0, len(s.Scenarios))
	for _, sc := range s.Scenarios {
		timed, err := timed(sc.Data)
		if err != nil {
			return nil, fmt.Errorf("%s: scenario %q: %v", sc.Pos, sc.ID, err)
		}
		rows = append(rows, jen.Line().Values(jen.Lit(sc.ID), jen.Lit(timed)))
	}
	rows = append(rows, jen.Line())
	f.Line()
	f.Add(gofile.Comment(fmt.Sprintf("scenarioTests are the %d scenarios of spec/conformance, by id, each with whether it\ndepends on the wall clock (a delay, a wait or a timeout).", len(s.Scenarios)))).
		Var().Id("scenarioTests").Op("=").Index().Struct(
		jen.Id("id").String(),
		jen.Id("timed").Bool(),
	).Values(rows...)
	f.Line()
	f.Add(gofile.Comment("TestScenarios runs every scenario as a subtest named by its id. A timed scenario runs on\nits own, before the others, which run in parallel: its outcome depends on how fast\nthings run, which a loaded machine would change.")).
		Func().Id("TestScenarios").Params(jen.Id("t").Op("*").Qual("testing", "T")).Block(
		jen.For(jen.List(jen.Id("_"), jen.Id("sc")).Op(":=").Range().Id("scenarioTests")).Block(
			jen.Id("t").Dot("Run").Call(jen.Id("sc").Dot("id"), jen.Func().Params(jen.Id("t").Op("*").Qual("testing", "T")).Block(
				jen.If(jen.Op("!").Id("sc").Dot("timed")).Block(jen.Id("t").Dot("Parallel").Call()),
				jen.Qual(o.Harness, "RunID").Call(jen.Id("t"), jen.Qual(o.Runtime, "New"), jen.Id("sc").Dot("id")),
			)),
		),
	)
	return f, nil
}
