// Package agents loads Claude Code's agent definitions: the Markdown files of
// ~/.claude/agents and a project's .claude/agents, whose YAML frontmatter names an agent
// type (name, description, tools, disallowedTools, model, maxTurns, background, hooks)
// and whose body is its child's system prompt. Load turns them into runtime/subagent
// Definitions, as Claude Code 2.1.328 reads them (differential cases subagent/definition*
// and subagent/frontmatter*, docs/design/SUBAGENTS.md):
//
//   - a file without frontmatter, name or description is not an agent (the engine skips
//     it without a word); dsh skips it too, with a Diagnostic;
//   - frontmatter that is not valid YAML is read again as "key: value" lines, as the
//     engine does (a description "[unclosed" is that text), with a Diagnostic;
//   - tools is a comma list (or a YAML list); "*" or none is every tool; names of no tool
//     are dropped when the child starts (runtime/subagent), and a list of none refuses the
//     call; disallowedTools is read the same way, and takes its tools from the child;
//   - maxTurns (a positive integer) ends the child's turn before its model step past it,
//     and background: true runs every call of the type in the background; a value of
//     neither shape is ignored, as the engine ignores it, with a Diagnostic;
//   - the fields the engine reads that dsh does not apply (effort, permissionMode,
//     mcpServers, skills, memory, isolation and the rest of notRun) are a Diagnostic each,
//     and the agent loads without them;
//   - hooks is a settings-shaped hooks object; one that is not an object keeps the
//     definition from loading, as in the engine; its Stop hooks run as SubagentStop;
//   - of two definitions of one name the later directory's wins: the project's over the
//     user's.
package agents

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/dshkit/dsh/runtime/subagent"
)

// Dir is where Claude Code reads the definitions of one scope, under a base directory
// (the user's home, or the project's root).
const Dir = ".claude/agents"

// MaxFileBytes bounds one definition file; a larger one is a Diagnostic.
const MaxFileBytes = 1 << 20

// Diagnostic is one problem of one definition file.
type Diagnostic struct {
	// File is the definition's path.
	File string
	// Field is the frontmatter field at fault ("" for the file as a whole).
	Field string
	// Err says what is wrong.
	Err error
	// Skipped says the definition did not load; otherwise it loaded as the engine reads
	// it despite the problem.
	Skipped bool
}

// Error is the diagnostic's one line: the file, the field, what is wrong, and whether the
// definition loaded.
func (d Diagnostic) Error() string {
	var b strings.Builder
	b.WriteString(d.File)
	if d.Field != "" {
		b.WriteString(": field " + d.Field)
	}
	b.WriteString(": " + d.Err.Error())
	if d.Skipped {
		b.WriteString(" (the agent is not loaded)")
	} else {
		b.WriteString(" (the agent loads as Claude Code reads it)")
	}
	return b.String()
}

// Unwrap returns the diagnostic's error.
func (d Diagnostic) Unwrap() error { return d.Err }

// Load reads the definitions of each directory in dirs, in order (the user's, then the
// project's); a definition of a name an earlier directory defined replaces it. A missing
// directory is no problem; every other one is a Diagnostic, and the other definitions load.
// The definitions come out sorted by name.
func Load(dirs ...string) ([]subagent.Definition, []Diagnostic) {
	byName := map[string]subagent.Definition{}
	var diags []Diagnostic
	for _, dir := range dirs {
		if dir == "" {
			continue
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				diags = append(diags, Diagnostic{File: dir, Err: err, Skipped: true})
			}
			continue
		}
		for _, e := range entries {
			if e.IsDir() || !strings.HasSuffix(e.Name(), ".md") {
				continue
			}
			path := filepath.Join(dir, e.Name())
			data, err := readFile(path)
			if err != nil {
				diags = append(diags, Diagnostic{File: path, Err: err, Skipped: true})
				continue
			}
			def, ds, ok := Parse(path, data)
			diags = append(diags, ds...)
			if ok {
				byName[def.Name] = def
			}
		}
	}
	out := make([]subagent.Definition, 0, len(byName))
	for _, d := range byName {
		out = append(out, d)
	}
	slices.SortFunc(out, func(a, b subagent.Definition) int { return strings.Compare(a.Name, b.Name) })
	return out, diags
}

// readFile reads a regular file of at most MaxFileBytes.
func readFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	switch {
	case err != nil:
		return nil, err
	case !st.Mode().IsRegular():
		return nil, errors.New("not a regular file")
	case st.Size() > MaxFileBytes:
		return nil, fmt.Errorf("larger than %d bytes", MaxFileBytes)
	}
	return os.ReadFile(path)
}

