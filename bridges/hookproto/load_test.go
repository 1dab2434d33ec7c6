package hookproto

import (
	"strconv"
	"strings"
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

// A timeout past the largest (a year), one that would overflow a Duration, a negative
// one or NaN-like garbage is a diagnostic naming the field, and the handler keeps the
// default: never a wrapped, negative timeout.
func TestLoadTimeoutOutOfRange(t *testing.T) {
	for _, v := range []string{strconv.Itoa(maxTimeoutSeconds + 1), "9223372037", "1e300", "-1", "0", `"10"`} {
		c, ds := Load([]byte(`{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"x","timeout":`+v+`}]}]}}`),
			LoadOptions{Dialect: "any", Events: []string{"Stop"}, Rules: &Rules{}})
		if len(ds) != 1 || !strings.HasSuffix(ds[0].Path, ".timeout") {
			t.Errorf("timeout %s: diagnostics %v, want one naming the field", v, ds)
		}
		if hs := c.Handlers("Stop"); len(hs) != 1 || hs[0].Timeout < 0 || hs[0].Timeout > maxTimeoutSeconds*time.Second {
			t.Errorf("timeout %s: handlers %+v", v, hs)
		}
	}
}
