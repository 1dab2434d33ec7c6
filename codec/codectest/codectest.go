// Package codectest is the test support of the round-trip tests dshgen generates
// (`roundtrip_test.go` in every generated package): the checks that a generated type
// survives a JSON round trip, that its JSON validates against its JSON Schema, and that the
// schema and the strict decoder agree on what they reject. Like package codec it exists for
// generated code; it imports github.com/google/go-cmp and
// github.com/santhosh-tekuri/jsonschema/v6, which only the generated tests (never the
// generated packages) pull in.
package codectest

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/dshkit/dsh/codec"
)

// Closed and Open say whether a record rejects or ignores the fields it does not declare.
const (
	Closed = false
	Open   = true
)

// Schemas finds, compiles and caches the JSON Schema files of one generated package, and
// holds how to compare its values.
type Schemas struct {
	dir, idPrefix string
	options       []cmp.Option

	mu       sync.Mutex
	compiled map[string]*jsonschema.Schema
}

// NewSchemas returns the schemas in dir (relative to the test's package), each
// <Type>.schema.json with the $id idPrefix+Type; opts compare values (the runtime handles,
// which cmp cannot read by itself).
func NewSchemas(dir, idPrefix string, opts ...cmp.Option) *Schemas {
	return &Schemas{dir: dir, idPrefix: idPrefix, options: opts, compiled: map[string]*jsonschema.Schema{}}
}

