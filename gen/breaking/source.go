package breaking

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os/exec"
	"path"
	"strconv"
	"strings"
	"testing/fstest"
)

// ErrNoRef is returned by GitFS when the ref names no commit.
var ErrNoRef = errors.New("no such git ref")

// ErrNoSpec is returned by GitFS when the commit holds no file under the spec directory.
var ErrNoSpec = errors.New("no spec there")

// GitPrefix returns the path of dir relative to the root of the git work tree holding it
// ("spec" for the repository's spec directory), slash-separated.
func GitPrefix(ctx context.Context, dir string) (string, error) {
	out, err := git(ctx, dir, nil, "rev-parse", "--show-prefix")
	if err != nil {
		return "", err
	}
	return strings.TrimSuffix(strings.TrimSpace(string(out)), "/"), nil
}

// GitFS returns the files under directory dir (slash-separated, relative to the root of
// the repository) of the commit ref names, read from the repository holding repoDir with
// git ls-tree and git cat-file: nothing is checked out or written. Paths in the returned
// file system are relative to dir.
func GitFS(ctx context.Context, repoDir, ref, dir string) (fs.FS, error) {
	out, err := git(ctx, repoDir, nil, "rev-parse", "--verify", "--quiet", "--end-of-options", ref+"^{commit}")
	if err != nil {
		return nil, fmt.Errorf("%q: %w", ref, ErrNoRef)
	}
	commit := strings.TrimSpace(string(out))
	list, err := git(ctx, repoDir, nil, "ls-tree", "--full-tree", "-r", "-z", commit, "--", dir+"/")
	if err != nil {
		return nil, err
	}
	type entry struct{ name, oid string }
	var entries []entry
	for _, rec := range bytes.Split(list, []byte{0}) {
		meta, name, ok := strings.Cut(string(rec), "\t")
		if !ok {
			continue
		}
		f := strings.Fields(meta) // mode type oid
		if len(f) != 3 || f[1] != "blob" || f[0] == "120000" {
			continue
		}
		entries = append(entries, entry{strings.TrimPrefix(name, dir+"/"), f[2]})
	}
	if len(entries) == 0 {
		return nil, fmt.Errorf("%s:%s/: %w", ref, dir, ErrNoSpec)
	}
	var in bytes.Buffer
	for _, e := range entries {
		in.WriteString(e.oid + "\n")
	}
	blobs, err := git(ctx, repoDir, &in, "cat-file", "--batch")
	if err != nil {
		return nil, err
	}
	fsys := fstest.MapFS{}
	r := bufio.NewReader(bytes.NewReader(blobs))
	for _, e := range entries {
		head, err := r.ReadString('\n')
		if err != nil {
			return nil, fmt.Errorf("git cat-file: %w", err)
		}
		f := strings.Fields(head) // oid type size
		if len(f) != 3 {
			return nil, fmt.Errorf("git cat-file: unexpected %q", head)
		}
		n, err := strconv.Atoi(f[2])
		if err != nil {
			return nil, fmt.Errorf("git cat-file: unexpected %q", head)
		}
		data := make([]byte, n+1) // the content and its newline
		if _, err := io.ReadFull(r, data); err != nil {
			return nil, fmt.Errorf("git cat-file: %w", err)
		}
		fsys[path.Clean(e.name)] = &fstest.MapFile{Data: data[:n], Mode: 0o644}
	}
	return fsys, nil
}

func git(ctx context.Context, dir string, stdin io.Reader, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
	cmd.Stdin = stdin
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		return nil, fmt.Errorf("git %s: %s", args[0], msg)
	}
	return out, nil
}
