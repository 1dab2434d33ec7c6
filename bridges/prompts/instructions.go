// Package prompts reads what an engine adds to the model's input besides the prompt, from
// its dialect's table (spec/bridges, generated/hookmap): the instruction files (Claude
// Code's CLAUDE.md and its "@path" imports, Codex's AGENTS.md, Gemini CLI's GEMINI.md),
// rendered as the engine places them, and the custom slash commands a prompt "/name args"
// expands from. Nothing here knows an engine: the file names, search order, import depth,
// caps and texts are the table's.
package prompts

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/dshkit/dsh/generated/hookmap"
)

// MaxFileBytes bounds what is read of one instruction or command file; the rest is left
// out (with a note in Loaded.Notes).
const MaxFileBytes = 1 << 20

// File is one instruction file that was read.
type File struct {
	// Path is the file's absolute path.
	Path string
	// Kind is the engine's name for its scope (User, Project, Local).
	Kind string
	// Label is the kind's label in the rendered entry.
	Label string
	// Content is the file's text as read (within the caps).
	Content string
	// Parent is the file whose "@path" imported this one; "" for a file read on its own.
	Parent string
}

// LoadReason is the engine's load_reason of f: "include" for an import, else
// "session_start".
func (f File) LoadReason() string {
	if f.Parent != "" {
		return "include"
	}
	return "session_start"
}

// Loaded is what LoadInstructions read.
type Loaded struct {
	// Files are the files read, in the engine's order (an import right after the file
	// that imports it).
	Files []File
	// Notes say what was not read and why (a file too large, an import outside its tree,
	// a file that is not a regular one), one line each.
	Notes []string
}

// LoadInstructions reads the instruction files t names for a session in workspace, with
// the user's home directory home ("" reads no home file). A file that does not exist is
// skipped; one that cannot be read is an error naming it. An "@path" import is followed up
// to t.ImportDepth hops, each file once (a cycle ends there), and only when it resolves,
// symbolic links included, inside the tree of the file that started the chain (the
// workspace for a file in it, the home directory for a home file, else that file's own
// directory); any other import is left as text, with a note.
func LoadInstructions(t *hookmap.Instructions, workspace, home string) (Loaded, error) {
	var out Loaded
	if t == nil {
		return out, nil
	}
	dirs := []string{workspace}
	if t.Dirs == "parents" {
		dirs = parents(workspace)
	}
	seen := map[string]bool{}
	budget := t.MaxBytes
	l := &loader{t: t, seen: seen, out: &out, budget: &budget, capped: t.MaxBytes > 0}
	for _, f := range t.Files {
		if f.Base != "home" {
			continue
		}
		if home == "" {
			continue
		}
		if err := l.read(filepath.Join(home, filepath.FromSlash(f.Path)), f, "", home, 0); err != nil {
			return out, err
		}
	}
	for _, dir := range dirs {
		root := dir
		if within(dir, workspace) {
			root = workspace
		}
		for _, f := range t.Files {
			if f.Base != "dirs" {
				continue
			}
			if err := l.read(filepath.Join(dir, filepath.FromSlash(f.Path)), f, "", root, 0); err != nil {
				return out, err
			}
		}
	}
	return out, nil
}

// parents are the directories from the filesystem root's child down to dir.
func parents(dir string) []string {
	var out []string
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if filepath.Dir(d) == d {
			break
		}
		out = append([]string{d}, out...)
	}
	return out
}

