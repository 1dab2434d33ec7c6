package subagent

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/internal/blocktext"
	"github.com/dshkit/dsh/runtime/session"
)

// How a child ended: its Result, read from its log (ended) or from the parent's record of
// it (replayed).

// Result is how a child ended.
type Result struct {
	// AgentID is the child's id ("" when none started).
	AgentID string
	// Outcome says how it ended.
	Outcome dsh.SubagentOutcome
	// Answer is its final text (completed).
	Answer string
	// Err says why it did not complete.
	Err error
	// Replayed says the answer came from the parent's log: the child ran before a
	// crash and did not run again.
	Replayed bool
	// Type is the child's agent type.
	Type string
	// ToolsUsed are the names of the tools the child called, in first-call order, and
	// ToolUses how many calls it made.
	ToolsUsed []string
	ToolUses  int
	// Tokens are its last response's input and output tokens.
	Tokens int
	// Duration is how long it ran.
	Duration time.Duration
	// Model is the model it called (its definition's, else the parent's).
	Model string
	// Usage is its last response's token accounting (nil: the provider reported none, or
	// the answer was replayed from the parent's log).
	Usage *dsh.Usage
	// ToolStats counts its calls by kind (nil: Config.ToolKinds is nil, or it counted
	// none).
	ToolStats *ToolStats
	// TurnLimit is Definition.MaxTurns when the child stopped at it (0: it did not): it
	// completed, and its answer is partial.
	TurnLimit int
	// Reason is its termination reason in the words of Config.Completion (Goal or
	// Missing; "" without one).
	Reason string
	// Calls are the calls it made, in order (none for an answer replayed from the log).
	Calls []ChildCall
}

// ChildCall is one call a child made, as its log has it.
type ChildCall struct {
	// Step is the 0-based position of the response that made it among the child's
	// responses, and Index its position in that response.
	Step  int `json:"step"`
	Index int `json:"index"`
	// Name and Args are the tool and the model's arguments.
	Name string          `json:"name"`
	Args json.RawMessage `json:"args,omitempty"`
	// Failed says the call failed, and Error is the text the model read of it.
	Failed bool   `json:"failed,omitempty"`
	Error  string `json:"error,omitempty"`
}

// ended reads how the child's last turn ended, its answer and its figures, from the
// events of its log from from on; kinds counts its calls (ToolStats).
func ended(id string, log *session.Log, from int64, kinds map[string]ToolKind) Result {
	var end *dsh.TurnEnd
	res := Result{AgentID: id}
	var stats ToolStats
	step, byID := 0, map[string]int{}
	for _, data := range session.Decoded(log.EventsFrom(from)) {
		switch d := data.(type) {
		case dsh.TurnEnd:
			end = &d
		case dsh.ToolResultLogged:
			for _, b := range d.Message.Content {
				if tr, ok := b.(dsh.ToolResultBlock); ok && tr.IsError {
					if i, ok := byID[tr.ToolCallID]; ok {
						res.Calls[i].Failed, res.Calls[i].Error = true, blocktext.Text(tr.Content, "")
					}
				}
			}
		case dsh.AssistantMessageLogged:
			if a := blocktext.Text(d.Message.Content, ""); a != "" {
				res.Answer = a
			}
			index := 0
			for _, b := range d.Message.Content {
				if c, ok := b.(dsh.ToolCallBlock); ok {
					var args json.RawMessage
					if json.Valid([]byte(c.Arguments)) {
						args = json.RawMessage(c.Arguments)
					}
					byID[c.ID] = len(res.Calls)
					res.Calls = append(res.Calls, ChildCall{Step: step, Index: index, Name: c.Name, Args: args})
					index++
				}
			}
			step++
			if u := d.Usage; u != nil {
				res.Tokens = u.InputTokens + u.OutputTokens
				res.Usage = u
			}
		case dsh.ToolCall:
			if kinds != nil {
				stats.count(kinds, d.Name, d.Arguments)
			}
			res.ToolUses++
			if !slices.Contains(res.ToolsUsed, d.Name) {
				res.ToolsUsed = append(res.ToolsUsed, d.Name)
			}
		default:
			// The rest does not say how the child ended.
		}
	}
	if !stats.zero() {
		res.ToolStats = &stats
	}
	switch reason := end; {
	case reason == nil:
		res.Outcome, res.Err = dsh.SubagentOutcomeFailed, errors.New("its turn never ended")
	default:
		switch v := reason.Reason.(type) {
		case dsh.TurnEndCompleted, dsh.TurnEndMaxTokens:
			res.Outcome = dsh.SubagentOutcomeCompleted
		case dsh.TurnEndAborted:
			res.Outcome, res.Err = dsh.SubagentOutcomeCancelled, fmt.Errorf("its turn was aborted (%s)", v.Reason.Kind())
		case dsh.TurnEndError:
			res.Outcome, res.Err = dsh.SubagentOutcomeFailed, fmt.Errorf("its turn failed: %s", v.Error.Message)
		case dsh.TurnEndBlocked:
			res.Outcome, res.Err = dsh.SubagentOutcomeFailed, fmt.Errorf("its turn was blocked: %s", cmp.Or(deref(v.Reason), "no reason given"))
		default:
			res.Outcome, res.Err = dsh.SubagentOutcomeFailed, fmt.Errorf("its turn ended %s", reason.Reason.Kind())
		}
	}
	return res
}

// replayed is the Result a finished child's record gives.
func replayed(f dsh.SubagentFinished) Result {
	res := Result{AgentID: f.AgentID, Outcome: f.Outcome, Answer: deref(f.Answer), Replayed: true, ToolsUsed: f.ToolsUsed}
	if f.ToolUses != nil {
		res.ToolUses = *f.ToolUses
	}
	if f.Tokens != nil {
		res.Tokens = *f.Tokens
	}
	if f.DurationMS != nil {
		res.Duration = time.Duration(*f.DurationMS) * time.Millisecond
	}
	if f.Error != nil {
		res.Err = errors.New(*f.Error)
		if *f.Error == ErrNoCompletion.Error() {
			res.Err = ErrNoCompletion
		}
	}
	if f.TurnLimit != nil {
		res.TurnLimit = *f.TurnLimit
	}
	return res
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
