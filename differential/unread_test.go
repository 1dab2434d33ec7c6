package differential

import "testing"

// TestUnreadRunPairsLast: a hook killed before it read its stdin (no stdin, no exit) pairs
// after the other runs of its name, and only its exit is compared: the runs both sides
// read keep their pairs.
func TestUnreadRunPairsLast(t *testing.T) {
	run := func(tool, exit string) HookRun {
		raw := `{"hook_event_name":"PreToolUse","tool_name":"` + tool + `"}`
		return HookRun{Name: "PreToolUse-1", Raw: raw, Exit: exit, Stdin: map[string]any{"hook_event_name": "PreToolUse", "tool_name": tool}, Env: map[string]string{}}
	}
	killed := HookRun{Name: "PreToolUse-1", Env: map[string]string{}}
	engine := Observation{Hooks: []HookRun{run("spawn", "0"), run("send", "0"), run("wait", "0"), run("Bash", "0")}}
	dsh := Observation{Hooks: []HookRun{run("spawn", "0"), run("send", "0"), killed, run("wait", "0")}}
	diffs := Compare(engine, dsh, Normalizer{}, Normalizer{})
	if len(diffs) != 1 || diffs[0].Aspect != "exit" || diffs[0].Detail != `PreToolUse-1 run 4: exit "0" under the engine, "" under dsh` {
		t.Errorf("diffs %v, want only the killed run's exit", diffs)
	}
	// A run that read its stdin and was killed is compared as any other.
	dsh.Hooks[2] = run("Bash", "")
	diffs = Compare(engine, dsh, Normalizer{}, Normalizer{})
	if len(diffs) == 0 {
		t.Error("no diffs for runs paired out of order")
	}
}
