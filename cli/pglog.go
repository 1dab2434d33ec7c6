package cli

import (
	"fmt"
	"regexp"

	"github.com/dshkit/dsh/runtime/session/pgstore"
)

// validSessionID is what a session id in PostgreSQL may hold: what dsh acp accepts as a
// session id, so that either command resumes the other's sessions.
var validSessionID = regexp.MustCompile(`^[A-Za-z0-9_-]{1,128}$`)

// checkPGLog checks --session and --takeover against --log; it returns the usage error,
// or "".
func (o runOptions) checkPGLog() string {
	switch {
	case (o.session != "" || o.takeover) && !pgstore.IsURL(o.logFile):
		return "--session and --takeover name a session of a postgres:// --log"
	case o.takeover && o.session == "":
		return "--takeover needs --session (the session to take over)"
	case o.session != "" && !validSessionID.MatchString(o.session):
		return fmt.Sprintf("--session %q: want 1 to 128 letters, digits, _ and -", o.session)
	}
	return ""
}

// logName names the session log of o in messages (a URL without its password).
func logName(o runOptions) string {
	if pgstore.IsURL(o.logFile) {
		return fmt.Sprintf("%s session %s", pgstore.Redact(o.logFile), o.session)
	}
	return o.logFile
}
