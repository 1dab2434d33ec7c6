package loop

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/session"
)

// The tests of this file pin rules that a mutation pass (docs/testing.md) showed no other
// test to check.

// A new agent's session/created carries the configured session id, or a fresh "ses_" one.
func TestSessionCreatedCarriesTheSessionID(t *testing.T) {
	for _, sid := range []string{"mine", ""} {
		e := newEnv(t)
		e.cfg.SessionID = sid
		e.agent()
		var got dsh.SessionCreated
		for ev := range e.log.Events() {
			if ev.Type != dsh.SessionCreatedType {
				t.Fatalf("first event %s, want session/created", ev.Type)
			}
			if err := json.Unmarshal(ev.Data, &got); err != nil {
				t.Fatal(err)
			}
			break
		}
		switch {
		case sid != "" && got.SessionID != sid:
			t.Errorf("configured %q: session id %q", sid, got.SessionID)
		case sid == "" && (!strings.HasPrefix(got.SessionID, "ses_") || len(got.SessionID) <= len("ses_")):
			t.Errorf("no configured id: session id %q, want a fresh ses_ id", got.SessionID)
		}
	}
}

// A failing observer (here agent/status) is logged at debug level; a healthy one is not.
func TestFailingObserverIsLogged(t *testing.T) {
	for _, fail := range []bool{false, true} {
		e := newEnv(t, text("ok"))
		var logs bytes.Buffer
		e.cfg.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
		e.reg.OnStatus(func(context.Context, *dsh.StatusPayload) {
			if fail {
				panic("observer broke")
			}
		})
		a := e.agent()
		followup(t, a, "u1", "hi")
		wait(t, a)
		if logged := strings.Contains(logs.String(), "loop: observer failed"); logged != fail {
			t.Errorf("fail=%v: logged %v:\n%s", fail, logged, logs.String())
		}
	}
}

// refusingStore refuses to append decision/recorded events when refuse is set.
type refusingStore struct {
	*session.Memory
	refuse bool
}

func (s *refusingStore) Append(ctx context.Context, line []byte) error {
	if s.refuse && bytes.Contains(line, []byte(`"decision/recorded"`)) {
		return errors.New("no room for decisions")
	}
	return s.Memory.Append(ctx, line)
}

// A decision the audit cannot append is logged as an error; the turn goes on.
func TestUnrecordedDecisionIsLogged(t *testing.T) {
	for _, refuse := range []bool{false, true} {
		e := newEnv(t, text("ok"))
		log, err := session.Open(context.Background(), &refusingStore{Memory: session.NewMemory(), refuse: refuse})
		if err != nil {
			t.Fatal(err)
		}
		e.log = log
		e.cfg.Audit = true
		var logs bytes.Buffer
		e.cfg.Logger = slog.New(slog.NewTextHandler(&logs, nil))
		e.reg.Plugin("policy").OnPreStep(func(ctx context.Context, p *dsh.PreStepPayload, next dsh.PreStepNext) (dsh.PreStepDecision, error) {
			return dsh.PreStepEnter{Messages: p.Messages}, nil
		})
		a := e.agent()
		followup(t, a, "u1", "hi")
		wait(t, a)
		if logged := strings.Contains(logs.String(), "loop: cannot record a decision"); logged != refuse {
			t.Errorf("refuse=%v: logged %v:\n%s", refuse, logged, logs.String())
		}
		_ = log.Close()
	}
}
