package claudecode

import "testing"

// TestToolInputSchemaOrder: Claude Code writes tool_input in its tool's schema order
// (measured in tools/tasks and tools/webfetch, where the model's keys came sorted): the
// toolset's tools beyond the table's too; an MCP tool's input stays as the model gave it.
func TestToolInputSchemaOrder(t *testing.T) {
	for _, c := range []struct{ tool, in, want string }{
		{"TaskCreate", `{"activeForm":"Doing","description":"d","subject":"s"}`, `{"subject":"s","description":"d","activeForm":"Doing"}`},
		{"WebFetch", `{"prompt":"p","url":"u"}`, `{"url":"u","prompt":"p"}`},
		{"TaskUpdate", `{"status":"completed","taskId":"1"}`, `{"taskId":"1","status":"completed"}`},
		{"Edit", `{"new_string":"b","old_string":"a","file_path":"f"}`, `{"file_path":"f","old_string":"a","new_string":"b","replace_all":false}`},
		{"mcp__hk__hook", `{"z":1,"a":2}`, `{"z":1,"a":2}`},
	} {
		if got := string(ToolInput(c.tool, []byte(c.in))); got != c.want {
			t.Errorf("%s %s: got %s, want %s", c.tool, c.in, got, c.want)
		}
	}
}
