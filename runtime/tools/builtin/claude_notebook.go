package builtin

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/dshkit/dsh/runtime/tools"
)

// CodeNotebook is the failure of a NotebookEdit on a file that is not a notebook it can
// edit, or on a cell it does not have; its message is Claude Code's.
const CodeNotebook = "NOTEBOOK_EDIT"

type notebookEditInput struct {
	NotebookPath string `json:"notebook_path"`
	CellID       string `json:"cell_id"`
	NewSource    string `json:"new_source"`
	CellType     string `json:"cell_type"`
	EditMode     string `json:"edit_mode"`
}

// notebookEditResult is NotebookEdit's value, Claude Code's output shape.
type notebookEditResult struct {
	NewSource    string  `json:"new_source"`
	OldSource    *string `json:"old_source,omitempty"`
	CellType     string  `json:"cell_type"`
	Language     string  `json:"language"`
	EditMode     string  `json:"edit_mode"`
	CellID       string  `json:"cell_id"`
	Error        string  `json:"error"`
	NotebookPath string  `json:"notebook_path"`
	OriginalFile string  `json:"original_file"`
	UpdatedFile  string  `json:"updated_file"`
}

func claudeNotebookEdit(o Options) tools.Definition {
	return tools.Definition{
		Name:        "NotebookEdit",
		Description: "Replaces, inserts or deletes one cell of a Jupyter notebook in the workspace.",
		InputSchema: json.RawMessage(`{"type": "object", "properties": {"notebook_path": {"type": "string"}, "cell_id": {"type": "string"}, "new_source": {"type": "string"}, "cell_type": {"enum": ["code", "markdown"]}, "edit_mode": {"enum": ["replace", "insert", "delete"]}}, "required": ["notebook_path", "new_source"]}`),
		Output: &tools.Output{Render: renderText(func(r notebookEditResult) string {
			switch r.EditMode {
			case "insert":
				return "Inserted cell " + r.CellID + " with " + r.NewSource
			case "delete":
				return "Deleted cell " + r.CellID
			}
			return "Updated cell " + r.CellID + " with " + r.NewSource
		})},
		Run: func(_ context.Context, rc *tools.RunContext) (any, error) {
			var in notebookEditInput
			if err := rc.BindArguments(&in); err != nil {
				return nil, tools.NewError(CodeBadInput, err.Error())
			}
			return notebookEdit(o, rc, in)
		},
	}
}

