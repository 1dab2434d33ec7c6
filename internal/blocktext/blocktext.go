// Package blocktext joins the text of content blocks: what a message or a tool result says
// where only its text counts (an answer, a transcript line, a hook's tool_response).
package blocktext

import (
	"strings"

	"github.com/dshkit/dsh/generated/dsh"
)

// Join is the text of the text blocks of blocks, in order, joined by sep; ok says whether
// blocks held a text block at all (an empty text block counts). Other blocks (reasoning,
// images, tool calls and results) are left out.
func Join(blocks []dsh.ContentBlock, sep string) (text string, ok bool) {
	var b strings.Builder
	for _, c := range blocks {
		t, isText := c.(dsh.TextBlock)
		if !isText {
			continue
		}
		if ok {
			b.WriteString(sep)
		}
		b.WriteString(t.Text)
		ok = true
	}
	return b.String(), ok
}

// Text is Join's text alone.
func Text(blocks []dsh.ContentBlock, sep string) string {
	s, _ := Join(blocks, sep)
	return s
}
