package runner

import (
	"context"
	"strings"
	"sync"

	"github.com/dshkit/dsh/bridges/hookproto"
	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/session"
)

// Turns follows a session log to tell the hook bridges the current turn: its number,
// whether it is open, a UUID per turn (Claude Code's prompt_id, Codex's turn_id) and the
// text of the last assistant message (Stop's last_assistant_message). Subscribe Observe
// to the log; the zero value is ready to use.
type Turns struct {
	mu     sync.Mutex
	turn   int
	open   bool
	agent  dsh.Agent
	turnID string
	last   *string
}

// Observe updates t with one event of the session log (a session.Log subscriber).
func (t *Turns) Observe(e session.Event) {
	data, err := e.Decode()
	if err != nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	switch d := data.(type) {
	case dsh.TurnStart:
		t.turn, t.open, t.turnID = d.Turn, true, hookproto.NewUUID()
	case dsh.TurnEnd:
		t.open = false
	case dsh.AssistantMessageLogged:
		var text strings.Builder
		for _, b := range d.Message.Content {
			if tb, ok := b.(dsh.TextBlock); ok {
				text.WriteString(tb.Text)
			}
		}
		s := text.String()
		t.last = &s
	default:
		// The other events do not move the turn.
	}
}

// SetAgent sets the agent whose handle the hooks' events carry (async hooks inject
// through it).
func (t *Turns) SetAgent(a dsh.Agent) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.agent = a
}

// Agent returns the session's agent (nil before SetAgent).
func (t *Turns) Agent() dsh.Agent {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.agent
}

// Current returns the number of the last turn that started and whether it is open.
func (t *Turns) Current() (turn int, open bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.turn, t.open
}

// SessionFunc describes the session to the hooks as the engines do: base (the session
// id, transcript path, working directory, model and permission mode) with the current
// turn, its UUID, the agent and the last assistant message.
func (t *Turns) SessionFunc(base hookproto.Session) hookproto.SessionFunc {
	return func(ctx context.Context, agentID string) hookproto.Session {
		t.mu.Lock()
		defer t.mu.Unlock()
		s := base
		s.Turn, s.TurnOpen, s.Agent = t.turn, t.open, t.agent
		s.PromptID, s.TurnID, s.LastAssistantMessage = t.turnID, t.turnID, t.last
		return s
	}
}
