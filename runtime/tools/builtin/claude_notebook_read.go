package builtin

import (
	"encoding/base64"
	"encoding/json"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/tools"
)

// notebookRead is Read's value for a Jupyter notebook under the claude-code style: Claude
// Code 2.1.328's {type: "notebook", file: {filePath, cells}} (tools/notebook).
type notebookRead struct {
	Type string       `json:"type"` // "notebook"
	File notebookFile `json:"file"`
}

type notebookFile struct {
	FilePath string         `json:"filePath"`
	Cells    []notebookCell `json:"cells"`
}

// notebookCell is one cell as the engine gives it, its keys in the engine's order.
type notebookCell struct {
	CellType       string            `json:"cellType"`
	Source         string            `json:"source"`
	ExecutionCount int               `json:"execution_count,omitempty"` // code cells that ran
	CellID         string            `json:"cell_id"`                   // the cell's id, else cell-N
	Language       string            `json:"language,omitempty"`        // code cells: the notebook's language
	Outputs        []*notebookOutput `json:"outputs,omitempty"`         // code cells; nil: an output of an unknown type
}

type notebookOutput struct {
	OutputType string         `json:"output_type"`
	Text       string         `json:"text"`
	Image      *notebookImage `json:"image,omitempty"`
}

type notebookImage struct {
	ImageData string `json:"image_data"`
	MediaType string `json:"media_type"`
}

