package hookbridge

import (
	"testing"

	"github.com/dshkit/dsh/generated/hookmap"
)

// TestEngineToolInput: a tool the table describes gets the engine's key order and
// defaults, unknown keys after in the model's order; other tools and non-objects are left
// as they are.
func TestEngineToolInput(t *testing.T) {
	tb := &hookmap.Bridge{ToolInputs: map[string]hookmap.ToolInput{
		"Write": {Keys: []string{"file_path", "content"}},
		"Edit":  {Keys: []string{"file_path", "old_string", "new_string", "replace_all"}, Defaults: map[string]string{"replace_all": "false"}},
	}}
	for _, c := range []struct{ tool, in, want string }{
		{"Write", `{"content": "x", "file_path":"a.txt"}`, `{"file_path":"a.txt","content":"x"}`},
		{"Write", `{"extra":1,"content":"x","file_path":"a"}`, `{"file_path":"a","content":"x","extra":1}`},
		{"Edit", `{"new_string":"b","old_string":"a","file_path":"f"}`, `{"file_path":"f","old_string":"a","new_string":"b","replace_all":false}`},
		{"Edit", `{"replace_all":true,"file_path":"f"}`, `{"file_path":"f","replace_all":true}`},
		{"Edit", ``, `{"replace_all":false}`},
		{"Write", `{"file_path":"a","file_path":"b"}`, `{"file_path":"b"}`},
		{"Bash", `{"z":1,"command":"ls"}`, `{"z":1,"command":"ls"}`},
		{"Bash", ``, `{}`},
		{"Write", `"not an object"`, `"not an object"`},
		{"Write", `{"a":1} {"b":2}`, `{"a":1} {"b":2}`},
	} {
		if got := string(EngineToolInput(tb.ToolInputs, c.tool, []byte(c.in))); got != c.want {
			t.Errorf("EngineToolInput(%s, %s) = %s, want %s", c.tool, c.in, got, c.want)
		}
	}
}
