package tools

import (
	"testing"
	"unsafe"
)

// TestCallSize guards the size of a call's state, its one large allocation: with its
// malloc header it must stay in the 1792-byte size class (the next class is 2048 bytes,
// and the bytes a call allocates set how often the collector runs under a busy pipeline).
func TestCallSize(t *testing.T) {
	if n := unsafe.Sizeof(call{}); n > 1784 {
		t.Errorf("a call is %d bytes, over the 1784 that fit the 1792-byte size class with a malloc header", n)
	}
}
