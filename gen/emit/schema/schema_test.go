package schema

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/dshkit/dsh/gen/emit"
	"github.com/dshkit/dsh/gen/ir"
	"github.com/dshkit/dsh/gen/ir/irtest"
)

// emitSmall emits the schemas of irtest.Small, keyed by type name.
func emitSmall(t *testing.T) map[string][]byte {
	t.Helper()
	files, err := Emit(irtest.Small(), "out/schema")
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string][]byte{}
	for _, f := range files {
		name, ok := strings.CutSuffix(strings.TrimPrefix(f.Path, "out/schema/"), ".schema.json")
		if !ok {
			t.Fatalf("unexpected path %s", f.Path)
		}
		byName[name] = f.Data
	}
	return byName
}

// compile compiles one emitted schema with an independent validator.
func compile(t *testing.T, name string, data []byte) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	url := "urn:dsh:schema:" + name
	if err := c.AddResource(url, doc); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	sch, err := c.Compile(url)
	if err != nil {
		t.Fatalf("%s: %v\n%s", name, err, data)
	}
	return sch
}

func TestFiles(t *testing.T) {
	got := emitSmall(t)
	var names []string
	for n := range got {
		names = append(names, n)
	}
	slices.Sort(names)
	// Payload (shared by every event), both decisions, and the session event data.
	want := []string{"Decision", "DemoPayload", "Started", "Verdict"}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
	for name, data := range got {
		var doc map[string]any
		if err := json.Unmarshal(data, &doc); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		file := "demo.cue"
		if name == "Started" {
			file = "log.cue"
		}
		for k, v := range map[string]string{
			"$schema":  "https://json-schema.org/draft/2020-12/schema",
			"$id":      "urn:dsh:schema:" + name,
			"title":    name,
			"$comment": emit.Header(file),
		} {
			if doc[k] != v {
				t.Errorf("%s: %s = %v, want %q", name, k, doc[k], v)
			}
		}
		if doc["description"] == "" || doc["description"] == nil {
			t.Errorf("%s: no description", name)
		}
		if !bytes.HasSuffix(data, []byte("}\n")) || !bytes.HasPrefix(data, []byte("{\n  \"")) {
			t.Errorf("%s: not two-space indented JSON ending with a newline", name)
		}
		compile(t, name, data)
	}
}

func TestValidation(t *testing.T) {
	files := emitSmall(t)
	item := `{"id": "i1", "count": 2, "ratio": 0.5, "ok": true, "color": "dark-blue",
		"tags": ["a"], "attrs": {"x": [1, {"y": null}]}, "data": "anything"}`
	tests := []struct {
		schema, doc string
		valid       bool
	}{
		// Every variant of every union is accepted.
		{"Decision", `{"kind": "allow"}`, true},
		{"Decision", `{"kind": "deny", "reason": "no"}`, true},
		{"Decision", `{"kind": "replace"}`, true},
		{"Decision", `{"kind": "replace", "items": [` + item + `, {"id": "i2"}]}`, true},
		{"Decision", `{"kind": "replace", "value": {"any": 1}, "nested": {"kind": "replace", "nested": {"kind": "allow"}}}`, true},
		{"Verdict", `{"kind": "deny", "reason": "no"}`, true},
		{"Verdict", `{"kind": "abstain"}`, true},
		{"DemoPayload", `{"agentId": "a1", "item": ` + item + `, "decisions": [{"kind": "allow"}]}`, true},
		{"DemoPayload", `{"agentId": "a1", "item": {"id": "i1"}}`, true},
		{"Started", `{"turn": 3}`, true},

		// Wrong or missing kind.
		{"Decision", `{"kind": "maybe"}`, false},
		{"Decision", `{"reason": "no"}`, false},
		{"Verdict", `{"kind": "allow"}`, false},
		{"Decision", `{"kind": "replace", "nested": {"kind": "abstain"}}`, false},
		// Missing required field.
		{"Decision", `{"kind": "deny"}`, false},
		{"DemoPayload", `{"agentId": "a1"}`, false},
		{"DemoPayload", `{"agentId": "a1", "item": {"count": 1}}`, false},
		{"Started", `{}`, false},
		// Unknown field, including the runtime-only agent handle.
		{"Decision", `{"kind": "allow", "reason": "x"}`, false},
		{"DemoPayload", `{"agentId": "a1", "item": {"id": "i1", "size": 1}}`, false},
		{"DemoPayload", `{"agent": {}, "agentId": "a1", "item": {"id": "i1"}}`, false},
		// Invalid enum value.
		{"DemoPayload", `{"agentId": "a1", "item": {"id": "i1", "color": "green"}}`, false},
		// Both exclusive fields set.
		{"Decision", `{"kind": "replace", "items": [], "value": 1}`, false},
		// Wrong types.
		{"Started", `{"turn": 1.5}`, false},
		{"DemoPayload", `{"agentId": "a1", "item": {"id": "i1", "tags": "a"}}`, false},
		{"DemoPayload", `{"agentId": "a1", "item": {"id": "i1", "ok": "yes"}}`, false},
		{"Decision", `"allow"`, false},
	}
	compiled := map[string]*jsonschema.Schema{}
	for name, data := range files {
		compiled[name] = compile(t, name, data)
	}
	for _, tt := range tests {
		inst, err := jsonschema.UnmarshalJSON(strings.NewReader(tt.doc))
		if err != nil {
			t.Fatalf("%s: %v", tt.doc, err)
		}
		err = compiled[tt.schema].Validate(inst)
		if (err == nil) != tt.valid {
			t.Errorf("%s %s: valid = %v, want %v (%v)", tt.schema, tt.doc, err == nil, tt.valid, err)
		}
	}
}

