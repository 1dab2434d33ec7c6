package subagent

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/dshkit/dsh/runtime/tools"
)

// ErrNoCompletion is how a child ended whose turn ended without a call of its answer tool
// (Config.Completion), after the nudges.
var ErrNoCompletion = errors.New("subagent: the child ended without calling its answer tool")

// Completion is how a child ends when it ends only by calling an answer tool of its own,
// as Gemini CLI 0.61.0's children end by complete_task: the tool is offered to the child
// alone, its first call ends the child's turn and its input's Field is the answer; a turn
// that ends without it is continued with Nudge, Nudges times, and then the child ends
// with ErrNoCompletion.
type Completion struct {
	// Tool is the answer tool's name, description and input schema (its Run is the
	// Runner's).
	Tool tools.Definition
	// Field is the input key of the answer: a string as it is, any other value as JSON
	// indented by two spaces, its keys in the model's order.
	Field string
	// Text is the answer tool's result, which the child's model does not read again.
	Text string
	// Nudge is the user message that continues a child whose turn ended without the call,
	// Nudges times.
	Nudge  string
	Nudges int
	// Goal is the termination reason of a child that called the tool, Missing that of one
	// that did not, and MissingAnswer the answer the call's result gives for it.
	Goal, Missing, MissingAnswer string
}

// completer is one child's answer tool: the first call's answer.
type completer struct {
	c *Completion

	mu       sync.Mutex
	answer   string
	answered bool
}

// definition is the answer tool of one child.
func (k *completer) definition() tools.Definition {
	d := k.c.Tool
	d.Run = func(ctx context.Context, rc *tools.RunContext) (any, error) {
		var in map[string]json.RawMessage
		if err := rc.BindArguments(&in); err != nil {
			return nil, tools.NewError(CodeSubagent, "bad input: "+err.Error())
		}
		answer, err := answerText(in[k.c.Field])
		if err != nil {
			return nil, tools.NewError(CodeSubagent, fmt.Sprintf("%s: %v", k.c.Field, err))
		}
		k.mu.Lock()
		if !k.answered {
			k.answer, k.answered = answer, true
		}
		k.mu.Unlock()
		rc.ConcludeTurn() // the answer ends the child, as the engine stops at it
		return k.c.Text, nil
	}
	return d
}

// result is the child's answer, if it gave one.
func (k *completer) result() (string, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.answer, k.answered
}

// answerText is the answer of the value raw: a JSON string's text, any other value as
// JSON indented by two spaces (Gemini CLI's JSON.stringify(value, null, 2)).
func answerText(raw json.RawMessage) (string, error) {
	if len(raw) == 0 {
		return "", errors.New("missing")
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, raw, "", "  "); err != nil {
		return "", err
	}
	return buf.String(), nil
}

// NewUUID makes a child's id shaped as Gemini CLI's agent ids: a random UUID (version 4).
func NewUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}
