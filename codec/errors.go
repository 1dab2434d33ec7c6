package codec

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// DecodeError is the error of decoding or validating a generated type. It names the type
// and the JSON field at fault and wraps the cause: one of the Err* sentinels, or an
// encoding/json error for a malformed or mistyped value. Use errors.Is and errors.As.
type DecodeError struct {
	// Type is the Go name of the type being decoded or validated, e.g. "PreToolDeny".
	Type string
	// Field is the JSON name of the field at fault; empty when the whole value is.
	Field string
	// Err is the cause.
	Err error
}

// Error renders the error as "Type.field: cause".
func (e *DecodeError) Error() string {
	where := e.Type
	if e.Field != "" {
		where += "." + e.Field
	}
	if e.Err == nil {
		return where + ": invalid value"
	}
	return where + ": " + e.Err.Error()
}

// Unwrap returns the cause, so that errors.Is and errors.As see through a DecodeError.
func (e *DecodeError) Unwrap() error { return e.Err }

var (
	// ErrMissingField is the cause of a DecodeError for an absent required field.
	ErrMissingField = errors.New("missing required field")
	// ErrUnknownField is the cause of a DecodeError for a field the type does not declare.
	ErrUnknownField = errors.New("unknown field")
	// ErrMissingKind is the cause of a DecodeError for a union value without its
	// discriminator ("kind").
	ErrMissingKind = errors.New("missing union kind")
	// ErrUnknownKind is the cause of a DecodeError for a union value whose discriminator
	// names no variant; the message names the kind found and the kinds allowed.
	ErrUnknownKind = errors.New("unknown union kind")
	// ErrInvalidEnum is the cause of a DecodeError for a value outside its enum.
	ErrInvalidEnum = errors.New("invalid enum value")
	// ErrExclusive is the cause of a DecodeError for a record setting more than one field of
	// an exclusive group; the error's Field names the fields set, joined by "|".
	ErrExclusive = errors.New("mutually exclusive fields are set")
	// ErrNilVariant is the cause of a DecodeError for a nil union value (or nil pointer
	// variant) where one is required.
	ErrNilVariant = errors.New("nil union value")
)

// errNull is the cause of a DecodeError for a JSON null where the spec allows no null (a
// field declared `T | null` accepts it; see Nullable).
var errNull = errors.New("null is not allowed here")

// UnknownKind is the error for a union value of type typ whose discriminator name holds
// kind, which is none of kinds.
func UnknownKind[K ~string](typ, name, kind string, kinds []K) error {
	return &DecodeError{Type: typ, Field: name, Err: fmt.Errorf("%w %q (want one of %s)", ErrUnknownKind, kind, join(kinds))}
}

// FieldError wraps the failed check of field of type typ.
func FieldError(typ, field string, err error) error {
	return &DecodeError{Type: typ, Field: field, Err: err}
}

// join lists string values for messages.
func join[S ~string](values []S) string {
	parts := make([]string, len(values))
	for i, v := range values {
		parts[i] = strconv.Quote(string(v))
	}
	return strings.Join(parts, ", ")
}