// notebookEdit edits one cell as Claude Code 2.1.328 does, checking its input in the
// engine's order (a notebook's extension, the edit mode, the row's read-before-edit rule,
// then the file), and writes the notebook back as it does (JSON indented by one space,
// keys in their order).
func notebookEdit(o Options, rc *tools.RunContext, in notebookEditInput) (notebookEditResult, error) {
	if !strings.HasSuffix(in.NotebookPath, ".ipynb") {
		return notebookEditResult{}, tools.NewError(CodeNotebook, "File must be a Jupyter notebook (.ipynb file). For editing other file types, use the FileEdit tool.")
	}
	mode := in.EditMode
	if mode == "" {
		mode = "replace"
	}
	if mode != "replace" && mode != "insert" && mode != "delete" {
		return notebookEditResult{}, tools.NewError(CodeBadInput, "edit_mode must be replace, insert, or delete.")
	}
	if mode == "insert" && in.CellType == "" {
		return notebookEditResult{}, tools.NewError(CodeBadInput, "Cell type is required when using edit_mode=insert.")
	}
	// The engine's next check, before it looks for the file: the read-before-edit rule.
	if err := o.checkRead(rc, in.NotebookPath); err != nil {
		return notebookEditResult{}, err
	}
	wf, err := openInWorkspace(o.Workspace, in.NotebookPath, os.O_RDWR, 0)
	if err != nil {
		return notebookEditResult{}, err
	}
	defer wf.f.Close()
	data, err := readForEdit(wf, in.NotebookPath, o.EditMaxBytes)
	if err != nil {
		return notebookEditResult{}, err
	}
	var nb orderedObject
	if err := json.Unmarshal(data, &nb); err != nil {
		return notebookEditResult{}, tools.NewError(CodeNotebook, "Notebook is not valid JSON.")
	}
	var cells []orderedObject
	if err := json.Unmarshal(nb.get("cells"), &cells); err != nil {
		return notebookEditResult{}, tools.NewError(CodeNotebook, "Notebook has no cells array.")
	}
	at := -1
	if in.CellID != "" {
		at = slices.IndexFunc(cells, func(c orderedObject) bool { return c.str("id") == in.CellID })
		if at < 0 {
			return notebookEditResult{}, tools.NewError(CodeNotebook, fmt.Sprintf("Cell with ID %q not found in notebook.", in.CellID))
		}
	} else if mode != "insert" {
		return notebookEditResult{}, tools.NewError(CodeNotebook, "Cell ID must be specified when not inserting a new cell.")
	}
	res := notebookEditResult{NewSource: in.NewSource, EditMode: mode, CellID: in.CellID, NotebookPath: in.NotebookPath,
		OriginalFile: text(data), Language: notebookLanguage(nb), CellType: in.CellType}
	source := jsonString(in.NewSource)
	switch mode {
	case "replace":
		c := cells[at]
		old := cellSource(c.get("source"))
		res.OldSource = &old
		if in.CellType != "" {
			c.set("cell_type", jsonString(in.CellType))
		}
		c.set("source", source)
		if c.str("cell_type") == "code" {
			c.set("execution_count", json.RawMessage("null"))
			c.set("outputs", json.RawMessage("[]"))
		}
		res.CellType = c.str("cell_type")
		cells[at] = c
	case "insert":
		id := make([]byte, 4)
		_, _ = rand.Read(id)
		res.CellID = hex.EncodeToString(id)
		c := orderedObject{{"cell_type", jsonString(in.CellType)}, {"id", jsonString(res.CellID)}, {"source", source}, {"metadata", json.RawMessage("{}")}}
		if in.CellType == "code" {
			c = append(c, orderedField{"execution_count", json.RawMessage("null")}, orderedField{"outputs", json.RawMessage("[]")})
		}
		cells = slices.Insert(cells, at+1, c)
	case "delete":
		old := cellSource(cells[at].get("source"))
		res.OldSource = &old
		if res.CellType == "" {
			res.CellType = "code"
		}
		cells = slices.Delete(cells, at, at+1)
	}
	raw, err := marshalNoEscape(cells)
	if err != nil {
		return notebookEditResult{}, err
	}
	nb.set("cells", raw)
	compact, err := marshalNoEscape(nb)
	if err != nil {
		return notebookEditResult{}, err
	}
	var out bytes.Buffer
	if err := json.Indent(&out, compact, "", " "); err != nil {
		return notebookEditResult{}, err
	}
	if bytes.HasSuffix(data, []byte("\n")) {
		// The engine keeps the notebook's final newline (tools/notebook).
		out.WriteByte('\n')
	}
	if out.Len() > o.EditMaxBytes {
		return notebookEditResult{}, editTooLarge(in.NotebookPath, int64(out.Len()), int64(o.EditMaxBytes))
	}
	if err := replaceContent(wf.f, out.Bytes()); err != nil {
		return notebookEditResult{}, err
	}
	res.UpdatedFile = out.String()
	return res, nil
}

// notebookLanguage is the notebook's metadata.language_info.name ("python" when absent).
func notebookLanguage(nb orderedObject) string {
	var md struct {
		LanguageInfo struct {
			Name string `json:"name"`
		} `json:"language_info"`
	}
	_ = json.Unmarshal(nb.get("metadata"), &md)
	if md.LanguageInfo.Name == "" {
		return "python"
	}
	return md.LanguageInfo.Name
}

// cellSource is a cell's source, a string or a list of lines.
func cellSource(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var lines []string
	_ = json.Unmarshal(raw, &lines)
	return strings.Join(lines, "")
}

func jsonString(s string) json.RawMessage {
	raw, _ := marshalNoEscape(s)
	return raw
}

// marshalNoEscape marshals v without escaping <, > and & (as JSON.stringify writes).
func marshalNoEscape(v any) (json.RawMessage, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// orderedObject is a JSON object that keeps its keys in order.
type orderedObject []orderedField

type orderedField struct {
	Key   string
	Value json.RawMessage
}

func (o orderedObject) get(k string) json.RawMessage {
	for _, f := range o {
		if f.Key == k {
			return f.Value
		}
	}
	return nil
}

func (o orderedObject) str(k string) string {
	var s string
	_ = json.Unmarshal(o.get(k), &s)
	return s
}

func (o *orderedObject) set(k string, v json.RawMessage) {
	for i, f := range *o {
		if f.Key == k {
			(*o)[i].Value = v
			return
		}
	}
	*o = append(*o, orderedField{k, v})
}

// UnmarshalJSON reads an object, keeping its keys' order.
func (o *orderedObject) UnmarshalJSON(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return fmt.Errorf("not a JSON object")
	}
	*o = nil
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return err
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return err
		}
		*o = append(*o, orderedField{t.(string), v})
	}
	_, err := dec.Token()
	return err
}

// MarshalJSON writes the object with its keys in order.
func (o orderedObject) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := marshalNoEscape(f.Key)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(f.Value)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}
