package hookproto

import (
	"regexp"
	"testing"
)

// TestNewUUID: the canonical version-4 form (version nibble 4, variant 10xx), and two
// calls differ.
func TestNewUUID(t *testing.T) {
	re := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	a, b := NewUUID(), NewUUID()
	for _, id := range []string{a, b} {
		if !re.MatchString(id) {
			t.Errorf("%q is not a canonical version-4 UUID", id)
		}
	}
	if a == b {
		t.Errorf("two calls gave the same id %q", a)
	}
}

// UUIDFor is deterministic, differs by name, and has the canonical UUID form.
func TestUUIDFor(t *testing.T) {
	a, b := UUIDFor("cmp_1"), UUIDFor("cmp_2")
	if a != UUIDFor("cmp_1") || a == b {
		t.Errorf("UUIDFor(cmp_1)=%s twice %s, cmp_2 %s", a, UUIDFor("cmp_1"), b)
	}
	if !regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`).MatchString(a) {
		t.Errorf("UUIDFor = %q, not a version-8 UUID", a)
	}
}
