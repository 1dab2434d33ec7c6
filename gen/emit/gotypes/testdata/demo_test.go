// This test runs against the Go that gotypes emits for irtest.Small() plus the Extra record
// of gotypes_test.go; the outer test copies it into a throwaway module next to that code.

package demo

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

// fakeAgent proves the Agent interface has the documented shape.
type fakeAgent struct{}

func (fakeAgent) ID() string                                { return "agent-1" }
func (fakeAgent) Inject(context.Context, UserMessage) error { return nil }
func (fakeAgent) Steer(context.Context, UserMessage) error  { return nil }
func (fakeAgent) Halt(string)                               {}

var _ Agent = fakeAgent{}

// decodeErr asserts err wraps sentinel (unless nil) and is a *DecodeError on typ.field.
func decodeErr(t *testing.T, err, sentinel error, typ, field string) *DecodeError {
	t.Helper()
	if sentinel != nil && !errors.Is(err, sentinel) {
		t.Fatalf("error %v does not wrap %v", err, sentinel)
	}
	var de *DecodeError
	if !errors.As(err, &de) {
		t.Fatalf("error %v is not a *DecodeError", err)
	}
	if de.Type != typ || de.Field != field {
		t.Fatalf("error %v is on %s.%s, want %s.%s", err, de.Type, de.Field, typ, field)
	}
	return de
}

func ptr[T any](v T) *T { return &v }

func TestDecisionVariantsRoundTrip(t *testing.T) {
	item := Item{ID: "i1", Count: 3, Ratio: ptr(0.5), OK: ptr(true), Color: ColorDarkBlue, Tags: []string{"a"},
		Attrs: map[string]json.RawMessage{"k": json.RawMessage(`{"x":1}`)}, Data: json.RawMessage(`[1,2]`)}
	cases := []Decision{
		NewDemoAllow(),
		NewDemoDeny("no"),
		NewDemoReplace(),
		DemoReplace{Items: []Item{item}},
		DemoReplace{Value: json.RawMessage(`{"v":true}`), Nested: NewDemoDeny("inner")},
	}
	seen := map[DecisionKind]bool{}
	for _, d := range cases {
		seen[d.Kind()] = true
		data, err := json.Marshal(d)
		if err != nil {
			t.Fatalf("marshal %#v: %v", d, err)
		}
		if want := `{"kind":"` + string(d.Kind()) + `"`; !strings.HasPrefix(string(data), want) {
			t.Errorf("%s does not start with %s", data, want)
		}
		got, err := UnmarshalDecision(data)
		if err != nil {
			t.Fatalf("unmarshal %s: %v", data, err)
		}
		if !reflect.DeepEqual(got, d) {
			t.Errorf("round trip of %s: got %#v, want %#v", data, got, d)
		}
		if err := got.(interface{ Validate() error }).Validate(); err != nil {
			t.Errorf("Validate(%s): %v", data, err)
		}
	}
	for _, k := range DecisionKinds {
		if !seen[k] {
			t.Errorf("kind %s not covered", k)
		}
	}
	for _, v := range []Verdict{NewVerdictDeny("r"), NewVerdictAbstain()} {
		data, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		got, err := UnmarshalVerdict(data)
		if err != nil || !reflect.DeepEqual(got, v) {
			t.Errorf("round trip of %s: got %#v, %v", data, got, err)
		}
	}
}

func TestMarshalExactBytes(t *testing.T) {
	data, err := json.Marshal(NewDemoDeny("no"))
	if err != nil || string(data) != `{"kind":"deny","reason":"no"}` {
		t.Errorf("deny: %s, %v", data, err)
	}
	data, err = json.Marshal(Item{ID: "a"})
	if err != nil || string(data) != `{"id":"a","count":0,"tags":[]}` {
		t.Errorf("nil regular list: %s, %v", data, err)
	}
	data, err = json.Marshal(DemoPayload{Agent: fakeAgent{}, AgentID: "a1", Item: Item{ID: "i", Tags: []string{}}})
	if err != nil || string(data) != `{"agentId":"a1","item":{"id":"i","count":0,"tags":[]}}` {
		t.Errorf("payload: %s, %v", data, err)
	}
}

func TestDenyWithoutReason(t *testing.T) {
	_, err := UnmarshalDecision([]byte(`{"kind":"deny"}`))
	decodeErr(t, err, ErrMissingField, "DemoDeny", "reason")
}

