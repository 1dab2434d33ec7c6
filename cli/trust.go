package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/dshkit/dsh/internal/atomicfile"
	"github.com/dshkit/dsh/internal/clix"
)

func init() {
	commands["trust"] = command{summary: "trust a project once: its own hook files, .mcp.json and commands load", run: runTrust}
	commands["untrust"] = command{summary: "stop trusting a project (dsh trust)", run: runUntrust}
}

const trustUsage = `usage: dsh trust [--list] [DIR]

Trusts the project DIR (default: the current directory) once, as accepting Claude Code's
trust dialog does: from then on dsh run and dsh acp load its own hook files
(.claude/settings.json and .claude/settings.local.json; Codex: .codex/hooks.json), its
.mcp.json and its .claude/commands without --trust, and so in every directory below it.
--trust still trusts the project for one run. dsh untrust DIR takes the trust back.

The trusted directories are kept, as absolute paths with symbolic links resolved, in
dsh/trusted.json under the user's configuration directory ($XDG_CONFIG_HOME, else
~/.config; on macOS ~/Library/Application Support). dsh refuses a trust file that is not
valid, is not owned by you, or that others may write (one line, exit 1): it trusts
nothing from it, and runs nothing that would need it, until it is fixed or removed.

--list prints the trusted directories, one a line.
`

const untrustUsage = `usage: dsh untrust [DIR]

Takes back dsh trust DIR (default: the current directory): the project's own hook files,
.mcp.json and commands no longer load without --trust. A directory trusted through a
directory above it stays trusted: untrust that one.
`

// trustFile is the trust file's content.
type trustFile struct {
	// Trusted are the trusted directories: absolute, cleaned, symbolic links resolved.
	Trusted []string `json:"trusted"`
}

// trustStore is the trust file of the user running dsh.
type trustStore struct {
	path string
}

// userTrust is the trust store in the user's configuration directory.
func userTrust() (trustStore, error) {
	dir, err := os.UserConfigDir()
	if err != nil {
		return trustStore{}, fmt.Errorf("no configuration directory for the trust file: %w", err)
	}
	return trustStore{path: filepath.Join(dir, "dsh", "trusted.json")}, nil
}

// load reads the trust file: none is an empty one; a file that is not valid, not owned by
// the user or writable by others is an error naming it.
func (s trustStore) load() (trustFile, error) {
	var tf trustFile
	f, err := os.Open(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		return tf, nil
	}
	if err != nil {
		return tf, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return tf, err
	}
	if err := checkOwned(s.path, st); err != nil {
		return tf, err
	}
	dec := json.NewDecoder(io.LimitReader(f, 1<<20))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&tf); err != nil {
		return tf, fmt.Errorf("%s: not a dsh trust file (%v); fix or remove it", s.path, err)
	}
	for i, d := range tf.Trusted {
		if !filepath.IsAbs(d) || filepath.Clean(d) != d {
			return tf, fmt.Errorf("%s: trusted[%d] %q is not a clean absolute path; fix or remove it", s.path, i, d)
		}
	}
	return tf, nil
}

// save writes tf to the trust file (its directory made 0700 when missing).
func (s trustStore) save(tf trustFile) error {
	if err := os.MkdirAll(filepath.Dir(s.path), 0o700); err != nil {
		return err
	}
	slices.Sort(tf.Trusted)
	b, err := json.MarshalIndent(tf, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.Write(s.path, append(b, '\n'))
}

// trusting returns the trusted directory that covers dir (dir itself or a directory above
// it), or "".
func (tf trustFile) trusting(dir string) string {
	for _, t := range tf.Trusted {
		if rel, err := filepath.Rel(t, dir); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return t
		}
	}
	return ""
}

// canonicalDir is dir as the trust file keeps it: absolute, symbolic links resolved; it
// must be a directory.
func canonicalDir(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", err
	}
	st, err := os.Stat(real)
	if err != nil {
		return "", err
	}
	if !st.IsDir() {
		return "", fmt.Errorf("%s: not a directory", dir)
	}
	return real, nil
}

// trustedProject says whether the user trusts the project directory dir (dsh trust):
// an error names a trust file that cannot be used.
func trustedProject(dir string) (bool, error) {
	s, err := userTrust()
	if err != nil {
		return false, err
	}
	tf, err := s.load()
	if err != nil {
		return false, err
	}
	if len(tf.Trusted) == 0 {
		return false, nil
	}
	real, err := canonicalDir(dir)
	if err != nil {
		return false, nil // a directory that does not exist has nothing to load
	}
	return tf.trusting(real) != "", nil
}

// trustDir parses the optional DIR of dsh trust and dsh untrust.
func trustDir(c *clix.Command) (string, int, bool) {
	switch c.Flags.NArg() {
	case 0:
		return ".", 0, true
	case 1:
		return c.Flags.Arg(0), 0, true
	}
	return "", c.UsageError("want at most one DIR"), false
}

func runTrust(_ context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	c := clix.New("dsh trust", trustUsage, stdout, stderr)
	list := c.Flags.Bool("list", false, "print the trusted directories")
	if code, ok := c.Parse(args, 1); !ok {
		return code
	}
	s, err := userTrust()
	if err != nil {
		return c.Fail(err)
	}
	tf, err := s.load()
	if err != nil {
		return c.Fail(err)
	}
	if *list {
		if c.Flags.NArg() > 0 {
			return c.UsageError("--list takes no DIR")
		}
		for _, d := range tf.Trusted {
			fmt.Fprintln(stdout, clix.Visible(d))
		}
		return clix.ExitOK
	}
	arg, code, ok := trustDir(c)
	if !ok {
		return code
	}
	dir, err := canonicalDir(arg)
	if err != nil {
		return c.Fail(err)
	}
	if by := tf.trusting(dir); by != "" {
		fmt.Fprintf(stdout, "%s: already trusted (%s)\n", clix.Visible(dir), clix.Visible(by))
		return clix.ExitOK
	}
	tf.Trusted = append(tf.Trusted, dir)
	if err := s.save(tf); err != nil {
		return c.Fail(err)
	}
	fmt.Fprintf(stdout, "%s: trusted (kept in %s)\n", clix.Visible(dir), clix.Visible(s.path))
	return clix.ExitOK
}

func runUntrust(_ context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	c := clix.New("dsh untrust", untrustUsage, stdout, stderr)
	if code, ok := c.Parse(args, 1); !ok {
		return code
	}
	arg, code, ok := trustDir(c)
	if !ok {
		return code
	}
	s, err := userTrust()
	if err != nil {
		return c.Fail(err)
	}
	tf, err := s.load()
	if err != nil {
		return c.Fail(err)
	}
	dir, err := canonicalDir(arg)
	if err != nil {
		// A directory removed since: its entry can still go.
		if dir, err = filepath.Abs(arg); err != nil {
			return c.Fail(err)
		}
		dir = filepath.Clean(dir)
	}
	i := slices.Index(tf.Trusted, dir)
	if i < 0 {
		if by := tf.trusting(dir); by != "" {
			return c.Fail(fmt.Errorf("%s is trusted through %s: dsh untrust %s", dir, by, by))
		}
		fmt.Fprintf(stdout, "%s: not trusted\n", clix.Visible(dir))
		return clix.ExitOK
	}
	tf.Trusted = slices.Delete(tf.Trusted, i, i+1)
	if err := s.save(tf); err != nil {
		return c.Fail(err)
	}
	fmt.Fprintf(stdout, "%s: no longer trusted\n", clix.Visible(dir))
	return clix.ExitOK
}
