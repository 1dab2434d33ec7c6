package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/internal/clix"
	"github.com/dshkit/dsh/runtime/session"
)

// transcript renders session events as a readable transcript, one or a few lines each.
// Chunks are skipped (the assistant message that follows has their text).
type transcript struct {
	mu sync.Mutex
	w  io.Writer
}

// maxShown caps the characters of one shown text.
const maxShown = 400

func clip(s string) string {
	s = strings.TrimRight(s, "\n")
	if len(s) > maxShown {
		return s[:maxShown] + "…"
	}
	return s
}

func textOf(blocks []dsh.ContentBlock) string {
	var parts []string
	for _, b := range blocks {
		//dshvet:partial a message shows its text, reasoning and results; a tool call is shown from its tool/call event, an image not at all
		switch b := b.(type) {
		case dsh.TextBlock:
			parts = append(parts, b.Text)
		case dsh.ReasoningBlock:
			parts = append(parts, "(thinking) "+b.Text)
		case dsh.ToolResultBlock:
			parts = append(parts, textOf(b.Content))
		}
	}
	return strings.Join(parts, "\n")
}

func sourceOf(s dsh.MessageSource) string {
	//dshvet:partial any other source is the user, after the switch
	switch s := s.(type) {
	case dsh.SourcePlugin:
		return "plugin " + s.Plugin
	case dsh.SourceTool:
		return "tool " + s.CallID
	case dsh.SourceModel:
		return "model"
	}
	return "user"
}

// sandboxLine describes a session/sandbox record: "sandbox: MODE", the writable roots under
// workspace-write, and whether the network is on.
func sandboxLine(d dsh.SandboxApplied) string {
	s := "sandbox: " + string(d.Mode)
	if len(d.WritableRoots) > 0 {
		s += " (writes " + strings.Join(d.WritableRoots, ", ") + ")"
	}
	if d.Network {
		return s + ", network on"
	}
	return s + ", network off"
}

func indent(s, prefix string) string {
	return prefix + strings.ReplaceAll(s, "\n", "\n"+prefix)
}

// line renders one event for a person, or "" for events the transcript leaves out: the
// rendering of render with every control character a model, tool or hook put in it
// written out (clix.Visible), so that none reaches the terminal.
func line(e session.Event) string { return clix.Visible(render(e)) }

// render renders one event, or "" for events the transcript leaves out.
func render(e session.Event) string {
	data, err := e.Decode()
	if err != nil {
		return fmt.Sprintf("#%d %s (undecodable: %v)", e.Seq, e.Type, err)
	}
	//dshvet:partial the transcript shows the conversation and what decided it; bookkeeping events are not printed
	switch d := data.(type) {
	case dsh.SandboxApplied:
		return "── " + sandboxLine(d)
	case dsh.TurnStart:
		return fmt.Sprintf("── turn %d", d.Turn)
	case dsh.TurnEnd:
		return fmt.Sprintf("── turn %d ended: %s", d.Turn, reason(d.Reason))
	case dsh.UserMessageLogged:
		return indent(clip(textOf(d.Message.Content)), "› "+sourceOf(d.Message.Source)+": ")
	case dsh.AssistantMessageLogged:
		var out []string
		if t := textOf(d.Message.Content); t != "" {
			out = append(out, indent(clip(t), "  assistant: "))
		}
		if d.Interrupted != nil && *d.Interrupted {
			out = append(out, "  (interrupted)")
		}
		return strings.Join(out, "\n")
	case dsh.ToolCall:
		s := fmt.Sprintf("  ⚙ %s %s", d.Name, clip(d.Arguments))
		if d.ModelArguments != nil {
			var by []string
			if d.Rewrite != nil {
				for _, st := range d.Rewrite.Chain {
					if st.Kind != dsh.RewriteStepKindNoop {
						by = append(by, st.By)
					}
				}
			}
			s += fmt.Sprintf("\n    (rewritten by %s; the model wrote %s)", strings.Join(by, ", "), clip(*d.ModelArguments))
		}
		if e := d.RewriteError; e != nil {
			s += fmt.Sprintf("\n    (rewrite failed, %s: %s)", e.Code, clip(e.Message))
		}
		return s
	case dsh.ToolResultLogged:
		mark := "✓"
		if failedResult(d) {
			mark = "✗"
		}
		return indent(clip(textOf(d.Message.Content)), "    "+mark+" ")
	case dsh.HookResult:
		s := fmt.Sprintf("  ↳ hook %s at %s: %s (%d ms)", d.HandlerID, d.Point, d.Outcome, d.DurationMS)
		if d.StderrSummary != nil {
			s += ": " + clip(*d.StderrSummary)
		}
		return s
	case dsh.ApprovalDecided:
		return fmt.Sprintf("  approval %s: %s", d.ID, d.Outcome)
	case dsh.ContinuationCapped:
		return fmt.Sprintf("  continuation cap reached (%d)", d.Cap)
	case dsh.SubagentStarted:
		return fmt.Sprintf("    ⤷ subagent %s (%s) started by %s: its log is session %s", d.AgentID, d.AgentType, d.CallID, d.SessionID)
	case dsh.SubagentFinished:
		s := fmt.Sprintf("    ⤶ subagent %s %s", d.AgentID, d.Outcome)
		if d.Error != nil {
			s += ": " + clip(*d.Error)
		}
		return s
	case dsh.StartListenerOverrun:
		return fmt.Sprintf("  session-start listener %s overran", d.Listener)
	case dsh.CompactionStart:
		return fmt.Sprintf("── compacting (%s): %d messages", d.Trigger, d.Range.End-d.Range.Start)
	case dsh.CompactionEnd:
		if d.Error != nil {
			return fmt.Sprintf("── compaction failed: %s", clip(*d.Error))
		}
		return fmt.Sprintf("── compacted: about %d tokens before, %d after", d.TokensBefore, d.TokensAfter)
	case dsh.CompactionSkipped:
		if d.Overridden != nil && *d.Overridden {
			return fmt.Sprintf("── compaction defer by %s overridden (cap reached)", d.By)
		}
		return fmt.Sprintf("── compaction deferred by %s: %s", d.By, clip(d.Reason))
	}
	return ""
}

// reason renders a turn-end reason.
func reason(r dsh.TurnEndReason) string {
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Sprint(r)
	}
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	kind, _ := m["kind"].(string)
	delete(m, "kind")
	if len(m) == 0 {
		return kind
	}
	rest, _ := json.Marshal(m)
	return kind + " " + string(rest)
}

// write writes one rendered transcript entry.
func (t *transcript) write(s string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	fmt.Fprintln(t.w, s)
}
