package syncbuf

import (
	"strings"
	"sync"
	"testing"
)

// TestConcurrentWrites: writes from many goroutines all land, whole (run under -race).
func TestConcurrentWrites(t *testing.T) {
	var b Buffer
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() {
			for range 20 {
				_, _ = b.Write([]byte("ab\n"))
				_ = b.String()
			}
		})
	}
	wg.Wait()
	s := b.String()
	if n := strings.Count(s, "ab\n"); n != 1000 || len(s) != 3000 {
		t.Errorf("%d whole writes in %d bytes, want 1000 in 3000", n, len(s))
	}
}
