package loop

import (
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/internal/validutf8"
)

// ErrNoSource is returned by Inject and Steer for a message without a source: a plugin
// must say who produced the text it adds (only Followup defaults to the user source).
var ErrNoSource = errors.New("loop: message has no source")

// newMessageID mints a message id.
func newMessageID() string { return "msg_" + rand.Text() }

// prepareMessage returns a private, validated copy of msg for the inbox: an empty Role is
// "user", an empty ID is minted, a nil Source is defSource (an error when that is nil too).
// The copy shares nothing with msg, so the caller may go on changing msg.
func prepareMessage(msg dsh.UserMessage, defSource dsh.MessageSource) (dsh.UserMessage, error) {
	if msg.Role == "" {
		msg.Role = dsh.UserMessageRoleUser
	}
	if msg.ID == "" {
		msg.ID = newMessageID()
	}
	if msg.Source == nil {
		if defSource == nil {
			return dsh.UserMessage{}, ErrNoSource
		}
		msg.Source = defSource
	}
	out, err := cloneMessage(msg)
	if err != nil {
		return dsh.UserMessage{}, fmt.Errorf("loop: message %q: %w", msg.ID, err)
	}
	return out, nil
}

// errInvalidUTF8 is the failure of a message holding a string that is not valid UTF-8,
// which JSON could carry only lossily.
var errInvalidUTF8 = errors.New("a string holds invalid UTF-8")

// cloneMessage deep-copies msg through its strict JSON form, which also validates it.
func cloneMessage(msg dsh.UserMessage) (dsh.UserMessage, error) {
	data, err := msg.MarshalJSON()
	if err != nil {
		return dsh.UserMessage{}, err
	}
	// encoding/json silently replaces invalid UTF-8 by the escape \ufffd.
	if _, ok := validutf8.Encoded(data, msg, "message"); !ok {
		return dsh.UserMessage{}, errInvalidUTF8
	}
	var out dsh.UserMessage
	if err := out.UnmarshalJSON(data); err != nil {
		return dsh.UserMessage{}, err
	}
	return out, nil
}

// cloneMessages deep-copies msgs, which hold messages prepareMessage returned (see
// copyMessage); messages that cannot be copied (which the inbox never holds) are kept as
// they are.
func cloneMessages(msgs []dsh.UserMessage) []dsh.UserMessage {
	if msgs == nil {
		return nil
	}
	out := make([]dsh.UserMessage, len(msgs))
	for i, m := range msgs {
		out[i] = copyMessage(m)
	}
	return out
}

// copyMessage deep-copies a message prepareMessage returned, field by field: the value
// variants of content blocks and sources it knows share their immutable strings and copy
// their slices and pointers. Anything else (a pointer variant, a variant added to the spec
// later) makes it copy the whole message through JSON, like cloneMessage; a message that
// cannot be copied at all is returned as it is.
func copyMessage(m dsh.UserMessage) dsh.UserMessage {
	content, ok := copyBlocks(m.Content, 0)
	if ok {
		switch s := m.Source.(type) {
		case nil, dsh.SourceUser, dsh.SourceTool:
		case dsh.SourcePlugin:
			if s.Summary != nil {
				v := *s.Summary
				s.Summary = &v
			}
			m.Source = s
		case dsh.SourceModel:
			if s.ReplayState != nil {
				s.ReplayState = append(json.RawMessage(nil), s.ReplayState...)
			}
			m.Source = s
		default:
			ok = false
		}
	}
	if !ok {
		c, err := cloneMessage(m)
		if err != nil {
			return m
		}
		return c
	}
	m.Content = content
	return m
}

// copyBlocks copies content for copyMessage; ok is false when it holds a block it does
// not know, or nests tool results more than 64 deep.
func copyBlocks(bs []dsh.ContentBlock, depth int) (out []dsh.ContentBlock, ok bool) {
	if bs == nil {
		return nil, true
	}
	if depth > 64 {
		return nil, false
	}
	out = make([]dsh.ContentBlock, len(bs))
	for i, b := range bs {
		switch v := b.(type) {
		case dsh.TextBlock, dsh.ReasoningBlock, dsh.ImageBlock, dsh.ToolCallBlock:
			out[i] = v // only strings: an interface's copy of a value cannot be changed
		case dsh.ToolResultBlock:
			if v.Content, ok = copyBlocks(v.Content, depth+1); !ok {
				return nil, false
			}
			out[i] = v
		default:
			return nil, false
		}
	}
	return out, true
}

// messageIDs returns the ids of msgs.
func messageIDs(msgs []dsh.UserMessage) []string {
	ids := make([]string, len(msgs))
	for i, m := range msgs {
		ids[i] = m.ID
	}
	return ids
}