// Parse reads one definition file's text (path names it in diagnostics and is the
// Definition's Source). ok says it defines an agent; the diagnostics say what was wrong,
// whether or not it loaded.
func Parse(path string, data []byte) (def subagent.Definition, diags []Diagnostic, ok bool) {
	skip := func(field string, err error) (subagent.Definition, []Diagnostic, bool) {
		return subagent.Definition{}, append(diags, Diagnostic{File: path, Field: field, Err: err, Skipped: true}), false
	}
	text := strings.ReplaceAll(string(data), "\r\n", "\n")
	head, body, found := split(text)
	if !found {
		return skip("", errors.New("no frontmatter (a leading --- block with name and description)"))
	}
	front := map[string]any{}
	if err := yaml.Unmarshal([]byte(head), &front); err != nil {
		// The engine reads frontmatter that is not YAML again as "key: value" lines.
		front = lines(head)
		diags = append(diags, Diagnostic{File: path, Err: fmt.Errorf("the frontmatter is not valid YAML (%s); read as key: value lines", yamlError(err))})
	}
	name, _ := front["name"].(string)
	switch {
	case name == "":
		return skip("name", errors.New(`missing (a definition needs "name")`))
	case strings.HasPrefix(name, "-"):
		return skip("name", errors.New(`must not start with "-"`))
	case strings.Contains(name, ":"):
		return skip("name", errors.New(`must not contain ":" (reserved for plugin namespacing)`))
	}
	desc, _ := front["description"].(string)
	if desc == "" {
		return skip("description", errors.New(`missing (a definition needs "description")`))
	}
	def = subagent.Definition{Name: name, Description: strings.ReplaceAll(desc, `\n`, "\n"), System: strings.TrimSpace(body), Source: path}
	if m, ok := front["model"].(string); ok && strings.TrimSpace(m) != "" && !strings.EqualFold(strings.TrimSpace(m), "inherit") {
		def.Model = strings.TrimSpace(m)
	}
	tools, err := toolList(front["tools"])
	if err != nil {
		diags = append(diags, Diagnostic{File: path, Field: "tools", Err: err})
	}
	def.Tools = tools
	if raw, present := front["disallowedTools"]; present {
		names, err := toolList(raw)
		if err != nil {
			diags = append(diags, Diagnostic{File: path, Field: "disallowedTools", Err: err})
		}
		def.Disallowed = names
	}
	if raw, present := front["maxTurns"]; present && raw != nil {
		n, ok := positive(raw)
		if !ok {
			diags = append(diags, Diagnostic{File: path, Field: "maxTurns", Err: fmt.Errorf("%v is not a positive integer (ignored, as Claude Code ignores it)", raw)})
		}
		def.MaxTurns = n
	}
	if raw, present := front["background"]; present && raw != nil {
		switch raw {
		case true, "true":
			def.Background = true
		case false, "false":
		default:
			diags = append(diags, Diagnostic{File: path, Field: "background", Err: fmt.Errorf("%v is not true or false (ignored, as Claude Code ignores it)", raw)})
		}
	}
	for _, f := range notRun {
		if v, present := front[f]; present && v != nil {
			diags = append(diags, Diagnostic{File: path, Field: f, Err: errors.New("dsh does not apply it (the agent runs without it)")})
		}
	}
	if raw, present := front["hooks"]; present && raw != nil {
		hooks, err := hooksJSON(raw)
		if err != nil {
			return skip("hooks", err)
		}
		def.Hooks = hooks
	}
	return def, diags, true
}

// notRun are the frontmatter fields Claude Code 2.1.328 reads that dsh does not apply:
// each present one is a Diagnostic, and the agent loads without it.
var notRun = []string{"effort", "permissionMode", "mcpServers", "skills", "initialPrompt", "memory",
	"omitClaudeMd", "isolation", "autoCompactWindow", "observer", "observerMessage", "observeSubagents", "observeToolResults"}

// positive reads a positive integer: a YAML integer, or text that is one (as the
// key: value reading gives it); ok is false for anything else.
func positive(v any) (int, bool) {
	switch t := v.(type) {
	case int:
		return t, t > 0
	case string:
		n, err := strconv.Atoi(strings.TrimSpace(t))
		return n, err == nil && n > 0
	}
	return 0, false
}

// split cuts a leading "---" line's block from the body; found is false when the text
// has none.
func split(text string) (head, body string, found bool) {
	rest, ok := strings.CutPrefix(text, "---\n")
	if !ok {
		return "", text, false
	}
	if head, body, ok = strings.Cut(rest, "\n---\n"); ok {
		return head, body, true
	}
	if head, ok = strings.CutSuffix(rest, "\n---"); ok {
		return head, "", true
	}
	return "", text, false
}

// lines reads frontmatter as "key: value" lines.
func lines(head string) map[string]any {
	front := map[string]any{}
	for _, line := range strings.Split(head, "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && !strings.HasPrefix(line, " ") {
			front[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	return front
}

// yamlError is err's message without its package prefix.
func yamlError(err error) string {
	return strings.TrimPrefix(err.Error(), "yaml: ")
}

// toolList reads the tools field: a comma list or a list of names; nil (every tool) when
// absent or when it holds "*".
func toolList(v any) ([]string, error) {
	var names []string
	switch t := v.(type) {
	case nil:
		return nil, nil
	case string:
		for _, n := range strings.Split(t, ",") {
			if n = strings.TrimSpace(n); n != "" {
				names = append(names, n)
			}
		}
	case []any:
		for _, x := range t {
			s, ok := x.(string)
			if !ok {
				return nil, fmt.Errorf("a list of tool names holds %v", x)
			}
			if s = strings.TrimSpace(s); s != "" {
				names = append(names, s)
			}
		}
	default:
		return nil, fmt.Errorf("a comma list of tool names, not %v", v)
	}
	if slices.Contains(names, "*") {
		return nil, nil
	}
	if names == nil {
		return []string{}, nil
	}
	return names, nil
}

// hooksJSON is the hooks field as a settings file's hooks object, its Stop hooks under
// SubagentStop (they run when the agent's turn would end, as Claude Code runs them).
func hooksJSON(v any) (json.RawMessage, error) {
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("must be an object mapping event names to matcher arrays, not %v", v)
	}
	if stop, ok := obj["Stop"]; ok {
		delete(obj, "Stop")
		sub, _ := obj["SubagentStop"].([]any)
		more, ok := stop.([]any)
		if !ok {
			return nil, errors.New("its Stop entry must be an array of matchers")
		}
		obj["SubagentStop"] = append(sub, more...)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(obj); err != nil {
		return nil, fmt.Errorf("not JSON-shaped: %w", err)
	}
	return json.RawMessage(bytes.TrimSpace(b.Bytes())), nil
}