func TestMissingAndUnknownKind(t *testing.T) {
	_, err := UnmarshalDecision([]byte(`{"reason":"x"}`))
	decodeErr(t, err, ErrMissingKind, "Decision", "kind")
	if !strings.Contains(err.Error(), "kind") {
		t.Errorf("%q does not name the kind", err)
	}
	_, err = UnmarshalDecision([]byte(`{"kind":"zap"}`))
	decodeErr(t, err, ErrUnknownKind, "Decision", "kind")
	if !strings.Contains(err.Error(), `"zap"`) {
		t.Errorf("%q does not name the kind", err)
	}
	var deny DemoDeny
	err = json.Unmarshal([]byte(`{"kind":"allow","reason":"x"}`), &deny)
	decodeErr(t, err, ErrUnknownKind, "DemoDeny", "kind")
	err = json.Unmarshal([]byte(`{"reason":"x"}`), &deny)
	decodeErr(t, err, ErrMissingKind, "DemoDeny", "kind")
}

func TestUnknownField(t *testing.T) {
	_, err := UnmarshalDecision([]byte(`{"kind":"allow","extra":1}`))
	decodeErr(t, err, ErrUnknownField, "DemoAllow", "extra")
	var it Item
	err = json.Unmarshal([]byte(`{"id":"a","zz":1,"bogus":2}`), &it)
	decodeErr(t, err, ErrUnknownField, "Item", "bogus")
	var p DemoPayload
	err = json.Unmarshal([]byte(`{"agent":"x","agentId":"a","item":{"id":"i"}}`), &p)
	decodeErr(t, err, ErrUnknownField, "DemoPayload", "agent")
}

func TestWrongTypesAndNull(t *testing.T) {
	for _, in := range []string{
		`{"id":1}`, `{"id":null}`, `{"id":"a","count":1.5}`, `{"id":"a","ratio":null}`,
		`{"id":"a","tags":null}`, `{"id":"a","tags":[null]}`, `{"id":"a","tags":"x"}`, `[]`, `null`,
	} {
		var it Item
		err := json.Unmarshal([]byte(in), &it)
		var de *DecodeError
		if !errors.As(err, &de) || de.Type != "Item" {
			t.Errorf("%s: got %v, want a *DecodeError on Item", in, err)
		}
	}
	var it Item
	if err := json.Unmarshal([]byte(`{"id":"a","data":null}`), &it); err != nil || string(it.Data) != "null" {
		t.Errorf("any JSON accepts null: %q, %v", it.Data, err)
	}
}

func TestInvalidEnum(t *testing.T) {
	var it Item
	err := json.Unmarshal([]byte(`{"id":"a","color":"green"}`), &it)
	decodeErr(t, err, ErrInvalidEnum, "Item", "color")
	if !strings.Contains(err.Error(), `"green"`) {
		t.Errorf("%q does not name the value", err)
	}
	var c Color
	if err := json.Unmarshal([]byte(`"dark-blue"`), &c); err != nil || c != ColorDarkBlue {
		t.Errorf("valid enum: %v, %v", c, err)
	}
	decodeErr(t, json.Unmarshal([]byte(`"blue"`), &c), ErrInvalidEnum, "Color", "")
	decodeErr(t, Item{ID: "a", Color: "green"}.Validate(), ErrInvalidEnum, "Item", "color")
	if !ColorRed.Valid() || Color("x").Valid() || len(ColorValues) != 2 {
		t.Error("Valid or ColorValues is wrong")
	}
	err = DemoPayload{Item: Item{Color: "x"}}.Validate()
	decodeErr(t, err, ErrInvalidEnum, "DemoPayload", "item")
}

func TestDefaults(t *testing.T) {
	var it Item
	if err := json.Unmarshal([]byte(`{"id":"a"}`), &it); err != nil || it.Count != 1 {
		t.Errorf("default count: %d, %v", it.Count, err)
	}
	if err := json.Unmarshal([]byte(`{"id":"a","count":5}`), &it); err != nil || it.Count != 5 {
		t.Errorf("explicit count: %d, %v", it.Count, err)
	}
	var x Extra
	if err := json.Unmarshal([]byte(`{"verdict":{"kind":"abstain"},"wait":1500}`), &x); err != nil {
		t.Fatal(err)
	}
	if x.Mode != ColorDarkBlue || x.Name != "anon" || x.Wait != 1500*time.Millisecond || x.Timeout != nil {
		t.Errorf("defaults: %+v", x)
	}
}

