package hookproto

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/dshkit/dsh/generated/hookmap"
)

// limitContexts applies h's additionalContextLimit (Handler.ContextLimit, 0 meaning none)
// to the contexts of its run, as the table's ContextLimit says: a context over the limit
// is saved whole to a new file and replaced by the text the engine gives the model in its
// place. When the file cannot be written, the context is still cut (the footer names no
// file) and the run's diagnostics say why.
func (e *Engine) limitContexts(f *Fire, h Handler, v *Verdict) {
	cl := e.Table.ContextLimit
	if cl == nil || h.ContextLimit <= 0 || len(v.Contexts) == 0 {
		return
	}
	budget := h.ContextLimit * cl.BytesPerToken
	for i, c := range v.Contexts {
		if len(c) <= budget {
			continue
		}
		path, err := e.spill(cl, f.Stdin, c)
		if err != nil {
			v.Diagnostics = append(v.Diagnostics, fmt.Sprintf("additionalContextLimit: the whole context was not saved: %v", err))
		}
		v.Contexts[i] = LimitContext(cl, c, h.ContextLimit, path)
	}
}

// LimitContext is the text the model reads in place of context c, longer than limit
// tokens, saved whole at path ("" when it could not be saved: the footer is left out), as
// cl says (#ContextLimit).
func LimitContext(cl *hookmap.ContextLimit, c string, limit int, path string) string {
	footer := ""
	if path != "" {
		footer = strings.ReplaceAll(cl.Footer, "{path}", path)
	}
	keep := max(limit*cl.BytesPerToken-len(footer), 0)
	head, tail := keep/2, len(c)-(keep-keep/2)
	for head > 0 && !utf8.RuneStart(c[head]) {
		head--
	}
	for tail < len(c) && !utf8.RuneStart(c[tail]) {
		tail++
	}
	tokens := func(n int) string { return strconv.Itoa((n + cl.BytesPerToken - 1) / cl.BytesPerToken) }
	kept := c[:head] + strings.ReplaceAll(cl.Marker, "{tokens}", tokens(tail-head)) + c[tail:]
	lines := strings.Count(c, "\n")
	if !strings.HasSuffix(c, "\n") {
		lines++
	}
	text := strings.NewReplacer("{tokens}", tokens(len(c)), "{lines}", strconv.Itoa(lines), "{kept}", kept).Replace(cl.Text)
	return text + footer
}

// spill saves context c to a new file <temp>/<cl.Dir>/<session id>/<uuid>.txt, the
// session id read from the event's stdin, and returns its path.
func (e *Engine) spill(cl *hookmap.ContextLimit, stdin []byte, c string) (string, error) {
	var in map[string]any
	_ = json.Unmarshal(stdin, &in)
	session, _ := in[cl.SessionField].(string)
	if session == "" || session == "." || session == ".." || filepath.Base(session) != session || strings.ContainsAny(session, `/\`) {
		return "", fmt.Errorf("the stdin's %s %q is not a directory name", cl.SessionField, session)
	}
	temp := e.TempDir
	if temp == "" {
		temp = os.TempDir()
	}
	dir := filepath.Join(temp, cl.Dir, session)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	path := filepath.Join(dir, NewUUID()+".txt")
	if err := os.WriteFile(path, []byte(c), 0o644); err != nil {
		return "", err
	}
	return path, nil
}