// within says whether path is dir or beneath it.
func within(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

type loader struct {
	t      *hookmap.Instructions
	seen   map[string]bool
	out    *Loaded
	budget *int
	capped bool
}

// read reads path (of kind f) and, depth permitting, its imports; root is the tree its
// imports must stay in.
func (l *loader) read(path string, f hookmap.InstructionFile, parent, root string, depth int) error {
	real, err := filepath.EvalSymlinks(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("instruction file %s: %w", path, err)
	}
	if l.seen[real] {
		return nil
	}
	l.seen[real] = true
	text, ok, err := readText(real, &l.out.Notes)
	if err != nil || !ok {
		return err
	}
	if l.capped {
		if *l.budget <= 0 {
			l.out.Notes = append(l.out.Notes, fmt.Sprintf("%s: not read: the instruction files' cap of %d bytes is reached", path, l.t.MaxBytes))
			return nil
		}
		if len(text) > *l.budget {
			l.out.Notes = append(l.out.Notes, fmt.Sprintf("%s: cut at the instruction files' cap of %d bytes", path, l.t.MaxBytes))
			text = text[:*l.budget]
		}
		*l.budget -= len(text)
	}
	if strings.TrimSpace(text) == "" {
		return nil
	}
	l.out.Files = append(l.out.Files, File{Path: path, Kind: f.Kind, Label: f.Label, Content: text, Parent: parent})
	if depth >= l.t.ImportDepth {
		return nil
	}
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		realRoot = root
	}
	for _, imp := range imports(text) {
		target := imp
		switch {
		case strings.HasPrefix(imp, "~/"):
			home, err := os.UserHomeDir()
			if err != nil {
				continue
			}
			target = filepath.Join(home, imp[2:])
		case !filepath.IsAbs(imp):
			target = filepath.Join(filepath.Dir(path), imp)
		}
		resolved, err := filepath.EvalSymlinks(target)
		if err != nil {
			continue // as the engine: an import that names nothing stays text
		}
		if !within(resolved, realRoot) {
			l.out.Notes = append(l.out.Notes, fmt.Sprintf("%s: import %q not read: it is outside %s", path, imp, root))
			continue
		}
		if err := l.read(target, f, path, root, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// readText reads a regular file, at most MaxFileBytes of it; ok is false (with a note)
// for anything else.
func readText(path string, notes *[]string) (string, bool, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return "", false, fmt.Errorf("%s: %w", path, err)
	}
	if !fi.Mode().IsRegular() {
		*notes = append(*notes, fmt.Sprintf("%s: not read: not a regular file", path))
		return "", false, nil
	}
	fh, err := os.Open(path)
	if err != nil {
		return "", false, fmt.Errorf("%s: %w", path, err)
	}
	defer fh.Close()
	data, err := io.ReadAll(io.LimitReader(fh, MaxFileBytes+1))
	if err != nil {
		return "", false, fmt.Errorf("%s: %w", path, err)
	}
	if len(data) > MaxFileBytes {
		*notes = append(*notes, fmt.Sprintf("%s: cut at %d bytes", path, MaxFileBytes))
		data = data[:MaxFileBytes]
	}
	return string(data), true, nil
}

// imports are the "@path" references of text, in order: a word starting with @ outside
// fenced code blocks and inline code spans.
func imports(text string) []string {
	var out []string
	fenced := false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if fenced {
			continue
		}
		inCode := false
		for i, w := 0, ""; i < len(line); i++ {
			c := line[i]
			if c == '`' {
				inCode = !inCode
				continue
			}
			if inCode || c != '@' || (i > 0 && line[i-1] != ' ' && line[i-1] != '\t') {
				continue
			}
			j := i + 1
			for j < len(line) && line[j] != ' ' && line[j] != '\t' {
				j++
			}
			w = line[i+1 : j]
			if w != "" {
				out = append(out, w)
			}
			i = j
		}
	}
	return out
}

// Render is the text of files as t places it before the first prompt: each file's entry,
// joined, wrapped; "" when there is none.
func Render(t *hookmap.Instructions, files []File, workspace string) string {
	if t == nil || len(files) == 0 {
		return ""
	}
	entries := make([]string, len(files))
	for i, f := range files {
		entries[i] = fill(t.Entry, map[string]string{"path": f.Path, "label": f.Label, "content": f.Content, "trimmed": strings.TrimSpace(f.Content)})
	}
	return fill(t.Wrap, map[string]string{"text": strings.Join(entries, t.Separator), "cwd": workspace})
}

// fill replaces each {name} of tmpl by vars[name], in one pass (a value is never filled
// again).
func fill(tmpl string, vars map[string]string) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(tmpl, '{')
		if i < 0 {
			b.WriteString(tmpl)
			return b.String()
		}
		j := strings.IndexByte(tmpl[i:], '}')
		if j < 0 {
			b.WriteString(tmpl)
			return b.String()
		}
		name := tmpl[i+1 : i+j]
		v, ok := vars[name]
		b.WriteString(tmpl[:i])
		if ok {
			b.WriteString(v)
		} else {
			b.WriteString(tmpl[i : i+j+1])
		}
		tmpl = tmpl[i+j+1:]
	}
}
