package builtin

import (
	"strings"
	"testing"
	"testing/fstest"
)

func TestToolsetsLoad(t *testing.T) {
	if _, err := Toolsets(); err != nil {
		t.Fatalf("the spec's toolsets: %v", err)
	}
}

func TestToolsetBadRows(t *testing.T) {
	for name, tc := range map[string]struct{ file, want string }{
		"syntax":       {`{"tools": [`, "spec/toolsets/x.json: unexpected end"},
		"no name":      {`{"tools": [{"impl": "bash"}]}`, "spec/toolsets/x.json: tools[0]: no name"},
		"no impl":      {`{"tools": [{"name": "A", "impl": "bash"}, {"name": "B"}]}`, "tools[1] (B): neither impl nor absent"},
		"model's tool": {`{"tools": [{"name": "A", "impl": "bash"}], "models": {"m": {"without": ["B"]}}}`, `models["m"]: no tool "B"`},
		"unknown impl": {`{"tools": [{"name": "A", "impl": "nope"}]}`, `tools[0] (A): unknown impl "nope"`},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := loadToolsets(fstest.MapFS{"toolsets/x.json": {Data: []byte(tc.file)}})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tc.want)
			}
		})
	}
	got, err := loadToolsets(fstest.MapFS{"toolsets/x.json": {Data: []byte(`{"dialect": "x", "tools": [{"name": "A", "impl": "bash"}, {"name": "B", "absent": "no"}]}`)}})
	if err != nil || len(got) != 1 || len(got[0].Tools) != 2 {
		t.Fatalf("good file: %v %+v", err, got)
	}
}
