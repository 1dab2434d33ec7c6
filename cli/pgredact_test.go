package cli

import (
	"fmt"
	"net"
	"strings"
	"testing"
)

// TestPostgresPasswordNeverPrinted: a database URL's password (in its user info or its
// query) is never printed: not in the text transcript, the json result or the stream-json
// events of dsh run, not in its errors, and not in the session log itself.
func TestPostgresPasswordNeverPrinted(t *testing.T) {
	const userPW, queryPW = "Pl4nted-UserInfo-Pw", "Pl4nted-Query-Pw"
	// The socket URL the server trusts: the planted passwords are carried, not checked.
	base := postgres(t).Schema(t)
	withPW := strings.Replace(base, "postgres://dsh@", "postgres://dsh:"+userPW+"@", 1) + "&password=" + queryPW
	if withPW == base+"&password="+queryPW {
		t.Fatalf("the URL %q has no user info to plant a password in", base)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := fmt.Sprintf("postgres://dsh:%s@127.0.0.1:%d/postgres?sslmode=disable&connect_timeout=2&password=%s", userPW, l.Addr().(*net.TCPAddr).Port, queryPW)
	l.Close()
	check := func(what, out string) {
		t.Helper()
		for _, pw := range []string{userPW, queryPW} {
			if strings.Contains(out, pw) {
				t.Errorf("%s prints the password %s:\n%s", what, pw, out)
			}
		}
	}
	ws := t.TempDir()
	for i, format := range []string{"text", "json", "stream-json"} {
		session := fmt.Sprintf("pw%d", i)
		code, stdout, stderr := runDSH("run", "--demo", "--workspace", ws, "--log", withPW, "--session", session, "--output-format", format)
		if code != 0 {
			t.Fatalf("%s: exit %d\n%s", format, code, stderr)
		}
		if format != "text" && !strings.Contains(stdout, `"log":"postgres://dsh:`) {
			t.Errorf("%s: the result does not name the log: %s", format, stdout)
		}
		check(format+" stdout", stdout)
		check(format+" stderr", stderr)
		// A new session on the same database: its id is printed with the database.
		code, stdout, stderr = runDSH("run", "--demo", "--workspace", ws, "--log", withPW, "--output-format", format)
		if code != 0 || !strings.Contains(stderr, "resume it with --session") {
			t.Fatalf("%s, new session: exit %d\n%s", format, code, stderr)
		}
		check(format+" stdout (new session)", stdout)
		check(format+" stderr (new session)", stderr)
		// The error path: the server is not there.
		code, stdout, stderr = runDSH("run", "--demo", "--workspace", ws, "--log", down, "--session", session, "--output-format", format)
		if code != 1 {
			t.Errorf("%s, server down: exit %d, want 1\n%s", format, code, stderr)
		}
		check(format+" stdout (server down)", stdout)
		check(format+" stderr (server down)", stderr)
		// The log itself, raw, and dsh log's errors.
		code, stdout, stderr = runDSH("log", "--raw", "--session", session, withPW)
		if code != 0 || !strings.Contains(stdout, "session/created") {
			t.Fatalf("dsh log --raw: exit %d\n%s%s", code, stdout, stderr)
		}
		check("the session log", stdout+stderr)
	}
	code, stdout, stderr := runDSH("log", "--session", "pw0", down)
	if code != 1 {
		t.Errorf("dsh log, server down: exit %d\n%s", code, stderr)
	}
	check("dsh log (server down)", stdout+stderr)
	code, stdout, stderr = runDSH("acp", "--demo", "--sessions", down)
	if code != 1 {
		t.Errorf("dsh acp, server down: exit %d\n%s", code, stderr)
	}
	check("dsh acp (server down)", stdout+stderr)
}
