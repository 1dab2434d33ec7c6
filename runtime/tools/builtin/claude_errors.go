package builtin

import (
	"slices"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/tools"
)

// claudeFailures words the failures of Claude Code's own tools (the claude.* rows of its
// toolset) as the engine does: the message as it is, without dsh's "Error: ", and inside
// <tool_use_error> tags for the codes of wrapped, the failures the engine finds while
// validating the input (before the call runs). A content a listener replaced stays as
// it is.
func claudeFailures(d tools.Definition, wrapped ...string) tools.Definition {
	d.FinalizeContent = func(_ dsh.ToolExecution, result dsh.ToolExecutionResult) ([]dsh.ContentBlock, error) {
		f, ok := result.(dsh.ToolFailure)
		if !ok || f.Error.Info == nil || len(f.Content) != 1 {
			return nil, nil
		}
		if t, ok := f.Content[0].(dsh.TextBlock); !ok || t.Text != "Error: "+f.Error.Message {
			return nil, nil
		}
		text := f.Error.Message
		if slices.Contains(wrapped, f.Error.Info.Code) {
			text = "<tool_use_error>" + text + "</tool_use_error>"
		}
		return []dsh.ContentBlock{dsh.TextBlock{Text: text}}, nil
	}
	return d
}
