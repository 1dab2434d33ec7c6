package tools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
)

// schema is a compiled JSON Schema (draft 2020-12 unless the document says otherwise).
type schema struct {
	s *jsonschema.Schema
}

// noLoader refuses every external reference: tool schemas must be self-contained.
type noLoader struct{}

// Load refuses url.
func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("external schema reference %q is not supported", url)
}

// compileSchema compiles a tool schema document; nil or empty means no schema.
func compileSchema(doc []byte, loc string) (*schema, error) {
	if len(bytes.TrimSpace(doc)) == 0 {
		return nil, nil
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(noLoader{})
	if err := c.AddResource(loc, v); err != nil {
		return nil, err
	}
	s, err := c.Compile(loc)
	if err != nil {
		return nil, err
	}
	return &schema{s: s}, nil
}

// validate checks the lossless JSON data against s and returns its violations, joined by
// "; ", or "" when it is valid. Paths start at root ("" for arguments, whose properties
// are named bare, e.g. `"path" must be a string`; "value" for a tool value, e.g.
// `"value" must be a string`); the arguments as a whole are called "arguments".
func (s *schema) validate(data []byte, root string) string {
	v, err := decodeJSON(data)
	if err != nil {
		return "not valid JSON"
	}
	err = s.s.Validate(v)
	if err == nil {
		return ""
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return err.Error()
	}
	var out []string
	collectViolations(ve, v, root, &out)
	if len(out) == 0 {
		out = append(out, quotedPath(root, "")+" does not match the schema")
	}
	return strings.Join(out, "; ")
}

// collectViolations appends the messages of the leaves of the error tree e, whose
// instance is doc.
func collectViolations(e *jsonschema.ValidationError, doc any, root string, out *[]string) {
	if len(e.Causes) > 0 {
		for _, c := range e.Causes {
			collectViolations(c, doc, root, out)
		}
		return
	}
	path := instancePath(doc, root, e.InstanceLocation)
	switch k := e.ErrorKind.(type) {
	case *kind.Type:
		*out = append(*out, quotedPath(root, path)+" must be "+typeList(k.Want))
	case *kind.Required:
		for _, m := range k.Missing {
			*out = append(*out, "missing required property "+strconv.Quote(joinPath(path, m)))
		}
	case *kind.Enum:
		*out = append(*out, quotedPath(root, path)+" must be one of "+compactJSON(k.Want))
	case *kind.Const:
		*out = append(*out, quotedPath(root, path)+" must be "+compactJSON(k.Want))
	case *kind.AdditionalProperties:
		for _, name := range k.Properties {
			*out = append(*out, "unknown property "+strconv.Quote(joinPath(path, name)))
		}
	case *kind.FalseSchema:
		*out = append(*out, quotedPath(root, path)+" is not allowed")
	default:
		*out = append(*out, quotedPath(root, path)+": "+leafMessage(e))
	}
}

// instancePath renders an instance location: ".name" for a property, "[i]" for an array
// index, starting from root.
func instancePath(doc any, root string, loc []string) string {
	path := root
	cur := doc
	for _, tok := range loc {
		switch node := cur.(type) {
		case []any:
			path += "[" + tok + "]"
			if i, err := strconv.Atoi(tok); err == nil && i >= 0 && i < len(node) {
				cur = node[i]
			} else {
				cur = nil
			}
		case map[string]any:
			path = joinPath(path, tok)
			cur = node[tok]
		default:
			path = joinPath(path, tok)
			cur = nil
		}
	}
	return path
}

func joinPath(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// quotedPath is the quoted path, or the bare word "arguments" for the arguments as a
// whole.
func quotedPath(root, path string) string {
	if path == "" {
		if root == "" {
			return "arguments"
		}
		path = root
	}
	return strconv.Quote(path)
}

// leafMessage is the library's message for one violation, without its location.
func leafMessage(e *jsonschema.ValidationError) string {
	leaf := &jsonschema.ValidationError{ErrorKind: e.ErrorKind}
	return strings.TrimPrefix(leaf.Error(), "at '': ")
}

func compactJSON(v any) string {
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(data)
}

// typeList renders JSON Schema type names as "a string", "an object or null", ...
func typeList(types []string) string {
	parts := make([]string, len(types))
	for i, t := range types {
		switch t {
		case "object", "array", "integer":
			parts[i] = "an " + t
		case "null":
			parts[i] = "null"
		default:
			parts[i] = "a " + t
		}
	}
	return strings.Join(parts, " or ")
}
