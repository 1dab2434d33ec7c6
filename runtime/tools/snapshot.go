package tools

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/internal/validutf8"
	"github.com/dshkit/dsh/runtime/internal/variant"
)

// snapshotContent validates blocks as lossless content and returns a private copy in which
// every block is a value variant (pointer variants are dereferenced). A nil slice stays
// nil.
func snapshotContent(blocks []dsh.ContentBlock) ([]dsh.ContentBlock, error) {
	out, err := snapshotContentAt(blocks, 0)
	if err == nil {
		err = validText(out, "content")
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

// maxContentDepth bounds how deep tool-result blocks nest: deeper content (content that
// holds itself, say) is not lossless.
const maxContentDepth = 64

// snapshotContentAt is snapshotContent for content nested depth tool-result blocks deep,
// without the text check.
func snapshotContentAt(blocks []dsh.ContentBlock, depth int) ([]dsh.ContentBlock, error) {
	if blocks == nil {
		return nil, nil
	}
	if depth > maxContentDepth {
		return nil, fmt.Errorf("%w: tool-result blocks nested more than %d deep", errNotLossless, maxContentDepth)
	}
	out := make([]dsh.ContentBlock, len(blocks))
	for i, b := range blocks {
		c, err := snapshotBlock(b, depth)
		if err != nil {
			return nil, fmt.Errorf("content[%d]: %w", i, err)
		}
		out[i] = c
	}
	return out, nil
}

// validText checks that every string in v is valid UTF-8: JSON carries other text only
// with U+FFFD in place of the invalid bytes, so it is not lossless.
func validText(v any, root string) error {
	if path, bad := validutf8.Find(reflect.ValueOf(v), root); bad {
		return fmt.Errorf("%w: invalid UTF-8 in %s", errNotLossless, path)
	}
	return nil
}

// snapshotBlock validates one block, in content nested depth deep, and returns it as a
// value variant (a pointer variant is the value it points to; a nil one is not lossless).
func snapshotBlock(b dsh.ContentBlock, depth int) (dsh.ContentBlock, error) {
	switch v := variant.Value(b).(type) {
	case dsh.TextBlock, dsh.ReasoningBlock, dsh.ImageBlock, dsh.ToolCallBlock:
		return v, nil
	case dsh.ToolResultBlock:
		return snapshotToolResultBlock(v, depth)
	}
	return nil, errNotLossless
}

func snapshotToolResultBlock(v dsh.ToolResultBlock, depth int) (dsh.ContentBlock, error) {
	content, err := snapshotContentAt(v.Content, depth+1)
	if err != nil {
		return nil, err
	}
	v.Content = content
	return v, nil
}

// snapshotMessages validates msgs as lossless context messages and returns a private
// copy. A nil slice stays nil.
func snapshotMessages(msgs []dsh.UserMessage) ([]dsh.UserMessage, error) {
	if msgs == nil {
		return nil, nil
	}
	out := make([]dsh.UserMessage, len(msgs))
	for i, m := range msgs {
		c, err := snapshotMessage(m)
		if err != nil {
			return nil, fmt.Errorf("additionalContexts[%d]: %w", i, err)
		}
		out[i] = c
	}
	return out, nil
}

// snapshotMessage validates one context message and returns a private copy. The copy is
// what gets validated: the generated Validate recurses into content without a bound, and
// the snapshot's content is bounded (see maxContentDepth).
//
// As everywhere a plugin hands the runtime a message (RunContext.DeferContext, the
// agent's Inject and Steer, pre-step enter), an empty ID is minted and an empty Role is
// "user"; a missing Source or another role is an error naming the field.
func snapshotMessage(m dsh.UserMessage) (dsh.UserMessage, error) {
	if m.ID == "" {
		m.ID = "msg_" + rand.Text()
	}
	if m.Role == "" {
		m.Role = dsh.UserMessageRoleUser
	}
	switch {
	case m.Role != dsh.UserMessageRoleUser:
		return dsh.UserMessage{}, fmt.Errorf("message %q: role %q: %w", m.ID, m.Role, errNotLossless)
	case m.Source == nil:
		return dsh.UserMessage{}, fmt.Errorf("message %q: source is missing: %w", m.ID, errNotLossless)
	}
	src, err := snapshotSource(m.Source)
	if err != nil {
		return dsh.UserMessage{}, err
	}
	content, err := snapshotContent(m.Content)
	if err != nil {
		return dsh.UserMessage{}, err
	}
	if content == nil {
		content = []dsh.ContentBlock{}
	}
	out := dsh.UserMessage{ID: m.ID, Role: m.Role, Content: content, Source: src}
	if err := out.Validate(); err != nil {
		return dsh.UserMessage{}, err
	}
	if err := validText(out, "message"); err != nil {
		return dsh.UserMessage{}, err
	}
	return out, nil
}

// snapshotSource returns a message source as a private value variant.
func snapshotSource(s dsh.MessageSource) (dsh.MessageSource, error) {
	switch v := variant.Value(s).(type) {
	case dsh.SourceUser, dsh.SourceTool:
		return v, nil
	case dsh.SourcePlugin:
		return cloneSourcePlugin(v), nil
	case dsh.SourceModel:
		return snapshotSourceModel(v)
	}
	return nil, errNotLossless
}

func snapshotSourceModel(v dsh.SourceModel) (dsh.MessageSource, error) {
	if len(v.ReplayState) != 0 {
		state, err := snapshotJSON(v.ReplayState)
		if err != nil {
			return nil, err
		}
		v.ReplayState = state
	}
	return v, nil
}

// cloneSourcePlugin copies a plugin source, including its optional summary.
func cloneSourcePlugin(v dsh.SourcePlugin) dsh.SourcePlugin {
	if v.Summary != nil {
		s := *v.Summary
		v.Summary = &s
	}
	return v
}

// snapshotMeta validates optional presentation metadata (nil stays absent).
func snapshotMeta(meta json.RawMessage) (json.RawMessage, error) {
	if len(meta) == 0 {
		return nil, nil
	}
	return snapshotJSON(meta)
}

// newTrue returns a fresh pointer to true, for an optional concludesTurn.
func newTrue() *bool {
	t := true
	return &t
}

// cloneRaw copies raw JSON (nil stays nil).
func cloneRaw(raw json.RawMessage) json.RawMessage {
	if raw == nil {
		return nil
	}
	return append(json.RawMessage(nil), raw...)
}

// cloneContent copies snapshotted (value-variant) content.
func cloneContent(blocks []dsh.ContentBlock) []dsh.ContentBlock {
	if blocks == nil {
		return nil
	}
	out := make([]dsh.ContentBlock, len(blocks))
	for i, b := range blocks {
		if tr, ok := b.(dsh.ToolResultBlock); ok {
			tr.Content = cloneContent(tr.Content)
			b = tr
		}
		out[i] = b
	}
	return out
}

// cloneMessages copies snapshotted context messages.
func cloneMessages(msgs []dsh.UserMessage) []dsh.UserMessage {
	if msgs == nil {
		return nil
	}
	out := make([]dsh.UserMessage, len(msgs))
	for i, m := range msgs {
		m.Content = cloneContent(m.Content)
		//dshvet:partial only these sources hold references to clone; the others are values
		switch src := m.Source.(type) {
		case dsh.SourcePlugin:
			m.Source = cloneSourcePlugin(src)
		case dsh.SourceModel:
			src.ReplayState = cloneRaw(src.ReplayState)
			m.Source = src
		}
		out[i] = m
	}
	return out
}
