package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/dshkit/dsh/runtime/tools"
)

// CodePatch is the failure of an apply_patch Codex refuses: a patch that does not parse,
// one that does not apply (a file to update or delete that cannot be read, lines or a
// context not found), an empty one, or a path outside the workspace. Its message is what
// the model reads ("apply_patch verification failed: …", "patch rejected: empty patch").
const CodePatch = "PATCH"

// applyPatchInput is apply_patch's input: Codex's tool is freeform (the model writes the
// patch as the call's text), which dsh receives as the argument "input".
type applyPatchInput struct {
	Input string `json:"input"`
}

// applyPatchSchema is the schema apply_patch's arguments are checked against (the
// toolset adds the engine's grammar to it, llm.FreeformKey).
const applyPatchSchema = `{"type":"object","properties":{"input":{"type":"string"}},"required":["input"],"additionalProperties":false}`

// CodexPatchParses says whether text is a patch in Codex's grammar (its apply_patch
// parses it before the PreToolUse hooks run: a patch that does not parse fires none).
func CodexPatchParses(text string) bool {
	_, err := parsePatch(text)
	return err == nil
}

// codexApplyPatch is Codex's apply_patch (the freeform tool Codex offers the models of
// its catalog): the patch is parsed, every change is computed from the files as they are
// (nothing is written when one fails), then the files are added, updated, moved and
// deleted, each confined to the workspace. The model reads Codex's words: "Exit code: 0",
// "Wall time: N seconds" (to a tenth), "Output:" and "Success. Updated the following files:" with a
// line per file ("A PATH", "M PATH", "D PATH", as the patch names it); a failure reads
// "apply_patch verification failed: MESSAGE" (the paths in it made absolute, as Codex
// does) or "patch rejected: empty patch" (measured on 0.169.0, codex/apply-patch*).
func codexApplyPatch(o Options) tools.Definition {
	return tools.Definition{
		Name:            "apply_patch",
		Description:     "Edits files with a patch in Codex's patch grammar.",
		InputSchema:     json.RawMessage(applyPatchSchema),
		FinalizeContent: plainFailure,
		Run: runWith(func(_ context.Context, in applyPatchInput) (string, error) {
			return applyCodexPatch(o, in.Input)
		}),
	}
}

// applyCodexPatch applies patch in o.Workspace and returns what the model reads.
func applyCodexPatch(o Options, patch string) (string, error) {
	start := time.Now()
	fail := func(msg string) error {
		return tools.NewError(CodePatch, "apply_patch verification failed: "+msg)
	}
	hunks, err := parsePatch(patch)
	if err != nil {
		return "", fail(err.Error())
	}
	if len(hunks) == 0 {
		return "", tools.NewError(CodePatch, "patch rejected: empty patch")
	}
	changes, err := verifyPatch(o, hunks)
	if err != nil {
		return "", fail(err.Error())
	}
	var added, modified, deleted []string
	for _, c := range changes {
		var err error
		switch c.kind {
		case 'A':
			err = writeRel(o.Workspace, c.rel, c.content)
			added = append(added, c.shown)
		case 'M':
			if err = writeRel(o.Workspace, c.rel, c.content); err == nil && c.from != "" && c.from != c.rel {
				err = removeRel(o.Workspace, c.from)
			}
			modified = append(modified, c.shown)
		case 'D':
			err = removeRel(o.Workspace, c.rel)
			deleted = append(deleted, c.shown)
		}
		if err != nil {
			// The changes before this one stay made, as Codex leaves them.
			return "", tools.NewError(CodePatch, fmt.Sprintf("Exit code: 1\nWall time: %s seconds\nOutput:\n%v\n", wallSeconds(time.Since(start)), err))
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Exit code: 0\nWall time: %s seconds\nOutput:\nSuccess. Updated the following files:\n", wallSeconds(time.Since(start)))
	for _, list := range []struct {
		letter string
		paths  []string
	}{{"A", added}, {"M", modified}, {"D", deleted}} {
		for _, p := range list.paths {
			b.WriteString(list.letter + " " + p + "\n")
		}
	}
	return b.String(), nil
}

// wallSeconds is a wall time as Codex writes it after "Wall time:": seconds rounded to a
// tenth, without a fraction when there is none ("0", "0.1", "2").
func wallSeconds(d time.Duration) string {
	return strconv.FormatFloat(math.Round(d.Seconds()*10)/10, 'f', -1, 32)
}

// verifyPatch computes every change of hunks from the files as they are now, failing in
// Codex's words (a path absolute, as Codex shows it) before anything is written.
func verifyPatch(o Options, hunks []patchHunk) ([]patchChange, error) {
	abs := func(p string) string {
		if filepath.IsAbs(p) {
			return p
		}
		return o.Workspace + string(filepath.Separator) + p
	}
	var out []patchChange
	for _, h := range hunks {
		rel, err := patchRel(o.Workspace, h.path)
		if err != nil {
			return nil, confineError(o, h.path, err)
		}
		switch h.kind {
		case 'A':
			out = append(out, patchChange{kind: 'A', rel: rel, shown: h.path, content: h.add})
		case 'D':
			if _, err := readRel(o.Workspace, rel, o.EditMaxBytes); err != nil {
				return nil, patchFailure(fmt.Sprintf("Failed to read %s: %s", abs(h.path), ioMessage(err, abs(h.path))))
			}
			out = append(out, patchChange{kind: 'D', rel: rel, shown: h.path})
		case 'U':
			orig, err := readRel(o.Workspace, rel, o.EditMaxBytes)
			if err != nil {
				return nil, patchFailure(fmt.Sprintf("Failed to read file to update %s: %s", abs(h.path), ioMessage(err, abs(h.path))))
			}
			content, err := applyChunks(orig, abs(h.path), h.chunks)
			if err != nil {
				return nil, err
			}
			c := patchChange{kind: 'M', rel: rel, shown: h.path, content: content}
			if h.move != "" {
				dest, err := patchRel(o.Workspace, h.move)
				if err != nil {
					return nil, confineError(o, h.move, err)
				}
				c.from, c.rel, c.shown = rel, dest, h.move
			}
			if len(content) > o.EditMaxBytes {
				return nil, fmt.Errorf("%s would be larger than %d bytes", abs(c.shown), o.EditMaxBytes)
			}
			out = append(out, c)
		}
	}
	return out, nil
}

// confineError is the error of a patch path dsh refuses: outside the workspace (Codex
// writes there when its sandbox lets it; dsh's file tools never leave the workspace).
func confineError(o Options, path string, err error) error {
	if errors.Is(err, errPatchOutside) {
		return fmt.Errorf("%s is outside the workspace %s", path, o.Workspace)
	}
	return err
}

// ioMessage words a read's failure of path as Codex does for the common cases: Rust's
// io::Error ("No such file or directory (os error 2)"), and "path `PATH` is not a file"
// for a directory or another file that is not a regular one.
func ioMessage(err error, path string) string {
	switch {
	case errors.Is(err, errNotFile):
		return fmt.Sprintf("path `%s` is not a file", path)
	case errors.Is(err, fs.ErrNotExist):
		return "No such file or directory (os error 2)"
	case errors.Is(err, fs.ErrPermission):
		return "Permission denied (os error 13)"
	}
	return err.Error()
}