// readNotebook reads a workspace notebook as Claude Code's Read does: each cell's type,
// source (a list joined), execution count, id (cell-N when it has none), language (code
// cells: the notebook's language_info.name, else python) and outputs (stream text, a
// result's text/plain and its PNG or JPEG image, an error's name, value and traceback).
func readNotebook(o Options, filePath string) (notebookRead, error) {
	wf, err := openInWorkspace(o.Workspace, filePath, os.O_RDONLY, 0)
	if err != nil {
		return notebookRead{}, err
	}
	defer wf.f.Close()
	if wf.info.Size() > int64(o.ReadMaxBytes) {
		return notebookRead{}, tooLarge(wf.info.Size(), int64(o.ReadMaxBytes))
	}
	data, err := io.ReadAll(io.LimitReader(wf.f, int64(o.ReadMaxBytes)+1))
	if err != nil {
		return notebookRead{}, err
	}
	var nb struct {
		Cells []struct {
			CellType       string            `json:"cell_type"`
			ID             *string           `json:"id"`
			Source         json.RawMessage   `json:"source"`
			ExecutionCount *int              `json:"execution_count"`
			Outputs        []json.RawMessage `json:"outputs"`
		} `json:"cells"`
		Metadata struct {
			LanguageInfo struct {
				Name string `json:"name"`
			} `json:"language_info"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal([]byte(text(data)), &nb); err != nil {
		return notebookRead{}, tools.NewError(CodeNotebook, "Notebook file is not valid JSON (it may be truncated, corrupted, or still being written): "+err.Error())
	}
	if nb.Cells == nil {
		return notebookRead{}, tools.NewError(CodeNotebook, `Notebook file is not a valid Jupyter notebook (top-level "cells" must be an array of cell objects, each with a string or string-array "source").`)
	}
	lang := nb.Metadata.LanguageInfo.Name
	if lang == "" {
		lang = "python"
	}
	out := notebookRead{Type: "notebook", File: notebookFile{FilePath: filePath, Cells: make([]notebookCell, len(nb.Cells))}}
	for i, c := range nb.Cells {
		src, ok := joinedText(c.Source)
		if !ok {
			return notebookRead{}, tools.NewError(CodeNotebook, `Notebook file is not a valid Jupyter notebook (top-level "cells" must be an array of cell objects, each with a string or string-array "source").`)
		}
		cell := notebookCell{CellType: c.CellType, Source: src, CellID: "cell-" + strconv.Itoa(i)}
		if c.ID != nil {
			cell.CellID = *c.ID
		}
		if c.CellType == "code" {
			cell.Language = lang
			if c.ExecutionCount != nil {
				cell.ExecutionCount = *c.ExecutionCount
			}
			for _, raw := range c.Outputs {
				cell.Outputs = append(cell.Outputs, notebookOutputOf(raw))
			}
		}
		out.File.Cells[i] = cell
	}
	return out, nil
}

// joinedText is a notebook string or list of strings joined ("" for none).
func joinedText(raw json.RawMessage) (string, bool) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", true
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, true
	}
	var l []string
	if json.Unmarshal(raw, &l) == nil {
		return strings.Join(l, ""), true
	}
	return "", false
}

// notebookOutputOf is one output as the engine keeps it; nil for a type it does not show.
func notebookOutputOf(raw json.RawMessage) *notebookOutput {
	var o struct {
		OutputType string                     `json:"output_type"`
		Text       json.RawMessage            `json:"text"`
		Data       map[string]json.RawMessage `json:"data"`
		EName      string                     `json:"ename"`
		EValue     string                     `json:"evalue"`
		Traceback  []string                   `json:"traceback"`
	}
	if json.Unmarshal(raw, &o) != nil {
		return nil
	}
	switch o.OutputType {
	case "stream":
		t, _ := joinedText(o.Text)
		return &notebookOutput{OutputType: o.OutputType, Text: t}
	case "execute_result", "display_data":
		t, _ := joinedText(o.Data["text/plain"])
		out := &notebookOutput{OutputType: o.OutputType, Text: t}
		for _, mt := range []string{"image/png", "image/jpeg"} {
			var s string
			if json.Unmarshal(o.Data[mt], &s) != nil {
				continue
			}
			s = strings.Join(strings.Fields(s), "")
			if b, err := base64.StdEncoding.DecodeString(s); err == nil && len(b) > 0 {
				out.Image = &notebookImage{ImageData: s, MediaType: mt}
			}
			break
		}
		return out
	case "error":
		return &notebookOutput{OutputType: o.OutputType, Text: o.EName + ": " + o.EValue + "\n" + strings.Join(o.Traceback, "\n")}
	}
	return nil
}

// renderNotebook is what the model reads of a notebook, as Claude Code words it: each
// cell as <cell id="ID"> (with <cell_type> for a cell that is not code, <language> for
// code that is not Python), its source and </cell id="ID">, then its outputs' texts and
// images; consecutive texts are joined with a newline.
func renderNotebook(nb notebookRead) []dsh.ContentBlock {
	var blocks []dsh.ContentBlock
	addText := func(t string) {
		if n := len(blocks); n > 0 {
			if last, ok := blocks[n-1].(dsh.TextBlock); ok {
				last.Text += "\n" + t
				blocks[n-1] = last
				return
			}
		}
		blocks = append(blocks, dsh.TextBlock{Text: t})
	}
	for _, c := range nb.File.Cells {
		var meta string
		if c.CellType != "code" {
			meta += "<cell_type>" + c.CellType + "</cell_type>"
		}
		if c.Language != "python" && c.CellType == "code" {
			meta += "<language>" + c.Language + "</language>"
		}
		addText(`<cell id="` + c.CellID + `">` + meta + c.Source + `</cell id="` + c.CellID + `">`)
		unknown := false
		for _, out := range c.Outputs {
			if out == nil {
				unknown = true
				continue
			}
			if out.Text != "" {
				addText("\n" + out.Text)
			}
			if out.Image != nil {
				blocks = append(blocks, dsh.ImageBlock{MediaType: out.Image.MediaType, Data: out.Image.ImageData})
			}
		}
		if unknown {
			addText("\nOutputs of an unknown type are not shown.")
		}
	}
	if len(blocks) == 0 {
		blocks = append(blocks, dsh.TextBlock{Text: ""})
	}
	return blocks
}
