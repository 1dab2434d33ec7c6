package hookproto

import (
	"strconv"
	"testing"
	"time"
)

// The largest timeout a handler may set (a year) loads as given.
func TestLoadLargestTimeout(t *testing.T) {
	max := strconv.Itoa(maxTimeoutSeconds)
	c, ds := Load([]byte(`{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"x","timeout":`+max+`}]}]}}`),
		LoadOptions{Dialect: "any", Events: []string{"Stop"}, Rules: &Rules{}})
	if len(ds) != 0 {
		t.Fatalf("timeout %s: %v", max, ds)
	}
	if hs := c.Handlers("Stop"); len(hs) != 1 || hs[0].Timeout != maxTimeoutSeconds*time.Second {
		t.Errorf("timeout %s: handlers %+v", max, hs)
	}
}
