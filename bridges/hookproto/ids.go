package hookproto

import (
	"crypto/rand"
	"crypto/sha256"
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

// UUIDFor returns a UUID derived from name (the first 16 bytes of its SHA-256, marked
// version 8): the same name always gives the same UUID, so that several hooks of one
// thing (the events of one compaction attempt) share an id.
func UUIDFor(name string) string {
	sum := sha256.Sum256([]byte(name))
	b := sum[:16]
	b[6] = b[6]&0x0f | 0x80
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
