package codec

import (
	"fmt"
	"strings"
)

// Exclusive is the ErrExclusive error of type typ when more than one of the fields names
// is set (set[i] tells whether names[i] is), else nil.
func Exclusive(typ string, names []string, set ...bool) error {
	var have []string
	for i, s := range set {
		if s {
			have = append(have, names[i])
		}
	}
	if len(have) > 1 {
		return &DecodeError{Type: typ, Field: strings.Join(have, "|"), Err: ErrExclusive}
	}
	return nil
}

// EnumValue is what every generated enum is.
type EnumValue interface {
	~string
	Valid() bool
}

// CheckEnum is the ErrInvalidEnum error of an enum value outside its enum, else nil.
func CheckEnum[E EnumValue](v E) error {
	if !v.Valid() {
		return fmt.Errorf("%w %q", ErrInvalidEnum, string(v))
	}
	return nil
}

// CheckList checks every element of s, naming the index of the first one that fails.
func CheckList[T any](s []T, check func(T) error) error {
	for i, v := range s {
		if err := check(v); err != nil {
			return fmt.Errorf("[%d]: %w", i, err)
		}
	}
	return nil
}

// CheckMap checks every value of m in key order, naming the key of the first one that fails.
func CheckMap[T any](m map[string]T, check func(T) error) error {
	for _, key := range sortedKeys(m) {
		if err := check(m[key]); err != nil {
			return fmt.Errorf("[%q]: %w", key, err)
		}
	}
	return nil
}

// ListChecker turns a check of T into a check of []T.
func ListChecker[T any](check func(T) error) func([]T) error {
	return func(s []T) error { return CheckList(s, check) }
}

// MapChecker turns a check of T into a check of map[string]T.
func MapChecker[T any](check func(T) error) func(map[string]T) error {
	return func(m map[string]T) error { return CheckMap(m, check) }
}