// validate validates data against <name>.schema.json.
func (s *Schemas) validate(t *testing.T, name string, data []byte) error {
	t.Helper()
	s.mu.Lock()
	sch, ok := s.compiled[name]
	s.mu.Unlock()
	if !ok {
		raw, err := os.ReadFile(filepath.Join(s.dir, name+".schema.json"))
		if err != nil {
			t.Fatal(err)
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
		if err != nil {
			t.Fatalf("%s.schema.json: %v", name, err)
		}
		c := jsonschema.NewCompiler()
		c.DefaultDraft(jsonschema.Draft2020)
		url := s.idPrefix + name
		if err := c.AddResource(url, doc); err != nil {
			t.Fatalf("%s.schema.json: %v", name, err)
		}
		if sch, err = c.Compile(url); err != nil {
			t.Fatalf("%s.schema.json: %v", name, err)
		}
		s.mu.Lock()
		s.compiled[name] = sch
		s.mu.Unlock()
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("%s: %v", data, err)
	}
	return sch.Validate(inst)
}

// CheckVariant round-trips want, a variant of a union, through JSON and unmarshal, then
// requires the schema (when there is one; "" says none) and unmarshal to reject it with an
// unknown and without a discriminator.
func CheckVariant[U any](t *testing.T, s *Schemas, schema, discriminator string, want U, unmarshal func([]byte) (U, error)) {
	t.Helper()
	data := encodeSample(t, want)
	if schema != "" {
		if err := s.validate(t, schema, data); err != nil {
			t.Errorf("%s does not validate against %s.schema.json: %v", data, schema, err)
		}
	}
	got, err := unmarshal(data)
	if err != nil {
		t.Fatalf("unmarshal %s: %v", data, err)
	}
	if diff := cmp.Diff(want, got, s.options...); diff != "" {
		t.Errorf("round trip through %s (-want +got):\n%s", data, diff)
	}

	fields := object(t, data)
	fields[discriminator] = json.RawMessage(`"no-such-kind"`)
	rejects(t, s, schema, fields, unmarshal, codec.ErrUnknownKind)
	delete(fields, discriminator)
	rejects(t, s, schema, fields, unmarshal, codec.ErrMissingKind)
}

// rejects requires the schema (when there is one) to reject the object fields, and
// unmarshal to fail on it with an error wrapping sentinel.
func rejects[U any](t *testing.T, s *Schemas, schema string, fields map[string]json.RawMessage, unmarshal func([]byte) (U, error), sentinel error) {
	t.Helper()
	data := marshal(t, fields)
	if schema != "" && s.validate(t, schema, data) == nil {
		t.Errorf("%s.schema.json accepts %s", schema, data)
	}
	if _, err := unmarshal(data); !errors.Is(err, sentinel) {
		t.Errorf("unmarshal %s: %v, want an error wrapping %q", data, err, sentinel)
	}
}

// CheckRecord round-trips want, a record with a schema file, through JSON, the schema
// and json.Unmarshal, then adds an unknown field, which the schema and the decoder must both
// reject when the record is closed and both accept when it is open.
func CheckRecord[T interface{ Validate() error }](t *testing.T, s *Schemas, schema string, isOpen bool, want T) {
	t.Helper()
	data := encodeSample(t, want)
	decodeRecord(t, s, schema, data, want)

	fields := object(t, data)
	fields["no-such-field"] = json.RawMessage("1")
	data = marshal(t, fields)
	schemaErr := s.validate(t, schema, data)
	var extra T
	decodeErr := json.Unmarshal(data, &extra)
	switch {
	case isOpen && (schemaErr != nil || decodeErr != nil):
		t.Errorf("open record with an unknown field %s: schema: %v, unmarshal: %v; want both to accept it", data, schemaErr, decodeErr)
	case isOpen:
		if diff := cmp.Diff(want, extra, s.options...); diff != "" {
			t.Errorf("the unknown field of %s changed the value (-want +got):\n%s", data, diff)
		}
	case schemaErr == nil:
		t.Errorf("%s.schema.json accepts the unknown field of %s", schema, data)
	case !errors.Is(decodeErr, codec.ErrUnknownField):
		t.Errorf("unmarshal %s: %v, want an error wrapping %q", data, decodeErr, codec.ErrUnknownField)
	}
}

// CheckNulls round-trips want, a record whose nullable fields are all absent, through JSON
// where every one of them is null: the required and regular ones encode as null, and the
// optional ones (named by optional), which encode as absent, are set to null here, as a peer
// may send them.
func CheckNulls[T interface{ Validate() error }](t *testing.T, s *Schemas, schema string, want T, optional ...string) {
	t.Helper()
	fields := object(t, encodeSample(t, want))
	for _, name := range optional {
		fields[name] = json.RawMessage("null")
	}
	decodeRecord(t, s, schema, marshal(t, fields), want)
}

// encodeSample checks that want, a sample value, validates (when it has a Validate method)
// and returns its JSON.
func encodeSample(t *testing.T, want any) []byte {
	t.Helper()
	if v, ok := want.(interface{ Validate() error }); ok {
		if err := v.Validate(); err != nil {
			t.Errorf("the sample does not validate: %v", err)
		}
	}
	data, err := json.Marshal(want)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	return data
}

// decodeRecord requires data to validate against <schema>.schema.json and to decode, with
// the record's UnmarshalJSON, to want.
func decodeRecord[T any](t *testing.T, s *Schemas, schema string, data []byte, want T) {
	t.Helper()
	if err := s.validate(t, schema, data); err != nil {
		t.Errorf("%s does not validate against %s.schema.json: %v", data, schema, err)
	}
	var got T
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatalf("unmarshal %s: %v", data, err)
	}
	if diff := cmp.Diff(want, got, s.options...); diff != "" {
		t.Errorf("round trip through %s (-want +got):\n%s", data, diff)
	}
}

// object decodes data, a JSON object, into its fields.
func object(t *testing.T, data []byte) map[string]json.RawMessage {
	t.Helper()
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		t.Fatal(err)
	}
	return fields
}

// marshal encodes fields.
func marshal(t *testing.T, fields map[string]json.RawMessage) []byte {
	t.Helper()
	data, err := json.Marshal(fields)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// Ptr returns a pointer to a copy of v, for optional fields.
func Ptr[T any](v T) *T { return &v }
