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
