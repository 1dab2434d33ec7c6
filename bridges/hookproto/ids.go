package hookproto

import (
	"crypto/rand"
	"fmt"
)

// NewUUID returns a random (version 4) UUID in its canonical text form, the form both
// engines give the session, prompt and turn ids their hooks read.
func NewUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
