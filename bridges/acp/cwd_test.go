package acp_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshkit/dsh/bridges/acp"
)

// A client may not choose the root directory, a system tree, a file, a missing or an
// unreadable directory as a session's cwd: session/new and session/load answer
// -32602 naming the path.
func TestSessionCWDRule(t *testing.T) {
	dir := t.TempDir()
	c := start(t, dir, acp.PermissionsAllow, scripted())
	c.call("initialize", map[string]any{"protocolVersion": 1})
	link := filepath.Join(dir, "etc-link")
	if err := os.Symlink("/etc", link); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	refused := map[string]string{
		"/":                           "root directory",
		"/etc":                        "system tree /etc",
		"/etc/":                       "system tree /etc",
		"/proc/self":                  "system tree /proc",
		"/usr/lib":                    "system tree /usr",
		"/lib64":                      "in the system tree /", // /usr/lib64 where /lib64 is a link
		"/var/lib":                    "system tree /var",
		"/dev":                        "system tree /dev",
		link:                          "it is /etc, in the system tree /etc",
		file:                          "not a directory",
		filepath.Join(dir, "missing"): "no such file or directory",
		"relative/dir":                "absolute",
	}
	if os.Geteuid() != 0 { // root can list any directory
		locked := filepath.Join(dir, "locked")
		if err := os.Mkdir(locked, 0o000); err != nil {
			t.Fatal(err)
		}
		refused[locked] = "not readable"
	}
	for path, want := range refused {
		if _, err := os.Lstat(path); err != nil && filepath.IsAbs(path) && !strings.Contains(path, "missing") {
			continue // a system directory this machine does not have
		}
		for _, method := range []string{"session/new", "session/load"} {
			f := c.call(method, map[string]any{"sessionId": "sess_x", "cwd": path, "mcpServers": []any{}})
			if errCode(f) != acp.CodeInvalidParams {
				t.Errorf("%s with cwd %q: %v, want %d", method, path, f, acp.CodeInvalidParams)
				continue
			}
			msg := f["error"].(map[string]any)["message"].(string)
			if !strings.Contains(msg, `cwd "`+path+`"`) || !strings.Contains(msg, want) {
				t.Errorf("%s with cwd %q: message %q, want it to name the path and say %q", method, path, msg, want)
			}
		}
	}
	// A project directory, and a symbolic link to one, are accepted.
	proj := filepath.Join(dir, "proj")
	if err := os.Mkdir(proj, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(proj, filepath.Join(dir, "proj-link")); err != nil {
		t.Fatal(err)
	}
	for _, ok := range []string{dir, proj, filepath.Join(dir, "proj-link")} {
		if err := acp.CheckCWD(ok); err != nil {
			t.Errorf("CheckCWD(%q) = %v", ok, err)
		}
		c.newSession(ok)
	}
	if err := acp.CheckCWD("/etc"); !errors.Is(err, acp.ErrCWD) {
		t.Errorf("CheckCWD(/etc) = %v, want ErrCWD", err)
	}
}
