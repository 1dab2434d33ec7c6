// Package cli implements dshgen's subcommands; it is a package (not main) so that tests
// and testscript can run the command in process.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/dshkit/dsh/gen"
	"github.com/dshkit/dsh/gen/emit"
	"github.com/dshkit/dsh/gen/emit/docs"
	"github.com/dshkit/dsh/gen/emit/scaffold"
	"github.com/dshkit/dsh/gen/emit/schema"
	"github.com/dshkit/dsh/gen/load"
	"github.com/dshkit/dsh/internal/clix"
	"github.com/dshkit/dsh/spec"
)

// Exit codes.
const (
	exitOK    = 0
	exitStale = 1
	exitUsage = 2
)

const usage = `usage:
  dshgen generate [-spec DIR] [-out DIR] [-docs FILE]  write the generated tree (only changed files)
  dshgen check    [-spec DIR] [-out DIR] [-docs FILE]  exit 1 and print a diff if anything is stale
  dshgen schema   -out DIR [-spec DIR]                  write one JSON Schema per payload and decision
                                                        (DIR/<pkg>/: one per record of each wire package)
  dshgen docs     -out FILE [-spec DIR]                 write the Markdown catalog of every event
                                                        (DIR/wire/<pkg>.md: one per wire package)
  dshgen scaffold -type T -events E1,E2 -out FILE [-pkg NAME] [-spec DIR]
                                                        write a native plugin's Register glue
                                                        (-pkg defaults to $GOPACKAGE, set by go generate;
                                                        a plugin module uses the CUE-free dshscaffold)
  dshgen breaking --against REF [--spec DIR] [--format text|json] [--verbose]
                                                        report what the spec breaks against REF
                                                        (a git ref or a spec directory)

Every command reads the whole spec tree: the canonical spec in -spec and one wire package
per CUE package in -spec/wire. Wire packages generate Go into <out>/wire/<pkg> and schemas
into <out>/schema/<pkg>; generate and check also cover the bridge tables of -spec/bridges
(<out>/hookmap).

Run dshgen <command> -help for a command's flags. Exit status: 0 success (check: fresh),
1 check found stale files (breaking: a breaking change), 2 a usage error or an invalid spec.
`

// Main runs dshgen with args (without the program name) and returns the exit code.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	top := clix.New("dshgen", usage, stdout, stderr)
	if len(args) == 0 {
		return top.UsageError("a command is required")
	}
	cmd, rest := args[0], args[1:]
	if clix.IsHelp(cmd) {
		fmt.Fprint(stdout, top.Help())
		return exitOK
	}
	run, ok := map[string]func(*clix.Command, []string, io.Writer, io.Writer) (int, error){
		"generate": tree, "check": tree, "schema": schemaCmd, "docs": docsCmd, "scaffold": scaffoldCmd,
		"breaking": breakingCmd,
	}[cmd]
	if !ok {
		return top.UsageError("unknown command %q", cmd)
	}
	c := clix.New("dshgen "+cmd, subUsage[cmd], stdout, stderr)
	code, err := run(c, rest, stdout, stderr)
	if err == nil {
		return code
	}
	return c.Exit(failure(err))
}

// subUsage is each command's synopsis, printed before its flags.
var subUsage = map[string]string{
	"generate": "usage: dshgen generate [-spec DIR] [-out DIR] [-docs FILE]\n\nWrites the generated tree: only the files whose content changed, each atomically;\nremoves generated files the spec no longer produces. An invalid spec writes nothing.\n",
	"check":    "usage: dshgen check [-spec DIR] [-out DIR] [-docs FILE]\n\nExits 1 and prints a unified diff when any generated file is stale.\n",
	"schema":   "usage: dshgen schema -out DIR [-spec DIR]\n\nWrites one JSON Schema per payload and decision into DIR (DIR/<pkg>/ for wire packages).\n",
	"docs":     "usage: dshgen docs -out FILE [-spec DIR]\n\nWrites the Markdown catalog of every event to FILE (and one per wire package beside it).\n",
	"breaking": breakingUsage,
	"scaffold": "usage: dshgen scaffold -type T -events E1,E2 -out FILE [-pkg NAME] [-spec DIR]\n\nWrites a native plugin's Register glue for T's listener methods at the events.\n-pkg defaults to $GOPACKAGE, which go generate sets; outside go generate it is required.\nA plugin's own module uses the CUE-free command dshscaffold instead (see README.md).\n",
}