func TestShape(t *testing.T) {
	var payload struct {
		Properties           map[string]json.RawMessage
		Required             []string
		AdditionalProperties *bool
		Defs                 map[string]struct {
			Properties map[string]struct {
				Default     json.RawMessage
				Description string
			}
			OneOf []struct {
				Ref string `json:"$ref"`
			}
		} `json:"$defs"`
	}
	if err := json.Unmarshal(emitSmall(t)["DemoPayload"], &payload); err != nil {
		t.Fatal(err)
	}
	if _, ok := payload.Properties["agent"]; ok {
		t.Error("the runtime field agent is in the schema")
	}
	if diff := cmp.Diff([]string{"agentId", "item"}, payload.Required); diff != "" {
		t.Errorf("required (-want +got):\n%s", diff)
	}
	if payload.AdditionalProperties == nil || *payload.AdditionalProperties {
		t.Error("record is not closed")
	}
	count := payload.Defs["Item"].Properties["count"]
	if string(count.Default) != "1" || count.Description != "count is a regular int with a default." {
		t.Errorf("Item.count = %+v", count)
	}
	var refs []string
	for _, r := range payload.Defs["Decision"].OneOf {
		refs = append(refs, r.Ref)
	}
	want := []string{"#/$defs/DemoAllow", "#/$defs/DemoDeny", "#/$defs/DemoReplace"}
	if diff := cmp.Diff(want, refs); diff != "" {
		t.Errorf("Decision.oneOf (-want +got):\n%s", diff)
	}
}

func TestDeterministic(t *testing.T) {
	first, err := Emit(irtest.Small(), "out")
	if err != nil {
		t.Fatal(err)
	}
	for range 5 {
		s := irtest.Small()
		slices.Reverse(s.Events)
		slices.Reverse(s.Types)
		again, err := Emit(s, "out")
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(first, again); diff != "" {
			t.Fatalf("output differs between runs (-first +again):\n%s", diff)
		}
	}
}

func TestErrors(t *testing.T) {
	s := irtest.Small()
	item := s.Lookup("Item")
	item.Exclusive = [][]string{{"id", "nope"}}
	if _, err := Emit(s, "out"); err == nil || !strings.Contains(err.Error(), `"nope"`) {
		t.Errorf("unknown exclusive field: err = %v", err)
	}

	s = irtest.Small()
	s.Lookup("Started").Fields[0].Type = &ir.TypeRef{Kind: ir.Handle, Name: "Agent"}
	if _, err := Emit(s, "out"); err == nil || !strings.Contains(err.Error(), "field turn of Started") {
		t.Errorf("encoded handle: err = %v", err)
	}
}

