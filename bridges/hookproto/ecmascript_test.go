package hookproto

import (
	"encoding/json"
	"os"
	"testing"
)

// TestECMAScriptAgreesWithNode checks ECMAScript matchers against what JavaScript's RegExp
// (no flags, as Claude Code and Gemini CLI build their matchers) decided on a corpus of
// random patterns and subjects, measured with Node 20 (testdata/ecmascript-node20.json:
// for each pattern it accepts, a digit per subject, 1 for a match; the patterns it
// rejects). Patterns with a repeat count past 2^31 are left out: JavaScript takes them,
// regexp2 does not.
func TestECMAScriptAgreesWithNode(t *testing.T) {
	data, err := os.ReadFile("testdata/ecmascript-node20.json")
	if err != nil {
		t.Fatal(err)
	}
	var corpus struct {
		Node     string            `json:"node"`
		Subjects []string          `json:"subjects"`
		Matches  map[string]string `json:"matches"`
		Rejected []string          `json:"rejected"`
	}
	if err := json.Unmarshal(data, &corpus); err != nil {
		t.Fatal(err)
	}
	if len(corpus.Matches) < 500 || len(corpus.Rejected) < 200 {
		t.Fatalf("corpus of %d and %d patterns, want more", len(corpus.Matches), len(corpus.Rejected))
	}
	r := Rules{RegexDialect: RegexECMAScript}
	for p, want := range corpus.Matches {
		m, err := CompileRegex(r, ClaudeCode, p)
		if err != nil {
			t.Errorf("%q: %v; %s accepts it", p, err, corpus.Node)
			continue
		}
		for i, s := range corpus.Subjects {
			got, err := m.Test(s)
			if err != nil || got != (want[i] == '1') {
				t.Errorf("%q tested against %q: %v, %v; %s says %c", p, s, got, err, corpus.Node, want[i])
			}
		}
	}
	for _, p := range corpus.Rejected {
		if _, err := CompileRegex(r, ClaudeCode, p); err == nil {
			t.Errorf("%q compiles; %s rejects it", p, corpus.Node)
		}
	}
}
