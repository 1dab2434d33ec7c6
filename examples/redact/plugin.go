// Package redact is an example native plugin at the model request point: it redacts
// secrets from every request before it reaches the provider, for that request only. The
// session log keeps what the user and the tools really said (the rewrite is ephemeral and
// recorded as request/rewritten, with digests of the request before and after); every
// later request is derived from the log and redacted again, so a resumed session sends
// the same redacted requests.
package redact

import (
	"context"
	"regexp"

	"github.com/dshkit/dsh/generated/dsh"
)

//go:generate go tool dshscaffold -type Plugin -events agent/request -out plugin_gen.go

// Plugin replaces every match of its patterns in the text of a request's messages (tool
// results included) and of its system prompt.
type Plugin struct {
	// Patterns are the secrets to redact.
	Patterns []*regexp.Regexp
	// Mask replaces each match (default "[redacted]").
	Mask string
}

// OnRequest rewrites the request when some text matches, and passes otherwise (so a request
// without secrets leaves no request/rewritten record). It builds new slices: the payload's
// are shared with the runtime and must not be changed in place.
func (p *Plugin) OnRequest(ctx context.Context, pl *dsh.RequestPayload) (dsh.RequestDecision, error) {
	changed := false
	msgs := make([]dsh.ModelMessage, len(pl.Request.Messages))
	for i, m := range pl.Request.Messages {
		content, ok := p.blocks(m.Content)
		changed = changed || ok
		m.Content = content
		msgs[i] = m
	}
	d := dsh.RequestRewrite{Reason: ptr("redact: secrets masked")}
	if changed {
		d.Messages = msgs
	}
	if s := pl.Request.Config.System; s != nil {
		if r := p.text(*s); r != *s {
			d.System, changed = &r, true
		}
	}
	if !changed {
		return dsh.RequestPass{}, nil
	}
	return d, nil
}

// blocks redacts the text and tool-result blocks of content; ok reports a change.
func (p *Plugin) blocks(content []dsh.ContentBlock) (out []dsh.ContentBlock, ok bool) {
	out = make([]dsh.ContentBlock, len(content))
	for i, b := range content {
		switch v := b.(type) {
		case dsh.TextBlock:
			if r := p.text(v.Text); r != v.Text {
				v.Text, ok = r, true
			}
			out[i] = v
		case dsh.ToolResultBlock:
			inner, changed := p.blocks(v.Content)
			v.Content, ok = inner, ok || changed
			out[i] = v
		default:
			out[i] = b
		}
	}
	return out, ok
}

// text redacts one text.
func (p *Plugin) text(s string) string {
	mask := p.Mask
	if mask == "" {
		mask = "[redacted]"
	}
	for _, re := range p.Patterns {
		s = re.ReplaceAllLiteralString(s, mask)
	}
	return s
}

func ptr[T any](v T) *T { return &v }