// wireSpec is a spec without events and session events, as a wire package is: an enum, a
// closed record with nullable fields of every shape, and an open record.
func wireSpec() *ir.Spec {
	at := ir.Pos{File: "proto.cue", Line: 1, Col: 1}
	str := func() *ir.TypeRef { return &ir.TypeRef{Kind: ir.String} }
	field := func(name string, r *ir.TypeRef, required, nullable bool) *ir.Field {
		return &ir.Field{JSONName: name, GoName: name, Doc: name + " is a field.", Pos: at, Type: r,
			Required: required, Optional: !required, Nullable: nullable}
	}
	mode := &ir.Type{Name: "Mode", Doc: "Mode is a mode.", File: "proto.cue", Pos: at, Kind: ir.Enum,
		Values: []*ir.EnumValue{{Value: "fast", GoName: "ModeFast"}}}
	input := &ir.Type{Name: "Input", Doc: "Input is closed.", File: "proto.cue", Pos: at, Kind: ir.Record, Fields: []*ir.Field{
		field("id", str(), true, false),
		field("path", str(), true, true),
		field("mode", &ir.TypeRef{Kind: ir.Named, Name: "Mode"}, false, true),
		field("tags", &ir.TypeRef{Kind: ir.List, Elem: str()}, false, true),
		field("out", &ir.TypeRef{Kind: ir.Named, Name: "Output"}, false, true),
		field("any", &ir.TypeRef{Kind: ir.JSON}, false, false),
	}}
	output := &ir.Type{Name: "Output", Doc: "Output is open.", File: "proto.cue", Pos: at, Kind: ir.Record, Open: true,
		Fields: []*ir.Field{field("reason", str(), false, true)}}
	s := &ir.Spec{Package: "proto", Types: []*ir.Type{mode, input, output}}
	if err := s.Link(); err != nil {
		panic(err)
	}
	s.Sort()
	return s
}

func TestRecordCatalog(t *testing.T) {
	s := wireSpec()
	files, err := EmitWith(s, "out/proto", emit.Options{SpecDir: "wire"})
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string][]byte{}
	var names []string
	for _, f := range files {
		name := strings.TrimSuffix(strings.TrimPrefix(f.Path, "out/proto/"), ".schema.json")
		byName[name] = f.Data
		names = append(names, name)
	}
	// Every record, and only records, has a file.
	if diff := cmp.Diff([]string{"Input", "Output"}, names); diff != "" {
		t.Fatalf("files (-want +got):\n%s", diff)
	}
	var doc struct {
		ID      string `json:"$id"`
		Comment string `json:"$comment"`
	}
	if err := json.Unmarshal(byName["Input"], &doc); err != nil {
		t.Fatal(err)
	}
	if doc.ID != "urn:dsh:schema:proto:Input" || doc.Comment != "Code generated by dshgen from spec/wire/proto.cue. DO NOT EDIT." {
		t.Errorf("$id %q, $comment %q", doc.ID, doc.Comment)
	}
	if ID(s, "Input") != doc.ID || ID(irtest.Small(), "Item") != "urn:dsh:schema:Item" {
		t.Errorf("ID disagrees with the files")
	}
	compileAt := func(name string) *jsonschema.Schema {
		raw, err := jsonschema.UnmarshalJSON(bytes.NewReader(byName[name]))
		if err != nil {
			t.Fatal(err)
		}
		c := jsonschema.NewCompiler()
		c.DefaultDraft(jsonschema.Draft2020)
		if err := c.AddResource(ID(s, name), raw); err != nil {
			t.Fatal(err)
		}
		sch, err := c.Compile(ID(s, name))
		if err != nil {
			t.Fatalf("%s: %v\n%s", name, err, byName[name])
		}
		return sch
	}
	compiled := map[string]*jsonschema.Schema{"Input": compileAt("Input"), "Output": compileAt("Output")}
	for _, tt := range []struct {
		schema, doc string
		valid       bool
	}{
		{"Input", `{"id": "a", "path": "p", "mode": "fast", "tags": ["x"], "out": {"reason": "r"}, "any": null}`, true},
		{"Input", `{"id": "a", "path": null, "mode": null, "tags": null, "out": null}`, true},
		{"Input", `{"id": "a", "path": null, "out": {"reason": null, "later": 1}}`, true},
		{"Input", `{"id": "a"}`, false},                                  // a required nullable field is required
		{"Input", `{"id": null, "path": null}`, false},                   // a field that is not nullable
		{"Input", `{"id": "a", "path": null, "mode": "slow"}`, false},    // still an enum
		{"Input", `{"id": "a", "path": null, "tags": [null]}`, false},    // the elements are not nullable
		{"Input", `{"id": "a", "path": null, "extra": 1}`, false},        // closed
		{"Output", `{"reason": null, "anything": {"else": true}}`, true}, // open
		{"Output", `{"reason": 1}`, false},
	} {
		inst, err := jsonschema.UnmarshalJSON(strings.NewReader(tt.doc))
		if err != nil {
			t.Fatal(err)
		}
		err = compiled[tt.schema].Validate(inst)
		if (err == nil) != tt.valid {
			t.Errorf("%s %s: valid = %v, want %v (%v)", tt.schema, tt.doc, err == nil, tt.valid, err)
		}
	}
	var open map[string]any
	if err := json.Unmarshal(byName["Output"], &open); err != nil {
		t.Fatal(err)
	}
	if _, ok := open["additionalProperties"]; ok {
		t.Errorf("an open record has additionalProperties: %s", byName["Output"])
	}
}