// failure makes an error that is not a usage error one of dshgen's documented failures:
// an invalid spec or a file that cannot be read or written exits 2, the message of a spec
// error starting with its CUE position.
func failure(err error) error {
	var usage *clix.UsageError
	if errors.As(err, &usage) {
		return err
	}
	var se *load.Error
	return &clix.CodedError{Code: exitUsage, Err: err, Unprefixed: errors.As(err, &se)}
}

// parse parses args with c; the error it returns stops the command with Parse's code.
func parse(c *clix.Command, args []string) (int, error) {
	if code, ok := c.Parse(args, 0); !ok {
		return code, clix.Stop(code)
	}
	return exitOK, nil
}

// specDirFlag defines -spec on c with the default def.
func specDirFlag(c *clix.Command, def, usage string) *string {
	return c.Flags.String("spec", def, usage)
}

// checkSpecDir fails with a usage error when dir is not a directory.
func checkSpecDir(dir string) error {
	fi, err := os.Stat(dir)
	if err != nil {
		return clix.Usagef("-spec %s: %v", dir, errors.Unwrap(err))
	}
	if !fi.IsDir() {
		return clix.Usagef("-spec %s: not a directory", dir)
	}
	return nil
}

// loadTree loads the spec tree in dir (the canonical spec, its wire packages, the bridge
// tables and the conformance scenarios), laying the canonical spec out with main.
func loadTree(dir string, main func(pkg string) gen.Layout) (*gen.Tree, error) {
	return gen.Load(dir, filepath.ToSlash(filepath.Clean(dir)), main)
}

// tree implements generate and check. Output paths are computed relative to the common
// root of -out and -docs so that the emitters' paths stay repository-relative.
func tree(c *clix.Command, args []string, stdout, stderr io.Writer) (int, error) {
	cmd := strings.TrimPrefix(c.Name, "dshgen ")
	specDir := specDirFlag(c, "spec", "spec directory")
	out := c.Flags.String("out", "generated", "output directory of generated code and schemas")
	docsFile := c.Flags.String("docs", "docs/catalog.md", "Markdown catalog to write (empty: none)")
	if code, err := parse(c, args); err != nil {
		return code, err
	}
	if err := checkSpecDir(*specDir); err != nil {
		return exitUsage, err
	}
	root, layout, err := layoutFor(*out, *docsFile)
	if err != nil {
		return exitUsage, err
	}
	t, err := loadTree(*specDir, layout)
	if err != nil {
		return exitUsage, err
	}
	files, err := t.Files()
	if err != nil {
		return exitUsage, err
	}
	if cmd == "check" {
		diffs, err := gen.Stale(root, files)
		if err != nil {
			return exitUsage, err
		}
		if len(diffs) > 0 {
			for _, d := range diffs {
				fmt.Fprint(stdout, d)
			}
			fmt.Fprintf(stderr, "dshgen check: %s\nrun: go generate ./spec (or dshgen generate)\n", gen.Summary(diffs))
			return exitStale, nil
		}
		return exitOK, nil
	}
	changed, err := gen.Write(root, files, true)
	if err != nil {
		return exitUsage, err
	}
	for _, c := range changed {
		fmt.Fprintf(stdout, "wrote %s\n", path.Join(filepath.ToSlash(root), c))
	}
	return exitOK, nil
}

// layoutFor maps -out and -docs onto a root and the canonical spec's Layout relative to it,
// as a function of the spec's package: -out DIR holds DIR/<package> (Go) and DIR/schema, and
// root is DIR's parent; -docs must lie under root. (The wire packages' layouts follow from
// it: gen.WireLayout.)
func layoutFor(out, docsFile string) (string, func(pkg string) gen.Layout, error) {
	out = filepath.Clean(out)
	root := filepath.Dir(out)
	base := filepath.ToSlash(filepath.Base(out))
	docs := ""
	if docsFile != "" {
		rel, err := filepath.Rel(root, filepath.Clean(docsFile))
		if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return "", nil, clix.Usagef("-docs %s must lie under %s (the parent of -out)", docsFile, root)
		}
		docs = filepath.ToSlash(rel)
	}
	return root, func(pkg string) gen.Layout {
		return gen.Layout{GoDir: base + "/" + pkg, SchemaDir: base + "/schema", DocsFile: docs}
	}, nil
}

// standalone lays out the canonical spec for the schema and docs commands, which write into
// a directory of their own: the schemas at its top (the wire packages' in <pkg>/, by
// gen.WireLayout), the catalog named catalog. GoDir only anchors the wire layouts.
func standalone(catalog string) func(pkg string) gen.Layout {
	return func(pkg string) gen.Layout {
		return gen.Layout{GoDir: "go/" + pkg, SchemaDir: ".", DocsFile: catalog}
	}
}

