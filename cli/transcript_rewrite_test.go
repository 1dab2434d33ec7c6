package cli

import (
	"context"
	"strings"
	"testing"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/session"
)

// TestTranscriptRewrite: a rewritten tool/call shows the effective arguments, who
// rewrote them and what the model wrote; a failed rewrite shows its code.
func TestTranscriptRewrite(t *testing.T) {
	ctx := context.Background()
	l, err := session.Open(ctx, session.NewMemory())
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	model := `{"command":"make"}`
	for _, d := range []dsh.SessionEventData{
		dsh.ToolCall{Turn: 1, Step: 1, CallID: "c1", Name: "Bash", Arguments: `{"command":"( cd w && make )"}`, ModelArguments: &model,
			Rewrite: &dsh.ToolCallRewrite{Disclosure: dsh.RewriteDisclosureNotice, Chain: []dsh.RewriteStep{{By: "p#1", Kind: dsh.RewriteStepKindReplace, Digest: "sha256:x"}}}},
		dsh.ToolCall{Turn: 1, Step: 1, CallID: "c2", Name: "Bash", Arguments: model,
			RewriteError: &dsh.RewriteError{Code: dsh.RewriteErrorCodeREWRITEINVALID, Message: "missing command"}},
	} {
		if _, err := l.Append(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	for ev, err := range l.Events() {
		if err != nil {
			t.Fatal(err)
		}
		if s := line(ev); s != "" {
			got = append(got, s)
		}
	}
	want := "  ⚙ Bash {\"command\":\"( cd w && make )\"}\n    (rewritten by p#1; the model wrote {\"command\":\"make\"})\n" +
		"  ⚙ Bash {\"command\":\"make\"}\n    (rewrite failed, REWRITE_INVALID: missing command)"
	if s := strings.Join(got, "\n"); s != want {
		t.Errorf("transcript\n%s\nwant\n%s", s, want)
	}
}
