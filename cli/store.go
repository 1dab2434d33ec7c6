package cli

import (
	"bufio"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/session"
	"github.com/dshkit/dsh/runtime/session/pgstore"
)

// sessionsDir is the session store, where dsh run keeps a session without --log and dsh
// acp its sessions without --sessions: $XDG_STATE_HOME/dsh/sessions, else
// ~/.local/state/dsh/sessions.
func sessionsDir() (string, error) {
	state := os.Getenv("XDG_STATE_HOME")
	if state == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("no session store (%v): pass --log FILE or --no-session-persistence", err)
		}
		state = filepath.Join(home, ".local", "state")
	}
	return filepath.Join(state, "dsh", "sessions"), nil
}

// workspaceDir is the absolute workspace of o, as runOne makes it ("" for a --demo's new
// one).
func (o runOptions) workspaceDir() (string, error) {
	if o.workspace == "" {
		if o.demo {
			return "", nil
		}
		return os.Getwd()
	}
	return filepath.Abs(o.workspace)
}

// useStore picks the session log of o when no --log FILE names it, as claude -p keeps its
// sessions: --resume ID and --continue pick a session of the session store (or of a
// postgres --log), and a new session goes in the store unless --no-session-persistence
// (or --demo) keeps it in memory.
func (o *runOptions) useStore(ctx context.Context) error {
	if pgstore.IsURL(o.logFile) {
		return o.pickPG(ctx)
	}
	if o.logFile != "" || (!o.cont && o.resume == "" && (o.noPersist || o.demo)) {
		return nil
	}
	dir, err := sessionsDir()
	if err != nil {
		return err
	}
	switch {
	case o.resume != "":
		path := filepath.Join(dir, o.resume+".jsonl")
		if _, err := os.Lstat(path); err != nil {
			return fmt.Errorf("--resume %s: no such session in the session store %s", o.resume, dir)
		}
		o.logFile = path
	case o.cont:
		ws, err := o.workspaceDir()
		if err != nil {
			return err
		}
		path, err := latestSession(dir, ws)
		if err != nil {
			return err
		}
		o.logFile = path
	default:
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return fmt.Errorf("the session store: %w (pass --log FILE or --no-session-persistence)", err)
		}
		o.newID = "ses_" + rand.Text()
		o.logFile = filepath.Join(dir, o.newID+".jsonl")
	}
	return nil
}

// latestSession is the log in dir of the session of workspace ws written last (by its
// file's modification time), for --continue.
func latestSession(dir, ws string) (string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	var best string
	var bestTime time.Time
	for _, e := range entries {
		name := e.Name()
		if !e.Type().IsRegular() || !strings.HasSuffix(name, ".jsonl") || strings.Count(name, ".") != 1 {
			continue // transcripts and rollouts beside the logs
		}
		info, err := e.Info()
		if err != nil || !info.ModTime().After(bestTime) {
			continue
		}
		path := filepath.Join(dir, name)
		if workspaceOf(path) == ws {
			best, bestTime = path, info.ModTime()
		}
	}
	if best == "" {
		return "", fmt.Errorf("--continue: no session of %s in the session store %s", ws, dir)
	}
	return best, nil
}

// workspaceOf is the workspace that the session log at path records in its first event
// (session/created), or "".
func workspaceOf(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	if !sc.Scan() {
		return ""
	}
	return createdWorkspace(sc.Bytes())
}

// createdWorkspace is the workspace of a session/created event's line, or "".
func createdWorkspace(line []byte) string {
	var e session.Event
	if e.UnmarshalJSON(line) != nil {
		return ""
	}
	data, err := e.Decode()
	if err != nil {
		return ""
	}
	if c, ok := data.(dsh.SessionCreated); ok && c.Workspace != nil {
		return *c.Workspace
	}
	return ""
}

// pickPG sets the session of a postgres --log for --resume ID (which must exist) and
// --continue (the session of the workspace the database holds that was written last).
func (o *runOptions) pickPG(ctx context.Context) error {
	if o.resume == "" && !o.cont {
		return nil
	}
	db, err := pgstore.Connect(ctx, o.logFile)
	if err != nil {
		return err
	}
	defer db.Close()
	if o.resume != "" {
		ok, err := db.Exists(ctx, o.resume)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("--resume %s: no such session in %s", o.resume, db)
		}
		o.session = o.resume
		return nil
	}
	ws, err := o.workspaceDir()
	if err != nil {
		return err
	}
	infos, err := db.Sessions(ctx)
	if err != nil {
		return err
	}
	var best *pgstore.SessionInfo
	for i, s := range infos {
		if s.Workspace == ws && (best == nil || s.LastWrite.After(best.LastWrite)) {
			best = &infos[i]
		}
	}
	if best == nil {
		return fmt.Errorf("--continue: no session of %s in %s", ws, db)
	}
	o.session = best.ID
	return nil
}

// checkStore checks --resume, --continue and --no-session-persistence against the other
// flags; it returns the usage error, or "".
func (o runOptions) checkStore() string {
	switch {
	case o.resume != "" && o.cont:
		return "--resume ID and --continue: give one"
	case (o.resume != "" || o.cont) && o.logFile != "" && !pgstore.IsURL(o.logFile):
		return "--resume and --continue pick a session of the session store (or of a postgres --log); --log FILE is one session already: drop them to go on with it"
	case (o.resume != "" || o.cont) && o.session != "":
		return "--resume, --continue and --session: give one"
	case (o.resume != "" || o.cont) && o.noPersist:
		return "--no-session-persistence starts a session kept in memory; it cannot resume one"
	case o.noPersist && o.logFile != "":
		return "--no-session-persistence and --log: give one"
	case o.resume != "" && !validSessionID.MatchString(o.resume):
		return fmt.Sprintf("--resume %q: want 1 to 128 letters, digits, _ and -", o.resume)
	}
	return ""
}
