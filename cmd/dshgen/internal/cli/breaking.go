package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/dshkit/dsh/gen"
	"github.com/dshkit/dsh/gen/breaking"
	"github.com/dshkit/dsh/gen/load"
	"github.com/dshkit/dsh/internal/clix"
)

// exitBreaking is breaking's exit code for an unannounced breaking change.
const exitBreaking = 1

// changelogFile is the spec's CHANGELOG, in the spec directory.
const changelogFile = "CHANGELOG.md"

const breakingUsage = `usage: dshgen breaking --against REF [--spec DIR] [--format text|json] [--verbose]

Compares the spec tree in DIR (the working tree's, default spec) with REF's and prints one
line per breaking change: "spec/file.cue:LINE: RULE_ID: message". REF is a git ref (read
with git ls-tree and git cat-file, without checking anything out) or a directory holding a
spec tree (its top-level .cue files, or those of its spec/ subdirectory). Nothing is
written to disk.

Rules come in three categories: WIRE (a session log or hook JSON written under REF no
longer decodes, or decodes to something else), GO (code compiled against REF's generated
Go no longer compiles) and HOOK (a hook configuration now does something else). -rules
lists them.

A breaking change is allowed only with a major version bump of the spec (the version field
of spec/version.cue) and an entry "## MAJOR.MINOR.PATCH" in DIR/CHANGELOG.md: then the
findings are still printed and the exit status is 0.

Without --verbose the conformance scenarios are not loaded: they only give notes.

Exit status: 0 compatible (or announced), 1 breaking, 2 a usage error, a REF that does not
exist, holds no spec or a spec that does not load, or a working-tree spec that does not
load (its CUE position is printed).
`

func breakingCmd(c *clix.Command, args []string, stdout, stderr io.Writer) (int, error) {
	specDir := specDirFlag(c, "spec", "spec directory of the working tree")
	against := c.Flags.String("against", "", "git ref or directory of the spec to compare with (required)")
	format := "text"
	c.Flags.Var(clix.OneOf(&format, false, "text", "json"), "format", "output format: text or json")
	verbose := c.Flags.Bool("verbose", false, "also print notes on compatible changes (and load the conformance scenarios, to note new ones)")
	rules := c.Flags.Bool("rules", false, "list the rules and exit")
	if code, err := parse(c, args); err != nil {
		return code, err
	}
	if *rules {
		for _, r := range breaking.Rules {
			fmt.Fprintf(stdout, "%-34s %-4s %s\n", r.ID, r.Category, r.Doc)
		}
		return exitOK, nil
	}
	if *against == "" {
		return exitUsage, clix.Usagef("--against REF is required")
	}
	if err := checkSpecDir(*specDir); err != nil {
		return exitUsage, err
	}
	ctx := context.Background()
	display := filepath.ToSlash(filepath.Clean(*specDir))
	cctx := load.NewContext()
	newT, err := gen.LoadCompare(cctx, os.DirFS(*specDir), display, *verbose)
	if err != nil {
		return exitUsage, err // a *load.Error: printed with its CUE positions
	}
	oldFS, err := againstFS(ctx, *against, *specDir)
	if err != nil {
		return exitUsage, fmt.Errorf("--against %s: %w", *against, err)
	}
	oldT, err := gen.LoadCompare(cctx, oldFS, display, *verbose)
	if err != nil {
		return exitUsage, fmt.Errorf("--against %s: the spec there does not load: %s", *against, firstLine(err.Error()))
	}
	rep := breaking.Compare(oldT, newT, display)
	changelog, err := os.ReadFile(filepath.Join(*specDir, changelogFile))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return exitUsage, err
	}
	announced, why := false, ""
	if len(rep.Findings) > 0 {
		announced, why = breaking.Announced(rep, *against, changelog, path.Join(display, changelogFile))
	}
	if format == "json" {
		out := struct {
			Against   string `json:"against"`
			Breaking  bool   `json:"breaking"`
			Announced bool   `json:"announced"`
			breaking.Report
		}{*against, len(rep.Findings) > 0, announced, rep}
		if !*verbose {
			out.Notes = []breaking.Finding{}
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(out); err != nil {
			return exitUsage, err
		}
	} else {
		for _, f := range rep.Findings {
			fmt.Fprintln(stdout, f)
		}
		if *verbose {
			for _, n := range rep.Notes {
				fmt.Fprintln(stdout, n)
			}
		}
	}
	switch {
	case len(rep.Findings) == 0:
		return exitOK, nil
	case announced:
		fmt.Fprintf(stderr, "dshgen breaking: %d breaking change(s) against %s, %s\n", len(rep.Findings), *against, why)
		return exitOK, nil
	}
	fmt.Fprintf(stderr, "dshgen breaking: %d breaking change(s) against %s; %s\n", len(rep.Findings), *against, why)
	return exitBreaking, nil
}

// againstFS opens REF: a directory holding a spec tree (at its top or in its spec/
// subdirectory), else a git ref of the repository holding specDir, read at specDir's
// path.
func againstFS(ctx context.Context, ref, specDir string) (fs.FS, error) {
	if fi, err := os.Stat(ref); err == nil && fi.IsDir() {
		for _, d := range []string{ref, filepath.Join(ref, "spec")} {
			if names, _ := filepath.Glob(filepath.Join(d, "*.cue")); len(names) > 0 {
				return os.DirFS(d), nil
			}
		}
		return nil, errors.New("the directory holds no spec (no .cue files in it or in its spec/)")
	}
	prefix, err := breaking.GitPrefix(ctx, specDir)
	if err != nil {
		return nil, fmt.Errorf("neither a directory nor a git ref (%s is not in a git work tree)", specDir)
	}
	fsys, err := breaking.GitFS(ctx, specDir, ref, prefix)
	switch {
	case errors.Is(err, breaking.ErrNoRef):
		return nil, errors.New("neither a directory nor a git ref")
	case errors.Is(err, breaking.ErrNoSpec):
		return nil, fmt.Errorf("no spec at %s/ in that commit", prefix)
	}
	return fsys, err
}

func firstLine(s string) string {
	line, rest, _ := strings.Cut(s, "\n")
	if n := strings.Count(rest, "\n") + 1; rest != "" {
		line += fmt.Sprintf(" (and %d more problem(s))", n)
	}
	return line
}
