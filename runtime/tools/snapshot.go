package tools

import (
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/dshkit/dsh/generated/dsh"
)

// snapshotContent validates blocks as lossless content and returns a private copy in which
// every block is a value variant (pointer variants are dereferenced). A nil slice stays
// nil.
func snapshotContent(blocks []dsh.ContentBlock) ([]dsh.ContentBlock, error) {
	if blocks == nil {
		return nil, nil
	}
	out := make([]dsh.ContentBlock, len(blocks))
	for i, b := range blocks {
		c, err := snapshotBlock(b)
		if err != nil {
			return nil, fmt.Errorf("content[%d]: %w", i, err)
		}
		out[i] = c
	}
	return out, nil
}

// snapshotBlock validates one block and returns it as a value variant.
func snapshotBlock(b dsh.ContentBlock) (dsh.ContentBlock, error) {
	switch v := b.(type) {
	case dsh.TextBlock:
		return checked(v, validText(v.Text))
	case *dsh.TextBlock:
		if v != nil {
			return checked(*v, validText(v.Text))
		}
	case dsh.ReasoningBlock:
		return checked(v, validText(v.Text))
	case *dsh.ReasoningBlock:
		if v != nil {
			return checked(*v, validText(v.Text))
		}
	case dsh.ImageBlock:
		return checked(v, validText(v.MediaType, v.Data))
	case *dsh.ImageBlock:
		if v != nil {
			return checked(*v, validText(v.MediaType, v.Data))
		}
	case dsh.ToolCallBlock:
		return checked(v, validText(v.ID, v.Name, v.Arguments))
	case *dsh.ToolCallBlock:
		if v != nil {
			return checked(*v, validText(v.ID, v.Name, v.Arguments))
		}
	case dsh.ToolResultBlock:
		return snapshotToolResultBlock(v)
	case *dsh.ToolResultBlock:
		if v != nil {
			return snapshotToolResultBlock(*v)
		}
	}
	return nil, errNotLossless
}

// checked returns b when ok, else errNotLossless.
func checked[T any](b T, ok bool) (T, error) {
	if !ok {
		var zero T
		return zero, errNotLossless
	}
	return b, nil
}

// validText reports whether every string of ss is valid UTF-8: only such text survives JSON
// unchanged (encoding/json replaces invalid bytes with U+FFFD), so any other is not lossless.
func validText(ss ...string) bool {
	for _, s := range ss {
		if !utf8.ValidString(s) {
			return false
		}
	}
	return true
}

func snapshotToolResultBlock(v dsh.ToolResultBlock) (dsh.ContentBlock, error) {
	if !validText(v.ToolCallID) {
		return nil, errNotLossless
	}
	content, err := snapshotContent(v.Content)
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

// snapshotMessage validates one context message and returns a private copy.
func snapshotMessage(m dsh.UserMessage) (dsh.UserMessage, error) {
	if m.ID == "" || m.Role != dsh.UserMessageRoleUser || m.Source == nil || !validText(m.ID) {
		return dsh.UserMessage{}, errNotLossless
	}
	if err := m.Validate(); err != nil {
		return dsh.UserMessage{}, err
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
	return dsh.UserMessage{ID: m.ID, Role: m.Role, Content: content, Source: src}, nil
}

// snapshotSource returns a message source as a private value variant.
func snapshotSource(s dsh.MessageSource) (dsh.MessageSource, error) {
	switch v := s.(type) {
	case dsh.SourceUser:
		return v, nil
	case *dsh.SourceUser:
		if v != nil {
			return *v, nil
		}
	case dsh.SourcePlugin:
		return snapshotSourcePlugin(v)
	case *dsh.SourcePlugin:
		if v != nil {
			return snapshotSourcePlugin(*v)
		}
	case dsh.SourceModel:
		return snapshotSourceModel(v)
	case *dsh.SourceModel:
		if v != nil {
			return snapshotSourceModel(*v)
		}
	case dsh.SourceTool:
		return checked(v, validText(v.CallID))
	case *dsh.SourceTool:
		if v != nil {
			return checked(*v, validText(v.CallID))
		}
	}
	return nil, errNotLossless
}

func snapshotSourcePlugin(v dsh.SourcePlugin) (dsh.MessageSource, error) {
	if !validText(v.Plugin) || (v.Summary != nil && !validText(*v.Summary)) {
		return nil, errNotLossless
	}
	return cloneSourcePlugin(v), nil
}

func snapshotSourceModel(v dsh.SourceModel) (dsh.MessageSource, error) {
	if !validText(v.Provider, v.Model) {
		return nil, errNotLossless
	}
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
