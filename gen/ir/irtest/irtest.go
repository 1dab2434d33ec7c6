// Package irtest builds small, hand-made IR specs for emitter tests, so that emitters can
// be tested without CUE.
package irtest

import "github.com/dshkit/dsh/gen/ir"

func pos(file string, line int) ir.Pos { return ir.Pos{File: file, Line: line, Col: 1} }

func str() *ir.TypeRef               { return &ir.TypeRef{Kind: ir.String} }
func named(n string) *ir.TypeRef     { return &ir.TypeRef{Kind: ir.Named, Name: n} }
func list(e *ir.TypeRef) *ir.TypeRef { return &ir.TypeRef{Kind: ir.List, Elem: e} }

func field(json, goName, doc string, t *ir.TypeRef, mod string) *ir.Field {
	f := &ir.Field{JSONName: json, GoName: goName, Doc: doc, Type: t, Pos: pos("demo.cue", 1)}
	switch mod {
	case "!":
		f.Required = true
	case "?":
		f.Optional = true
	}
	return f
}

func kindField() *ir.Field {
	return field("kind", "Kind", "kind discriminates the variant.", str(), "!")
}

// Small returns a spec with one of everything: an enum, records with every field shape,
// a union with an exclusive group, one event per domain and a session event. Every record
// and union asks for its accessors. Every call returns a fresh, linked, sorted spec.
func Small() *ir.Spec {
	color := &ir.Type{Name: "Color", Doc: "Color is a demo enum.", File: "demo.cue", Pos: pos("demo.cue", 3), Kind: ir.Enum,
		Values: []*ir.EnumValue{{Value: "red", GoName: "ColorRed"}, {Value: "dark-blue", GoName: "ColorDarkBlue"}}}
	item := &ir.Type{Name: "Item", Doc: "Item is a demo record.", File: "demo.cue", Pos: pos("demo.cue", 6), Kind: ir.Record,
		Fields: []*ir.Field{
			field("id", "ID", "id identifies the item.", str(), "!"),
			field("count", "Count", "count is a regular int with a default.", &ir.TypeRef{Kind: ir.Int}, ""),
			field("ratio", "Ratio", "ratio is optional.", &ir.TypeRef{Kind: ir.Float}, "?"),
			field("ok", "OK", "ok is optional.", &ir.TypeRef{Kind: ir.Bool}, "?"),
			field("color", "Color", "color is an enum.", named("Color"), "?"),
			field("tags", "Tags", "tags is a regular list.", list(str()), ""),
			field("attrs", "Attrs", "attrs is a map.", &ir.TypeRef{Kind: ir.Map, Elem: &ir.TypeRef{Kind: ir.JSON}}, "?"),
			field("data", "Data", "data is any JSON.", &ir.TypeRef{Kind: ir.JSON}, "?"),
		}}
	item.Fields[1].Default = "1"
	allow := &ir.Type{Name: "DemoAllow", Doc: "DemoAllow lets it pass.", File: "demo.cue", Pos: pos("demo.cue", 20), Kind: ir.Record,
		Fields: []*ir.Field{kindField()}}
	deny := &ir.Type{Name: "DemoDeny", Doc: "DemoDeny stops it.", File: "demo.cue", Pos: pos("demo.cue", 24), Kind: ir.Record,
		Fields: []*ir.Field{kindField(), field("reason", "Reason", "reason is shown.", str(), "!")}}
	replace := &ir.Type{Name: "DemoReplace", Doc: "DemoReplace swaps content or value.", File: "demo.cue", Pos: pos("demo.cue", 28), Kind: ir.Record,
		Fields: []*ir.Field{kindField(),
			field("items", "Items", "items replace the items.", list(named("Item")), "?"),
			field("value", "Value", "value replaces the value.", &ir.TypeRef{Kind: ir.JSON}, "?"),
			field("nested", "Nested", "nested is a union-typed field.", named("Decision"), "?"),
		},
		Exclusive: [][]string{{"items", "value"}}}
	decision := &ir.Type{Name: "Decision", Doc: "Decision is a demo union.", File: "demo.cue", Pos: pos("demo.cue", 18), Kind: ir.Union,
		Discriminator: "kind",
		Variants:      []*ir.Variant{{Kind: "allow", Type: allow}, {Kind: "deny", Type: deny}, {Kind: "replace", Type: replace}}}
	payload := &ir.Type{Name: "DemoPayload", Doc: "DemoPayload is what demo listeners get.", File: "demo.cue", Pos: pos("demo.cue", 40), Kind: ir.Record,
		Fields: []*ir.Field{
			{JSONName: "agent", GoName: "Agent", Doc: "agent is the agent handle.", Type: &ir.TypeRef{Kind: ir.Handle, Name: "Agent"}, Required: true, Runtime: true, Pos: pos("demo.cue", 42)},
			field("agentId", "AgentID", "agentId is the subject.", str(), "!"),
			field("item", "Item", "item is the item.", named("Item"), "!"),
			field("decisions", "Decisions", "decisions is a list of unions.", list(named("Decision")), "?"),
		}}
	verdict := &ir.Type{Name: "Verdict", Doc: "Verdict is a guard verdict.", File: "demo.cue", Pos: pos("demo.cue", 50), Kind: ir.Union, Discriminator: "kind",
		Variants: []*ir.Variant{
			{Kind: "deny", Type: &ir.Type{Name: "VerdictDeny", Doc: "VerdictDeny denies.", File: "demo.cue", Kind: ir.Record, Fields: []*ir.Field{kindField(), field("reason", "Reason", "reason is shown.", str(), "!")}}},
			{Kind: "abstain", Type: &ir.Type{Name: "VerdictAbstain", Doc: "VerdictAbstain abstains.", File: "demo.cue", Kind: ir.Record, Fields: []*ir.Field{kindField()}}},
		}}
	started := &ir.Type{Name: "Started", Doc: "Started is session event data.", File: "log.cue", Pos: pos("log.cue", 3), Kind: ir.Record,
		Fields: []*ir.Field{field("turn", "Turn", "turn is the turn number.", &ir.TypeRef{Kind: ir.Int}, "!")}}

	msg := &ir.Type{Name: "UserMessage", Doc: "UserMessage is a message an Agent handle accepts.", File: "demo.cue", Pos: pos("demo.cue", 70), Kind: ir.Record,
		Fields: []*ir.Field{field("id", "ID", "id identifies the message.", str(), "!"), field("text", "Text", "text is the message.", str(), "!")}}

	s := &ir.Spec{Package: "demo"}
	s.Types = []*ir.Type{msg, color, item, decision, allow, deny, replace, payload, verdict, verdict.Variants[0].Type, verdict.Variants[1].Type, started}
	subject := []string{"AgentID"}
	ev := func(name, goName string, d ir.Domain, dec *ir.Type, def string) *ir.Event {
		return &ir.Event{Name: name, GoName: goName, Doc: name + " is a demo " + string(d) + ".", File: "demo.cue", Pos: pos("demo.cue", 60),
			Domain: d, Payload: payload, Decision: dec, Default: def, Subject: subject}
	}
	s.Events = []*ir.Event{
		ev("demo/policy", "Policy", ir.Waterfall, decision, "allow"),
		ev("demo/guard", "DemoGuard", ir.Guard, verdict, "abstain"),
		ev("demo/run", "Run", ir.Wrapper, decision, ""),
		ev("demo/fold", "Fold", ir.Fold, decision, "allow"),
		ev("demo/stopping", "Stopping", ir.Notification, nil, ""),
		ev("demo/seen", "Seen", ir.Observer, nil, ""),
		ev("demo/vote", "Vote", ir.Vote, decision, "allow"),
	}
	s.SessionEvents = []*ir.SessionEvent{{Type: "demo/started", GoName: "DemoStarted", Doc: "demo/started records a start.", File: "log.cue", Pos: pos("log.cue", 8), Data: started, Owner: "runtime"}}
	if err := s.Link(); err != nil {
		panic(err)
	}
	s.Sort()
	for _, t := range s.Types {
		t.Accessors = t.Kind == ir.Record || t.Kind == ir.Union // every accessor shape
	}
	return s
}
