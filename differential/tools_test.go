package differential

import "testing"

// TestToolsDiff: the tools aspect reports the first tool that differs, and no difference
// for the same tools whatever the order of their schemas' keys.
func TestToolsDiff(t *testing.T) {
	a := OfferedTools([]byte(`{"tools":[{"type":"function","name":"exec_command","description":"d","parameters":{"type":"object","properties":{}}},{"type":"web_search"}]}`), []string{"web_search"})
	b := OfferedTools([]byte(`{"tools":[{"name":"exec_command","type":"function","strict":false,"parameters":{"properties":{},"type":"object"},"description":"d"}]}`), nil)
	if _, ok := toolsDiff(a, b); ok || a == "" {
		t.Errorf("the same tool differs: %q %q", a, b)
	}
	c := OfferedTools([]byte(`{"tools":[{"type":"function","name":"Bash","description":"d","parameters":{}}]}`), nil)
	if d, ok := toolsDiff(a, c); !ok || d.Aspect != "tools" {
		t.Errorf("exec_command and Bash: %v %v", d, ok)
	}
	if _, ok := toolsDiff(a, a+"\n"+c); !ok {
		t.Error("an extra tool is no difference")
	}
}
