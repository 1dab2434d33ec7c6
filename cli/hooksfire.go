package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/dshkit/dsh/bridges/dialect"
	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/generated/hookmap"
	"github.com/dshkit/dsh/internal/agentrec"
	"github.com/dshkit/dsh/internal/blocktext"
)

// dsh hooks run fires an event by its table row: at the extension point the row names (or
// the one of its also column whose subject the input carries), with the payload that point
// takes built from the input. Nothing here knows an event's name: what differs between
// dialects is the table's, and the dialect's stdin reader's (dialect.Descriptor.ReadStdin).

// fired is where one input fires its event: the point, and the table's also entry that
// names it (nil: the row's own point).
type fired struct {
	point string
	also  *hookmap.Also
}

// firing is where ev fires for the input raw: at the also entry whose subject is the
// input's matcher field (Claude Code's Notification idle_prompt, at agent/status; not an
// entry at compaction/post-compact), else at the row's point, when the row's subject is
// that field or the row has none.
func firing(ev hookmap.Event, raw []byte) (fired, error) {
	if ev.Subject == "" && len(ev.Also) == 0 {
		return fired{point: ev.Point}, nil
	}
	var fields map[string]json.RawMessage
	_ = json.Unmarshal(raw, &fields) // the input decoded as an object before
	var subject string
	_ = json.Unmarshal(fields[ev.Matcher], &subject)
	for i, a := range ev.Also {
		// An entry at compaction/post-compact moves the session start of a compaction,
		// which an input cannot describe (it names none): the input fires at the row's
		// own point, which carries every source.
		if a.Subject == subject && a.Point != dsh.PostCompactEventName {
			return fired{point: a.Point, also: &ev.Also[i]}, nil
		}
	}
	if ev.Subject == "" || ev.Subject == subject {
		return fired{point: ev.Point}, nil
	}
	subjects := []string{ev.Subject}
	for _, a := range ev.Also {
		subjects = append(subjects, a.Subject)
	}
	return fired{}, fmt.Errorf("the %s input's %s %q: dsh fires %s with %s", ev.Name, ev.Matcher, subject, ev.Name, strings.Join(subjects, " or "))
}

// errFoldStop ends a fold whose decision is final (a deny, an answer, a block).
var errFoldStop = errors.New("the fold stopped")

// fireIn is one firing of dsh hooks run: the event's table row, where it fires, the
// input, and the turn and agent its payload names.
type fireIn struct {
	ev    hookmap.Event
	at    fired
	in    dialect.Input
	turn  int
	agent *agentrec.Agent
	// updated is the tool input the rewrite phase left, when the hooks rewrote it
	// (tools/pre-execute's builder sets it, its describer reports it).
	updated json.RawMessage
}

// hooksAgentID is the agent id of every payload dsh hooks run builds.
const hooksAgentID = "dsh-hooks"

// pointRow is how dsh hooks run fires one extension point: the generic path of the
// point's domain (notification, waterfall, fold, vote), given that point's payload
// builder and decision describer (the rows are in points, hookspoints.go).
type pointRow struct {
	fire func(ctx context.Context, reg *dsh.Registry, f *fireIn) (decisionJSON, error)
}

// builder builds a point's payload from a firing; it may run an earlier phase the
// engine runs first (the rewrite phase of a tool call, its execution).
type builder[P any] func(ctx context.Context, reg *dsh.Registry, f *fireIn) (*P, error)

// fireEvent fires the input at the point its event fires at, by that point's row:
// builds the payload, runs the point through the registry and describes the decision.
func fireEvent(ctx context.Context, reg *dsh.Registry, ev hookmap.Event, at fired, in dialect.Input, turn int, agent *agentrec.Agent) (decisionJSON, error) {
	row, ok := points[at.point]
	if !ok {
		return decisionJSON{}, fmt.Errorf("%s fires at %s, which dsh hooks run does not drive", ev.Name, at.point)
	}
	return row.fire(ctx, reg, &fireIn{ev: ev, at: at, in: in, turn: turn, agent: agent})
}

// notification is the path of a notification or observer point: emit the payload; the
// decision is "none", unless describe reads one from the agent (a Stop that continues
// or halts the turn).
func notification[P any](build builder[P], emit func(*dsh.Registry, context.Context, *P) error, describe func(*fireIn) decisionJSON) pointRow {
	return pointRow{fire: func(ctx context.Context, reg *dsh.Registry, f *fireIn) (decisionJSON, error) {
		p, err := build(ctx, reg, f)
		if err != nil {
			return decisionJSON{}, err
		}
		if err := emit(reg, ctx, p); err != nil {
			return decisionJSON{Kind: "none"}, err
		}
		if describe == nil {
			return decisionJSON{Kind: "none"}, nil
		}
		return describe(f), nil
	}}
}

