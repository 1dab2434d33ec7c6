package httporigin_test

import (
	"net/url"
	"testing"

	"github.com/dshkit/dsh/internal/httporigin"
)

func TestOf(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		same bool
	}{
		{"https://api.example/v1", "https://API.example:443/v2", true},
		{"http://127.0.0.1/x", "http://127.0.0.1:80/y", true},
		{"https://api.example/v1", "http://api.example/v1", false},
		{"https://api.example/v1", "https://api.example:8443/v1", false},
		{"https://api.example/v1", "https://evil.example/v1", false},
	} {
		a, _ := url.Parse(tc.a)
		b, _ := url.Parse(tc.b)
		if got := httporigin.Of(a) == httporigin.Of(b); got != tc.same {
			t.Errorf("%s and %s: same origin = %v, want %v", tc.a, tc.b, got, tc.same)
		}
	}
}

func TestRedact(t *testing.T) {
	u, _ := url.Parse("https://user:pw@api.example/v1?key=secret#frag")
	if got, want := httporigin.Redact(u), "https://api.example/v1"; got != want {
		t.Errorf("Redact = %q, want %q", got, want)
	}
}
