// Package validutf8 finds the text that encoding/json does not carry exactly: a string that
// is not valid UTF-8, which it encodes, silently, with U+FFFD in place of the invalid bytes.
// Such text is not lossless JSON (docs/design/SEMANTICS.md#0-shared-vocabulary), and the runtime refuses it wherever
// it takes a snapshot: tool values and results, context messages, session records.
package validutf8

import (
	"bytes"
	"fmt"
	"reflect"
	"strconv"
	"unicode/utf8"
)

// Encoded reports whether data, what encoding/json (or a generated MarshalJSON) made of v,
// carries v's text exactly. It does not when data is not valid UTF-8 (raw JSON or a
// MarshalJSON method wrote invalid bytes), or when a string or map key of v is not valid
// UTF-8 and was replaced. The encoder writes such a replacement as the escape \ufffd (a
// valid U+FFFD is written as it is), so v is walked only when data holds that escape. When
// it returns false, path says where, below root.
func Encoded(data []byte, v any, root string) (path string, ok bool) {
	if !utf8.Valid(data) {
		return root + " (its JSON)", false
	}
	if !bytes.Contains(data, []byte(`\ufffd`)) {
		return "", true
	}
	path, bad := Find(reflect.ValueOf(v), root)
	return path, !bad
}

// maxDepth bounds the walk of Find (a value that was just encoded has no cycle).
const maxDepth = 1000

// Find looks for a string or string map key in v that is not valid UTF-8 and returns its
// path below root. It follows pointers, interfaces, exported and embedded struct fields,
// slices, arrays and maps; byte slices and arrays (raw JSON, or bytes encoded as base64)
// are not text. Unless it finds one, it allocates only to read maps.
func Find(v reflect.Value, root string) (string, bool) {
	if suffix, bad := find(v, 0); bad {
		return root + suffix, true
	}
	return "", false
}

// find is Find, returning the path below v, built on the way back up.
func find(v reflect.Value, depth int) (string, bool) {
	if !v.IsValid() || depth > maxDepth {
		return "", false
	}
	switch v.Kind() {
	case reflect.String:
		return "", !utf8.ValidString(v.String())
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			return find(v.Elem(), depth+1)
		}
	case reflect.Struct:
		t := v.Type()
		for i := range t.NumField() {
			if f := t.Field(i); f.IsExported() || f.Anonymous {
				if p, bad := find(v.Field(i), depth+1); bad {
					return "." + f.Name + p, true
				}
			}
		}
	case reflect.Slice, reflect.Array:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return "", false
		}
		for i := range v.Len() {
			if p, bad := find(v.Index(i), depth+1); bad {
				return "[" + strconv.Itoa(i) + "]" + p, true
			}
		}
	case reflect.Map:
		for it := v.MapRange(); it.Next(); {
			k := it.Key()
			if k.Kind() == reflect.String && !utf8.ValidString(k.String()) {
				return " (a map key)", true
			}
			if p, bad := find(it.Value(), depth+1); bad {
				return "[" + fmt.Sprint(keyOf(k)) + "]" + p, true
			}
		}
	}
	return "", false
}

// keyOf is a map key as the path shows it (an unexported key type is shown by its kind).
func keyOf(k reflect.Value) any {
	if k.CanInterface() {
		return k.Interface()
	}
	return k.Kind()
}