// waterfall is the path of a waterfall point: run the chain to terminal's decision (nil:
// the point's default) and describe the decision it returned.
func waterfall[P, D any](build builder[P], run func(*dsh.Registry, context.Context, *P, func(context.Context) (D, error)) (D, error),
	terminal func(*P) func(context.Context) (D, error), describe func(D, *fireIn) decisionJSON) pointRow {
	return pointRow{fire: func(ctx context.Context, reg *dsh.Registry, f *fireIn) (decisionJSON, error) {
		p, err := build(ctx, reg, f)
		if err != nil {
			return decisionJSON{}, err
		}
		var term func(context.Context) (D, error)
		if terminal != nil {
			term = terminal(p)
		}
		d, err := run(reg, ctx, p, term)
		if err != nil {
			return decisionJSON{}, err
		}
		return describe(d, f), nil
	}}
}

// fold is the path of a fold point: apply each listener's decision to the payload from
// start (a nil payload leaves it as it was; stop ends the fold, its decision final),
// then report a halt, else finish's description of where the fold left the payload
// (changed: some decision replaced it).
func fold[P, D any](build builder[P], run func(*dsh.Registry, context.Context, *P, time.Duration, func(context.Context, string, D) (*P, error)) error,
	start decisionJSON, apply func(p *P, d D, out *decisionJSON) (np *P, stop bool), finish func(p *P, out decisionJSON, changed bool) (decisionJSON, error)) pointRow {
	return pointRow{fire: func(ctx context.Context, reg *dsh.Registry, f *fireIn) (decisionJSON, error) {
		p, err := build(ctx, reg, f)
		if err != nil {
			return decisionJSON{}, err
		}
		out, changed := start, false
		err = run(reg, ctx, p, 0, func(_ context.Context, _ string, d D) (*P, error) {
			np, stop := apply(p, d, &out)
			if stop {
				return nil, errFoldStop
			}
			if np != nil {
				p, changed = np, true
			}
			return np, nil
		})
		if err != nil && !errors.Is(err, errFoldStop) {
			return decisionJSON{}, err
		}
		if halted := f.agent.Halted(); len(halted) > 0 {
			return decisionJSON{Kind: "halt", Reason: &halted[0]}, nil
		}
		if finish == nil {
			return out, nil
		}
		return finish(p, out, changed)
	}}
}

// vote is the path of a vote point: tally each listener's vote into the description
// from start (final: that vote decides), then report a halt, else the tally.
func vote[P, D any](build builder[P], run func(*dsh.Registry, context.Context, *P, time.Duration) []dsh.Vote[D],
	start decisionJSON, tally func(d D, out *decisionJSON) (final bool)) pointRow {
	return pointRow{fire: func(ctx context.Context, reg *dsh.Registry, f *fireIn) (decisionJSON, error) {
		p, err := build(ctx, reg, f)
		if err != nil {
			return decisionJSON{}, err
		}
		out := start
		for _, v := range run(reg, ctx, p, 0) {
			if v.Err != nil {
				return decisionJSON{}, v.Err
			}
			if tally(v.Decision, &out) {
				return out, nil
			}
		}
		if halted := f.agent.Halted(); len(halted) > 0 {
			return decisionJSON{Kind: "halt", Reason: &halted[0]}, nil
		}
		return out, nil
	}}
}

func ptr[T any](v T) *T { return &v }

// messageTexts are the texts of ms, one per message, as the model reads them.
func messageTexts(ms []dsh.UserMessage) []string {
	var out []string
	for _, m := range ms {
		out = append(out, blocktext.Text(m.Content, "\n"))
	}
	return out
}

// toolExecution is the call a tool event's input names, as dsh hooks run fires it: its
// id (a fixed one when the input has none), its arguments ({} when none) and the
// execution the tool points see.
func toolExecution(event string, in dialect.Input) (callID string, args json.RawMessage, ex dsh.ToolExecution, err error) {
	if in.ToolName == "" {
		return "", nil, ex, fmt.Errorf("the %s input has no tool_name", event)
	}
	callID = in.ToolUseID
	if callID == "" {
		callID = "dsh-hooks-call"
	}
	args = in.ToolInput
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage("{}")
	}
	aid := hooksAgentID
	ex = dsh.ToolExecution{CallID: callID, Name: in.ToolName, Arguments: args, AgentID: &aid,
		RootCallID: callID, Token: dsh.NewToken()}
	return callID, args, ex, nil
}
