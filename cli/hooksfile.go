package cli

import (
	"errors"
	"fmt"
	"github.com/dshkit/dsh/runtime/session/pgstore"
	"os"
	"path/filepath"
	"strings"

	"github.com/dshkit/dsh/bridges/hookproto"
)

// checkNamedHooks checks a hooks file named on the command line (dsh run and dsh acp
// --hooks, dsh hooks run --config) before anything runs. Such a file fails closed
// (docs/decisions.md, "A hooks file named on the command line loads whole or not at
// all"): if it cannot be read or parsed, names an event the dialect's bridge does not
// run, or holds a group or handler the bridge would skip, the command fails with one line
// naming the file and the first problem, and nothing runs without the guard. Settings
// discovered on their own (--setting-sources, the project's files under --trust) and
// plugins still skip a bad entry with a diagnostic, as the engines do.
func checkNamedHooks(dialect, path string) error {
	if path == "" {
		return nil
	}
	desc := dialectNamed(dialect)
	table := desc.Table
	var events, noMatcher []string
	for _, e := range table.Events {
		events = append(events, e.Name)
		if e.Matcher == "" {
			noMatcher = append(noMatcher, e.Name)
		}
	}
	_, diags := hookproto.LoadFile(path, hookproto.LoadOptions{
		Dialect: hookproto.Dialect(table.Dialect), Source: path, Events: events, NoMatcherEvents: noMatcher,
		Rules: desc.Rules, DefaultTimeout: desc.DefaultTimeout(),
	})
	var bad []hookproto.Diagnostic
	for _, d := range diags {
		if d.Skipped != "" {
			bad = append(bad, d)
		}
	}
	if len(bad) == 0 {
		return nil
	}
	first := bad[0]
	first.Skipped = ""
	msg := oneLine(first.Error())
	if errors.Is(first.Err, hookproto.ErrUnsupportedEvent) {
		msg += fmt.Sprintf(" (the %s bridge runs %s)", table.Dialect, strings.Join(events, ", "))
	}
	if len(bad) > 1 {
		msg += fmt.Sprintf(" (and %d more problems)", len(bad)-1)
	}
	return fmt.Errorf("%s; not run", msg)
}

// projectHookFiles returns the project-level hook files of the dialect that exist under
// the project directory: the project-scope settings files of its descriptor (Claude
// Code's .claude/settings.json and .claude/settings.local.json, Codex's .codex/hooks.json).
func projectHookFiles(dialect, projectDir string) []string {
	var out []string
	for _, rel := range dialectNamed(dialect).ProjectFiles() {
		if p := filepath.Join(projectDir, rel); hookproto.FileExists(p) {
			out = append(out, p)
		}
	}
	return out
}

// transcriptPath is where the transcript the hooks read at transcript_path goes
// (Claude Code's JSONL transcript, or a Codex rollout): --transcript when given; else
// next to the session log (FILE.transcript.jsonl, FILE.rollout.jsonl), so that a run
// continuing the session goes on writing it; else, for a session without a log, in a
// private per-session directory (0700, the file 0600) that remove deletes when the
// session ends; so too for a log in PostgreSQL, which has no file to sit beside (a run
// resuming such a session starts a new transcript). Nothing goes to a shared directory.
func transcriptPath(o runOptions, sessionID string) (path string, remove func(), err error) {
	kind := o.desc().TranscriptSuffix
	switch {
	case o.transcript != "":
		path = o.transcript
	case o.logFile != "" && !pgstore.IsURL(o.logFile):
		path = strings.TrimSuffix(o.logFile, filepath.Ext(o.logFile)) + kind
	default:
		dir, err := os.MkdirTemp("", "dsh-session-")
		if err != nil {
			return "", nil, err
		}
		abs := filepath.Join(dir, sessionID+kind)
		return abs, func() { _ = os.RemoveAll(dir) }, nil
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", nil, fmt.Errorf("--transcript: %w", err)
	}
	return abs, func() {}, nil
}
