package cli

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/dshkit/dsh/runtime/session/pgstore"
)

// validSessionID is what a session id in PostgreSQL may hold: what dsh acp accepts as a
// session id, so that either command resumes the other's sessions.
var validSessionID = regexp.MustCompile(`^[A-Za-z0-9_-]{1,128}$`)

// checkPGLog checks --session, --takeover and --force against --log; it returns the
// usage error, or "".
func (o runOptions) checkPGLog() string {
	switch {
	case (o.session != "" || o.takeover != "" || o.force) && !pgstore.IsURL(o.logFile):
		return "--session, --takeover and --force name a session of a postgres:// --log"
	case o.takeover != "" || o.force:
		if msg := checkTakeover(o.takeover, o.force); msg != "" {
			return msg
		}
		if o.session == "" {
			return "--takeover and --force need --session (the session to take over)"
		}
		return ""
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

// checkTakeover checks --takeover OWNER against --force; it returns the usage error, or
// "".
func checkTakeover(owner string, force bool) string {
	switch {
	case owner != "" && force:
		return "--takeover OWNER and --force: give one (--force takes the session over whoever holds it)"
	case strings.HasPrefix(owner, "-"):
		return fmt.Sprintf("--takeover %q: want the writer id of the session's holder, as the refusal names it (or --force)", owner)
	}
	return ""
}
