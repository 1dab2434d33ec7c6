package acp

import "testing"

// TestExitCode: the exit code read from Bash's rendering in each of the built-in tools'
// styles (dsh's "[exit code N]", Codex's header; none is 0).
func TestExitCode(t *testing.T) {
	for text, want := range map[string]int{
		"out\n[exit code 3]": 3,
		"[exit code 2]":      2,
		"out\n":              0,
		"Chunk ID: 0a1b2c\nWall time: 0.0100 seconds\nProcess exited with code 4\nOriginal token count: 1\nOutput:\nbad\n": 4,
		"Chunk ID: 0a1b2c\nWall time: 0.0100 seconds\nProcess exited with code 0\nOriginal token count: 1\nOutput:\nok\n":  0,
		"Output:\nProcess exited with code 9\n": 0, // in the output, not the header
	} {
		if got := exitCode(text); got != want {
			t.Errorf("exitCode(%q) = %d, want %d", text, got, want)
		}
	}
}
