// Package editnotes is an example native plugin: after every successful Write or Edit it
// adds a context message reminding the model to check its change. It composes with other
// post-execute listeners: it calls next and adds its context to whatever they decided.
package editnotes

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/dshkit/dsh/generated/dsh"
)

//go:generate go tool dshscaffold -type Plugin -events tools/post-execute -out plugin_gen.go

// Plugin adds a note after file changes.
type Plugin struct {
	// Note is the text added after a change; %s is the file path.
	Note string
}

// OnPostTool adds the note to the decision of the inner listeners after a successful
// Write or Edit; it never replaces their decision.
func (p *Plugin) OnPostTool(ctx context.Context, pl *dsh.PostToolPayload, next dsh.PostToolNext) (dsh.PostToolDecision, error) {
	d, err := next.Call(ctx)
	if err != nil {
		return d, err
	}
	if _, ok := pl.Result.(dsh.ToolSuccess); !ok || (pl.Exec.Name != "Write" && pl.Exec.Name != "Edit") {
		return d, nil
	}
	var in struct {
		FilePath string `json:"file_path"`
	}
	_ = json.Unmarshal(pl.Exec.Arguments, &in)
	note := p.Note
	if note == "" {
		note = "editnotes: %s changed; re-read it before relying on it"
	}
	msg := dsh.UserMessage{
		ID:      "editnotes-" + pl.Exec.CallID,
		Role:    dsh.UserMessageRoleUser,
		Content: []dsh.ContentBlock{dsh.TextBlock{Text: fmt.Sprintf(note, in.FilePath)}},
		Source:  dsh.SourcePlugin{Plugin: "editnotes"},
	}
	// Accept and block carry contexts; a halt has none.
	if w, ok := d.(dsh.PostToolDecisionWithAdditionalContexts); ok {
		return w.AppendAdditionalContexts(msg), nil
	}
	return d, nil
}
