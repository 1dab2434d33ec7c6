package runner

import (
	"crypto/rand"
	"errors"
	"fmt"
	"strings"

	"github.com/dshkit/dsh/bridges/hookproto"
	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/session"
)

// SessionID is the id of the session in log: the one its session/created records when
// resumed, else a new one (which loop.New records).
func SessionID(log *session.Log, resume bool) (string, error) {
	if !resume {
		return "ses_" + rand.Text(), nil
	}
	for e, err := range log.Events() {
		if err != nil {
			return "", err
		}
		data, err := e.Decode()
		if err != nil {
			return "", fmt.Errorf("event %d: %w", e.Seq, err)
		}
		if c, ok := data.(dsh.SessionCreated); ok {
			return c.SessionID, nil
		}
	}
	return "", errors.New("no session/created event: not a session log")
}

// HookSessionID is the hooks' session_id for the session id sid: a UUID, as the engines
// give, derived from sid ([hookproto.UUIDFor]), so every run of a session gives the same;
// sid itself when it is a UUID already.
func HookSessionID(sid string) string {
	if isUUID(sid) {
		return sid
	}
	return hookproto.UUIDFor("dsh-session:" + sid)
}

// isUUID says whether s is a UUID in its textual form (8-4-4-4-12 hex digits).
func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i, c := range s {
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !strings.ContainsRune("0123456789abcdefABCDEF", c) {
				return false
			}
		}
	}
	return true
}
