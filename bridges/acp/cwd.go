package acp

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// systemTrees are the directories, and the trees beneath them, that no session may take
// as its cwd: the system's configuration, its programs and libraries, its state, and the
// kernel's and devices' pseudo-filesystems. The file tools of a session are confined to
// its cwd, and a session in one of these trees would have them read and write the system
// rather than a project. "/lib*" is every top-level directory whose name starts with lib
// (lib, lib32, lib64, libx32).
var systemTrees = []string{
	"/etc", "/proc", "/sys", "/dev", "/boot", "/run", "/usr", "/bin", "/sbin", "/lib*", "/var",
}

// ErrCWD is the reason a directory is refused as a session's cwd ([CheckCWD]).
var ErrCWD = errors.New("not a directory a project can be opened in")

// CheckCWD reports whether dir may be a session's cwd: it must be an absolute path, name
// an existing directory the user can list, and, once its symbolic links are resolved, be
// neither the root directory nor in one of the system trees (/etc, /proc, /sys, /dev,
// /boot, /run, /usr, /bin, /sbin, /lib*, /var). The error wraps [ErrCWD] and names dir.
func CheckCWD(dir string) error {
	bad := func(why string, args ...any) error {
		return fmt.Errorf("cwd %q: %w: %s", dir, ErrCWD, fmt.Sprintf(why, args...))
	}
	if dir == "" || !filepath.IsAbs(dir) {
		return bad("it must be an absolute path")
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return bad("%v", unwrapPath(err))
	}
	fi, err := os.Stat(real)
	if err != nil {
		return bad("%v", unwrapPath(err))
	}
	if !fi.IsDir() {
		return bad("it is not a directory")
	}
	if real == string(filepath.Separator) || filepath.Dir(real) == real {
		return bad("the root directory is not a project")
	}
	if tree, ok := inSystemTree(real); ok {
		if real != dir {
			return bad("it is %s, in the system tree %s", real, tree)
		}
		return bad("it is in the system tree %s", tree)
	}
	f, err := os.Open(real)
	if err != nil {
		return bad("not readable: %v", unwrapPath(err))
	}
	defer f.Close()
	if _, err := f.Readdirnames(1); err != nil && !errors.Is(err, io.EOF) {
		return bad("not readable: %v", unwrapPath(err))
	}
	return nil
}

// inSystemTree returns the system tree (a systemTrees entry) that holds dir, an absolute
// clean path.
func inSystemTree(dir string) (string, bool) {
	first, _, _ := strings.Cut(strings.TrimPrefix(filepath.ToSlash(dir), "/"), "/")
	for _, tree := range systemTrees {
		name := strings.TrimPrefix(tree, "/")
		if prefix, ok := strings.CutSuffix(name, "*"); ok {
			if strings.HasPrefix(first, prefix) {
				return "/" + first, true
			}
			continue
		}
		if first == name {
			return tree, true
		}
	}
	return "", false
}

// unwrapPath drops the *fs.PathError wrapping, whose path the message names already.
func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
