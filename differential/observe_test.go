package differential

import "testing"

// TestCodexOutput: a Codex shell result keeps its exit code, token count and output; the
// run-specific Chunk ID and Wall time become placeholders; a text without the header is
// left as it is.
func TestCodexOutput(t *testing.T) {
	for in, want := range map[string]struct {
		text      string
		isErr, ok bool
	}{
		"Chunk ID: d16d5c\nWall time: 0.0001 seconds\nProcess exited with code 3\nOriginal token count: 1\nOutput:\nbad\n": {
			"Chunk ID: <id>\nWall time: <s>\nProcess exited with code 3\nOriginal token count: 1\nOutput:\nbad\n", true, true},
		"Chunk ID: 885729\nWall time: 0.0144 seconds\nProcess exited with code 0\nOriginal token count: 2\nOutput:\nout1\n": {
			"Chunk ID: <id>\nWall time: <s>\nProcess exited with code 0\nOriginal token count: 2\nOutput:\nout1\n", false, true},
		"Chunk ID: a\nWall time: 1.0000 seconds\nOutput:\nrunning\n": {"Chunk ID: <id>\nWall time: <s>\nOutput:\nrunning\n", false, true},
		"bad\n[exit code 3]": {"bad\n[exit code 3]", false, false},
	} {
		text, isErr, ok := codexOutput(in)
		if text != want.text || isErr != want.isErr || ok != want.ok {
			t.Errorf("codexOutput(%q) = %q, %v, %v; want %q, %v, %v", in, text, isErr, ok, want.text, want.isErr, want.ok)
		}
	}
}
