// Package cli implements dshgen's subcommands; it is a package (not main) so that tests
// and testscript can run the command in process.
package cli

import (
	"context"
	"errors"
	"flag"
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

Every command reads the whole spec tree: the canonical spec in -spec and one wire package
per CUE package in -spec/wire. Wire packages generate Go into <out>/wire/<pkg> and schemas
into <out>/schema/<pkg>; generate and check also cover the bridge tables of -spec/bridges
(<out>/hookmap).
`

// Main runs dshgen with args (without the program name) and returns the exit code.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitUsage
	}
	cmd, rest := args[0], args[1:]
	var err error
	code := exitOK
	switch cmd {
	case "generate", "check":
		code, err = tree(cmd, rest, stdout, stderr)
	case "schema":
		err = schemaCmd(rest, stdout)
	case "docs":
		err = docsCmd(rest, stdout)
	case "scaffold":
		err = scaffoldCmd(rest, stdout)
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return exitOK
	default:
		fmt.Fprintf(stderr, "dshgen: unknown command %q\n%s", cmd, usage)
		return exitUsage
	}
	if err != nil {
		fmt.Fprintln(stderr, errorText(err))
		return exitUsage
	}
	return code
}

// errorText renders an error; a spec error already starts with file:line:col.
func errorText(err error) string {
	var se *load.Error
	if errors.As(err, &se) {
		return err.Error()
	}
	return "dshgen: " + err.Error()
}

// usageError is a command-line mistake.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func newFlags(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return fs
}

func parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		return usageError{fmt.Sprintf("%s: %v", fs.Name(), err)}
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Sprintf("%s: unexpected argument %q", fs.Name(), fs.Arg(0))}
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
func tree(cmd string, args []string, stdout, stderr io.Writer) (int, error) {
	fs := newFlags(cmd)
	specDir := fs.String("spec", "spec", "spec directory")
	out := fs.String("out", "generated", "output directory of generated code and schemas")
	docsFile := fs.String("docs", "docs/catalog.md", "Markdown catalog to write (empty: none)")
	if err := parse(fs, args); err != nil {
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
			return "", nil, usageError{fmt.Sprintf("-docs %s must lie under %s (the parent of -out)", docsFile, root)}
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

func schemaCmd(args []string, stdout io.Writer) error {
	fs := newFlags("schema")
	specDir := fs.String("spec", "spec", "spec directory")
	out := fs.String("out", "", "directory to write the JSON Schema files into")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *out == "" {
		return usageError{"schema: -out DIR is required"}
	}
	t, err := loadTree(*specDir, standalone(""))
	if err != nil {
		return err
	}
	var files []emit.File
	for _, u := range t.Units {
		fs, err := schema.EmitWith(u.Spec, u.Layout.SchemaDir, emit.Options{SpecDir: u.SpecDir})
		if err != nil {
			return fmt.Errorf("%s: %w", u.Spec.Package, err)
		}
		files = append(files, fs...)
	}
	return writeUnder(*out, files, stdout)
}

func docsCmd(args []string, stdout io.Writer) error {
	fs := newFlags("docs")
	specDir := fs.String("spec", "spec", "spec directory")
	out := fs.String("out", "", "Markdown file to write")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *out == "" {
		return usageError{"docs: -out FILE is required"}
	}
	t, err := loadTree(*specDir, standalone(filepath.ToSlash(filepath.Base(*out))))
	if err != nil {
		return err
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
			return fmt.Errorf("%s: %w", u.Spec.Package, err)
		}
		files = append(files, f)
	}
	return writeUnder(filepath.Dir(*out), files, stdout)
}

func writeUnder(dir string, files []emit.File, stdout io.Writer) error {
	changed, err := gen.Write(dir, files, false)
	for _, c := range changed {
		fmt.Fprintf(stdout, "wrote %s\n", path.Join(filepath.ToSlash(dir), c))
	}
	return err
}

func scaffoldCmd(args []string, stdout io.Writer) error {
	fs := newFlags("scaffold")
	specDir := fs.String("spec", "", "spec directory (default: the spec built into dshgen)")
	typ := fs.String("type", "", "the plugin type whose methods are the listeners")
	events := fs.String("events", "", "comma-separated extension points, e.g. tools/guard,tools/post-execute")
	out := fs.String("out", "", "Go file to write")
	pkg := fs.String("pkg", os.Getenv("GOPACKAGE"), "Go package of the file (default: $GOPACKAGE, set by go generate)")
	if err := parse(fs, args); err != nil {
		return err
	}
	switch {
	case *typ == "" || *events == "" || *out == "":
		return usageError{"scaffold: -type, -events and -out are required"}
	case *pkg == "":
		return usageError{"scaffold: -pkg is required outside go generate"}
	}
	var t *gen.Tree
	var err error
	if *specDir == "" {
		t, err = gen.LoadFS(spec.FS, "spec", gen.DefaultLayout)
	} else {
		t, err = loadTree(*specDir, gen.DefaultLayout)
	}
	if err != nil {
		return err
	}
	main := t.Main()
	data, err := scaffold.Emit(main.Spec, scaffold.Options{
		Package: *pkg, Type: *typ, Events: strings.Split(*events, ","),
		Import: gen.Module + "/" + main.Layout.GoDir,
	})
	if err != nil {
		return usageError{"scaffold: " + err.Error()}
	}
	return writeUnder(filepath.Dir(*out), []emit.File{{Path: filepath.Base(*out), Data: data}}, stdout)
}
