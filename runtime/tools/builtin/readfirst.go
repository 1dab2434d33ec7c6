package builtin

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"sync"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/session"
	"github.com/dshkit/dsh/runtime/tools"
)

// CodeNotRead is the failure of a call a toolset row's read-before-edit rule refuses
// (ToolRow.ReadFirst): the file was not read in the conversation.
const CodeNotRead = "NOT_READ"

// ReadFirst is a toolset row's read-before-edit rule: the engine refuses the call unless
// the conversation has read the file its input names (a successful call of a row with
// Reads named it), in Message's words.
type ReadFirst struct {
	// Path is the input key of the file's path.
	Path string `json:"path"`
	// Message is the refusal (the failure's message, which hooks see).
	Message string `json:"message"`
	// Text is how the model reads the refusal, "{message}" being Message ("": as any
	// failure).
	Text string `json:"text,omitempty"`
}

// withReadFirst makes d's refusals under the rule rf read as rf.Text (a content a
// listener replaced stays as it is).
func withReadFirst(d tools.Definition, rf *ReadFirst) tools.Definition {
	if rf == nil || rf.Text == "" {
		return d
	}
	inner := d.FinalizeContent
	d.FinalizeContent = func(exec dsh.ToolExecution, result dsh.ToolExecutionResult) ([]dsh.ContentBlock, error) {
		if f, ok := result.(dsh.ToolFailure); ok && f.Error.Info != nil && f.Error.Info.Code == CodeNotRead && len(f.Content) == 1 {
			if t, ok := f.Content[0].(dsh.TextBlock); ok && t.Text == "Error: "+f.Error.Message {
				return []dsh.ContentBlock{dsh.TextBlock{Text: strings.ReplaceAll(rf.Text, "{message}", f.Error.Message)}}, nil
			}
		}
		if inner != nil {
			return inner(exec, result)
		}
		return nil, nil
	}
	return d
}

// ReadFiles says whether an agent's conversation has read a file: the memory of the
// read-before-edit rule. [ReadLog] derives it from the agents' session logs.
type ReadFiles interface {
	// HasRead reports whether the conversation of agentID read the file at path (absolute,
	// clean), and whether it knows the agent's conversation at all.
	HasRead(agentID, path string) (read, known bool)
}

// checkRead applies the row's read-before-edit rule (o.readFirst) to the call of rc for the
// file at p: nil when the row has none, when the conversation read the file, or when
// o.ReadFiles does not know the agent's conversation (no log to derive it from: a host
// without one, a subagent); else the refusal.
func (o Options) checkRead(rc *tools.RunContext, p string) error {
	if o.readFirst == nil || o.ReadFiles == nil {
		return nil
	}
	agent := ""
	if a := rc.Exec().AgentID; a != nil {
		agent = *a
	}
	if read, known := o.ReadFiles.HasRead(agent, absPath(o.Workspace, p)); read || !known {
		return nil
	}
	return tools.NewError(CodeNotRead, o.readFirst.Message)
}

// absPath is p made absolute against the workspace, clean.
func absPath(workspace, p string) string {
	if !filepath.IsAbs(p) {
		p = filepath.Join(workspace, p)
	}
	return filepath.Clean(p)
}

// ReadLog is the files each agent's conversation read, derived from its session log: the
// path input (a row's Reads) of every call of style's rows with Reads whose result is no
// error, in the events it watches (Watch).
type ReadLog struct {
	workspace string
	keys      map[string]string // tool name -> the input key of the path it reads

	mu     sync.Mutex
	agents map[string]*agentReads
}

type agentReads struct {
	calls map[string]string // call id -> the path its call names, for the rows with Reads
	read  map[string]bool
}

// NewReadLog returns an empty ReadLog for the rows of style's toolset, paths relative to
// workspace; nil when no row of it reads files (Reads).
func NewReadLog(style Style, workspace string) *ReadLog {
	all, err := Toolsets()
	if err != nil {
		return nil
	}
	keys := map[string]string{}
	for _, ts := range all {
		if ts.Style != style || style == StyleDSH {
			continue
		}
		for _, r := range ts.Tools {
			if r.Reads != "" {
				keys[r.Name] = r.Reads
			}
		}
	}
	if len(keys) == 0 {
		return nil
	}
	if ws, err := filepath.Abs(workspace); err == nil {
		if real, err := filepath.EvalSymlinks(ws); err == nil {
			ws = real
		}
		workspace = ws
	}
	return &ReadLog{workspace: workspace, keys: keys, agents: map[string]*agentReads{}}
}

// Watch folds the events of log, agentID's, from the seq from on: those already appended
// and those appended from now on; cancel stops it. An event seen twice counts once. Claude
// Code 2.1.328 forgets its reads when a run ends (tools/read-first-resume: a notebook Read
// in one `claude -p` run must be read again in the next, --continue), so dsh run watches
// from the seq its run starts at; a host that keeps them across runs watches from 0.
func (r *ReadLog) Watch(agentID string, log *session.Log, from int64) (cancel func(), err error) {
	r.mu.Lock()
	if r.agents[agentID] == nil {
		r.agents[agentID] = &agentReads{calls: map[string]string{}, read: map[string]bool{}}
	}
	r.mu.Unlock()
	cancel = log.Subscribe(func(ev session.Event) { r.fold(agentID, ev) })
	for ev, err := range log.EventsFrom(from) {
		if err != nil {
			cancel()
			return nil, err
		}
		r.fold(agentID, ev)
	}
	return cancel, nil
}

// HasRead implements [ReadFiles].
func (r *ReadLog) HasRead(agentID, path string) (read, known bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	a := r.agents[agentID]
	if a == nil {
		return false, false
	}
	return a.read[path], true
}

// toolCallKind is how a tool call block's kind is written in the session log.
var toolCallKind = []byte(`"kind":"` + string(dsh.ToolCallBlock{}.Kind()) + `"`)

// fold records the calls of an assistant message that name a path, and the path of each
// of them whose tool/result is no error.
func (r *ReadLog) fold(agentID string, ev session.Event) {
	switch ev.Type {
	case dsh.AssistantMessageLoggedType:
		// Only a message with a call names a path: one without (a long answer, say) is
		// not decoded again. The log's encoding is compact, and a "kind" inside a text
		// is written with its quotes escaped, so the needle is a call block's own.
		if !bytes.Contains(ev.Data, toolCallKind) {
			return
		}
	case dsh.ToolResultLoggedType:
		r.mu.Lock()
		a := r.agents[agentID]
		pending := a != nil && len(a.calls) > 0
		r.mu.Unlock()
		if !pending {
			return // no call it could be the result of named a path
		}
	default:
		return
	}
	data, err := ev.Decode()
	if err != nil {
		return // not an event this fold reads: the loop reports a log it cannot decode
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	a := r.agents[agentID]
	//dshvet:partial only the calls and their results name files read
	switch d := data.(type) {
	case dsh.AssistantMessageLogged:
		for _, b := range d.Message.Content {
			c, ok := b.(dsh.ToolCallBlock)
			key := r.keys[c.Name]
			if !ok || key == "" {
				continue
			}
			var in map[string]any
			if json.Unmarshal([]byte(c.Arguments), &in) != nil {
				continue
			}
			if p, ok := in[key].(string); ok && p != "" {
				a.calls[c.ID] = absPath(r.workspace, p)
			}
		}
	case dsh.ToolResultLogged:
		for _, b := range d.Message.Content {
			if res, ok := b.(dsh.ToolResultBlock); ok && !res.IsError {
				if p, ok := a.calls[res.ToolCallID]; ok {
					a.read[p] = true
				}
			}
		}
	}
}