func schemaCmd(c *clix.Command, args []string, stdout, _ io.Writer) (int, error) {
	specDir := specDirFlag(c, "spec", "spec directory")
	out := c.Flags.String("out", "", "directory to write the JSON Schema files into (required)")
	if code, err := parse(c, args); err != nil {
		return code, err
	}
	if *out == "" {
		return exitUsage, clix.Usagef("-out DIR is required")
	}
	if err := checkSpecDir(*specDir); err != nil {
		return exitUsage, err
	}
	t, err := loadTree(*specDir, standalone(""))
	if err != nil {
		return exitUsage, err
	}
	var files []emit.File
	for _, u := range t.Units {
		fs, err := schema.EmitWith(u.Spec, u.Layout.SchemaDir, emit.Options{SpecDir: u.SpecDir})
		if err != nil {
			return exitUsage, fmt.Errorf("%s: %w", u.Spec.Package, err)
		}
		files = append(files, fs...)
	}
	return exitFor(writeUnder(*out, files, stdout))
}

// exitFor is the exit code and error of a command that returned err.
func exitFor(err error) (int, error) {
	if err != nil {
		return exitUsage, err
	}
	return exitOK, nil
}

func docsCmd(c *clix.Command, args []string, stdout, _ io.Writer) (int, error) {
	specDir := specDirFlag(c, "spec", "spec directory")
	out := c.Flags.String("out", "", "Markdown file to write (required)")
	if code, err := parse(c, args); err != nil {
		return code, err
	}
	if *out == "" {
		return exitUsage, clix.Usagef("-out FILE is required")
	}
	if err := checkSpecDir(*specDir); err != nil {
		return exitUsage, err
	}
	t, err := loadTree(*specDir, standalone(filepath.ToSlash(filepath.Base(*out))))
	if err != nil {
		return exitUsage, err
	}
	var files []emit.File
	for i, u := range t.Units {
		o := emit.Options{SpecDir: u.SpecDir}
		name := u.Layout.DocsFile
		if i > 0 { // a wire or conformance package: its layout has no catalog
			name = path.Join(u.SpecDir, u.Spec.Package+".md")
		}
		f, err := docs.EmitWith(u.Spec, name, o)
		if err != nil {
			return exitUsage, fmt.Errorf("%s: %w", u.Spec.Package, err)
		}
		files = append(files, f)
	}
	return exitFor(writeUnder(filepath.Dir(*out), files, stdout))
}

func writeUnder(dir string, files []emit.File, stdout io.Writer) error {
	changed, err := gen.Write(dir, files, false)
	for _, c := range changed {
		fmt.Fprintf(stdout, "wrote %s\n", path.Join(filepath.ToSlash(dir), c))
	}
	return err
}

func scaffoldCmd(c *clix.Command, args []string, stdout, _ io.Writer) (int, error) {
	specDir := specDirFlag(c, "", "spec directory (default: the spec built into dshgen)")
	typ := c.Flags.String("type", "", "the plugin type whose methods are the listeners (required)")
	events := c.Flags.String("events", "", "comma-separated extension points, e.g. tools/guard,tools/post-execute (required)")
	out := c.Flags.String("out", "", "Go file to write (required)")
	pkg := c.Flags.String("pkg", os.Getenv("GOPACKAGE"), "Go package of the file (default $GOPACKAGE, set by go generate)")
	if code, err := parse(c, args); err != nil {
		return code, err
	}
	switch {
	case *typ == "" || *events == "" || *out == "":
		return exitUsage, clix.Usagef("-type, -events and -out are required")
	case *pkg == "":
		return exitUsage, clix.Usagef("-pkg is required outside go generate (which sets $GOPACKAGE)")
	}
	var t *gen.Tree
	var err error
	if *specDir == "" {
		t, err = gen.LoadFS(spec.FS, "spec", gen.DefaultLayout)
	} else {
		if err := checkSpecDir(*specDir); err != nil {
			return exitUsage, err
		}
		t, err = loadTree(*specDir, gen.DefaultLayout)
	}
	if err != nil {
		return exitUsage, err
	}
	main := t.Main()
	data, err := scaffold.Emit(main.Spec, scaffold.Options{
		Package: *pkg, Type: *typ, Events: strings.Split(*events, ","),
		Import: gen.Module + "/" + main.Layout.GoDir,
	})
	if err != nil {
		return exitUsage, clix.Usagef("%s", err)
	}
	return exitFor(writeUnder(filepath.Dir(*out), []emit.File{{Path: filepath.Base(*out), Data: data}}, stdout))
}