func TestExclusive(t *testing.T) {
	_, err := UnmarshalDecision([]byte(`{"kind":"replace","items":[],"value":1}`))
	decodeErr(t, err, ErrExclusive, "DemoReplace", "items|value")
	if !strings.Contains(err.Error(), "items") || !strings.Contains(err.Error(), "value") {
		t.Errorf("%q does not name the fields", err)
	}
	err = DemoReplace{Items: []Item{}, Value: json.RawMessage(`1`)}.Validate()
	decodeErr(t, err, ErrExclusive, "DemoReplace", "items|value")
	if _, err := UnmarshalDecision([]byte(`{"kind":"replace","value":1}`)); err != nil {
		t.Errorf("one field of the group: %v", err)
	}
}

func TestUnionFieldsDecode(t *testing.T) {
	d, err := UnmarshalDecision([]byte(`{"kind":"replace","nested":{"kind":"deny","reason":"r"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if n := d.(DemoReplace).Nested; !reflect.DeepEqual(n, DemoDeny{Reason: "r"}) {
		t.Errorf("nested: %#v", n)
	}
	_, err = UnmarshalDecision([]byte(`{"kind":"replace","nested":{"kind":"deny"}}`))
	decodeErr(t, err, ErrMissingField, "DemoReplace", "nested")

	var p DemoPayload
	in := `{"agentId":"a","item":{"id":"i"},"decisions":[{"kind":"allow"},{"kind":"deny","reason":"r"}]}`
	if err := json.Unmarshal([]byte(in), &p); err != nil {
		t.Fatal(err)
	}
	if want := []Decision{DemoAllow{}, DemoDeny{Reason: "r"}}; !reflect.DeepEqual(p.Decisions, want) {
		t.Errorf("decisions: %#v", p.Decisions)
	}
	err = json.Unmarshal([]byte(`{"agentId":"a","item":{"id":"i"},"decisions":[{"kind":"allow"},{"kind":"nope"}]}`), &p)
	decodeErr(t, err, ErrUnknownKind, "DemoPayload", "decisions")

	var x Extra
	in = `{"verdict":{"kind":"deny","reason":"v"},"wait":0,"byKind":{"a":{"kind":"allow"}},"colors":["red"]}`
	if err := json.Unmarshal([]byte(in), &x); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(x.ByKind, map[string]Decision{"a": DemoAllow{}}) || !reflect.DeepEqual(x.Verdict, VerdictDeny{Reason: "v"}) {
		t.Errorf("extra: %#v", x)
	}
	data, err := json.Marshal(x)
	want := `{"verdict":{"kind":"deny","reason":"v"},"byKind":{"a":{"kind":"allow"}},"colors":["red"],"mode":"dark-blue","name":"anon","wait":0,"labels":{}}`
	if err != nil || string(data) != want {
		t.Errorf("extra marshal:\n got %s, %v\nwant %s", data, err, want)
	}
	err = json.Unmarshal([]byte(`{"wait":0}`), &x)
	decodeErr(t, err, ErrMissingField, "Extra", "verdict")
	err = json.Unmarshal([]byte(`{"verdict":{"kind":"abstain"},"wait":0,"colors":["pink"]}`), &x)
	decodeErr(t, err, ErrInvalidEnum, "Extra", "colors")
}

func TestValidateNilVariants(t *testing.T) {
	decodeErr(t, Extra{Mode: ColorRed}.Validate(), ErrNilVariant, "Extra", "verdict")
	var nilDeny *VerdictDeny
	decodeErr(t, Extra{Mode: ColorRed, Verdict: nilDeny}.Validate(), ErrNilVariant, "Extra", "verdict")
	if err := (Extra{Mode: ColorRed, Verdict: &VerdictDeny{}}).Validate(); err != nil {
		t.Errorf("pointer variant: %v", err)
	}
	err := DemoPayload{Decisions: []Decision{DemoAllow{}, nil}}.Validate()
	decodeErr(t, err, ErrNilVariant, "DemoPayload", "decisions")
	err = Extra{Mode: ColorRed, Verdict: VerdictAbstain{}, ByKind: map[string]Decision{"x": DemoReplace{Nested: DemoAllow{}, Items: []Item{{Color: "bad"}}}}}.Validate()
	if !errors.Is(err, ErrInvalidEnum) || !strings.Contains(err.Error(), `"x"`) {
		t.Errorf("nested map validation: %v", err)
	}
}

func TestSwitch(t *testing.T) {
	name := func(d Decision) string {
		return SwitchDecision(d,
			func(DemoAllow) string { return "allow" },
			func(v DemoDeny) string { return "deny:" + v.Reason },
			func(DemoReplace) string { return "replace" },
		)
	}
	for _, c := range []struct {
		d    Decision
		want string
	}{
		{DemoAllow{}, "allow"}, {&DemoAllow{}, "allow"},
		{DemoDeny{Reason: "r"}, "deny:r"}, {&DemoDeny{Reason: "p"}, "deny:p"},
		{DemoReplace{}, "replace"}, {&DemoReplace{}, "replace"},
	} {
		if got := name(c.d); got != c.want {
			t.Errorf("Switch(%#v) = %q, want %q", c.d, got, c.want)
		}
	}
	for _, d := range []Decision{nil, (*DemoDeny)(nil)} {
		func() {
			defer func() {
				if r := recover(); r == nil || !strings.Contains(r.(string), "nil Decision") {
					t.Errorf("Switch(%#v) recovered %v, want a nil Decision panic", d, r)
				}
			}()
			name(d)
		}()
	}
}

func TestTokens(t *testing.T) {
	a, b := NewToken(), NewToken()
	if a == b || a.IsZero() || b.IsZero() || !(Token{}).IsZero() || a != a {
		t.Errorf("tokens: %v %v", a, b)
	}
	x := Extra{Verdict: VerdictAbstain{}, Token: a}
	data, err := json.Marshal(x)
	if err != nil || strings.Contains(string(data), "token") {
		t.Errorf("a token is encoded: %s, %v", data, err)
	}
}

func TestNullable(t *testing.T) {
	var w Wire
	in := `{"path":null,"mode":null,"verdict":null,"item":null,"tags":null,"wait":null}`
	if err := json.Unmarshal([]byte(in), &w); err != nil {
		t.Fatal(err)
	}
	if w.Path != nil || w.Mode != "" || w.Verdict != nil || w.Item != nil || w.Tags != nil || w.Wait != nil ||
		w.Note != nil || w.Label == nil || *w.Label != "x" {
		t.Errorf("null decodes as absent, defaults apply: %+v", w)
	}
	if err := w.Validate(); err != nil {
		t.Errorf("absent nullable fields validate: %v", err)
	}
	// Absent required and regular nullable fields encode as null; optional ones are omitted.
	data, err := json.Marshal(Wire{})
	if want := `{"path":null,"mode":null,"verdict":null,"wait":null,"note":null,"label":null}`; err != nil || string(data) != want {
		t.Errorf("nil nullable fields:\n got %s, %v\nwant %s", data, err, want)
	}
	// Required nullable fields must still be present.
	err = json.Unmarshal([]byte(`{"mode":null,"verdict":null}`), &w)
	decodeErr(t, err, ErrMissingField, "Wire", "path")
	// Set values round-trip.
	full := Wire{Path: ptr("p"), Mode: ColorRed, Verdict: NewVerdictDeny("r"), Item: &Item{ID: "i", Tags: []string{}},
		Tags: []string{"a"}, Wait: ptr(2 * time.Millisecond), Note: ptr("n"), Label: ptr("l")}
	data, err = json.Marshal(full)
	if err != nil {
		t.Fatal(err)
	}
	var got Wire
	if err := json.Unmarshal(data, &got); err != nil || !reflect.DeepEqual(got, full) {
		t.Errorf("round trip of %s: %+v, %v", data, got, err)
	}
	// Values are still checked.
	err = json.Unmarshal([]byte(`{"path":"p","mode":"green","verdict":null}`), &w)
	decodeErr(t, err, ErrInvalidEnum, "Wire", "mode")
	err = json.Unmarshal([]byte(`{"path":1,"mode":null,"verdict":null}`), &w)
	decodeErr(t, err, nil, "Wire", "path")
	decodeErr(t, Wire{Mode: "green"}.Validate(), ErrInvalidEnum, "Wire", "mode")
	// A field that is not nullable still rejects null.
	var it Item
	if err := json.Unmarshal([]byte(`{"id":"a","ratio":null}`), &it); err == nil {
		t.Error("a non-nullable optional field accepts null")
	}
}

func TestOpen(t *testing.T) {
	var w Wire
	in := `{"path":"p","mode":"red","verdict":{"kind":"abstain"},"future":{"x":1},"other":null}`
	if err := json.Unmarshal([]byte(in), &w); err != nil {
		t.Fatalf("an open record rejects unknown fields: %v", err)
	}
	if w.Path == nil || *w.Path != "p" || w.Mode != ColorRed {
		t.Errorf("decoded %+v", w)
	}
	// Declared fields are still decoded strictly, and nested closed records stay closed.
	err := json.Unmarshal([]byte(`{"mode":null,"verdict":null,"future":1}`), &w)
	decodeErr(t, err, ErrMissingField, "Wire", "path")
	err = json.Unmarshal([]byte(`{"path":null,"mode":null,"verdict":null,"item":{"id":"i","zz":1}}`), &w)
	decodeErr(t, err, ErrUnknownField, "Wire", "item")
}
