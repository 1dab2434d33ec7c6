package blocktext

import (
	"testing"

	"github.com/dshkit/dsh/generated/dsh"
)

func TestJoin(t *testing.T) {
	for _, tc := range []struct {
		name   string
		blocks []dsh.ContentBlock
		sep    string
		want   string
		ok     bool
	}{
		{"none", nil, "\n", "", false},
		{"no text", []dsh.ContentBlock{dsh.ReasoningBlock{Text: "r"}}, "\n", "", false},
		{"an empty text", []dsh.ContentBlock{dsh.TextBlock{}}, "\n", "", true},
		{"joined", []dsh.ContentBlock{dsh.TextBlock{Text: "a"}, dsh.ReasoningBlock{Text: "r"}, dsh.TextBlock{Text: "b"}}, "\n", "a\nb", true},
		{"concatenated", []dsh.ContentBlock{dsh.TextBlock{Text: "a"}, dsh.TextBlock{Text: "b"}}, "", "ab", true},
	} {
		got, ok := Join(tc.blocks, tc.sep)
		if got != tc.want || ok != tc.ok {
			t.Errorf("%s: Join = %q, %v; want %q, %v", tc.name, got, ok, tc.want, tc.ok)
		}
		if Text(tc.blocks, tc.sep) != tc.want {
			t.Errorf("%s: Text = %q", tc.name, Text(tc.blocks, tc.sep))
		}
	}
}
