package pgstore

import (
	"strings"
	"testing"
)

// TestRedact: every password a database URL can carry is replaced, whether or not
// url.Parse takes the URL; what is not a postgres:// URL is left alone.
func TestRedact(t *testing.T) {
	for in, want := range map[string]string{
		"postgres://dsh:s3cr3t@db:5432/agents":                         "postgres://dsh:xxxxx@db:5432/agents",
		"postgresql://dsh:s3cr3t@db/agents?sslmode=disable":            "postgresql://dsh:xxxxx@db/agents?sslmode=disable",
		"postgres://dsh@db/agents?password=s3cr3t&sslmode=disable":     "postgres://dsh@db/agents?password=xxxxx&sslmode=disable",
		"postgres://dsh@db/agents?PASSWORD=s3cr3t":                     "postgres://dsh@db/agents?PASSWORD=xxxxx",
		"postgres://dsh@db/agents?sslpassword=s3cr3t":                  "postgres://dsh@db/agents?sslpassword=xxxxx",
		"postgres://dsh@db/agents":                                     "postgres://dsh@db/agents",
		"postgres://dsh:s3cr3t@db:notaport/agents?password=s3cr3t&x=1": "postgres://dsh:xxxxx@db:notaport/agents?password=xxxxx&x=1",
		"postgres://dsh:s3cr3t@db/agents?x=%zz&password=s3cr3t":        "postgres://dsh:xxxxx@db/agents?x=%zz&password=xxxxx",
		"/tmp/session.jsonl":                                           "/tmp/session.jsonl",
	} {
		got := Redact(in)
		if got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
		if strings.Contains(got, "s3cr3t") {
			t.Errorf("Redact(%q) keeps the password: %q", in, got)
		}
	}
}
