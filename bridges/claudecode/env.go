package claudecode

import (
	"maps"
	"path"
	"slices"

	"github.com/dshkit/dsh/bridges/hookproto"
	"github.com/dshkit/dsh/generated/hookmap"
	"github.com/dshkit/dsh/generated/wire/claudecode"
)

// sessionEnv is what the real engine exports to every hook besides CLAUDE_PROJECT_DIR:
// CLAUDECODE=1, CLAUDE_CODE_ENTRYPOINT (sdk-cli, as under the headless claude -p),
// CLAUDE_CODE_SESSION_ID, and CLAUDE_EFFORT (the level) where the stdin carries "effort".
func sessionEnv(event string, s hookproto.Session) []string {
	env := []string{"CLAUDECODE=1", "CLAUDE_CODE_ENTRYPOINT=sdk-cli"}
	if s.SessionID != "" {
		env = append(env, "CLAUDE_CODE_SESSION_ID="+s.SessionID)
	}
	if e := effort(event, s.Model); e != nil {
		env = append(env, "CLAUDE_EFFORT="+string(e.Level)) // where the stdin has it (measured)
	}
	return env
}

// effort is the "effort" field of event's stdin for the session's model: the level the
// table gives the first pattern of EffortModels (in sorted order) that matches model, at
// the events of EffortEvents; nil elsewhere.
func effort(event, model string) *claudecode.Effort {
	if model == "" || !slices.Contains(hookmap.ClaudeCode.EffortEvents, event) {
		return nil
	}
	for _, pat := range slices.Sorted(maps.Keys(hookmap.ClaudeCode.EffortModels)) {
		if ok, _ := path.Match(pat, model); ok {
			return &claudecode.Effort{Level: claudecode.EffortLevel(hookmap.ClaudeCode.EffortModels[pat])}
		}
	}
	return nil
}
