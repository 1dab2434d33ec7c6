package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/dshkit/dsh/bridges/dialect"
	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/internal/clix"
	"github.com/dshkit/dsh/runner"
	"github.com/dshkit/dsh/runtime/session"
)

// This file holds what makes dsh run scriptable as claude -p is: the prompt from stdin,
// the answer and the result on stdout (--output-format), --max-turns, the signals and the
// exit status.

// The output formats of dsh run.
const (
	formatText       = "text"
	formatJSON       = "json"
	formatStreamJSON = "stream-json"
	formatEvents     = "events"
)

// streamFormatClaude is the StreamJSON of a dialect whose stream-json is claude -p's.
const streamFormatClaude = "claude-code"

// Exit statuses of dsh run beyond clix's: a signal ends it with 128 + the signal's number,
// as a shell reports a process the signal killed.
const (
	exitSIGHUP  = 128 + int(syscall.SIGHUP)
	exitSIGINT  = 128 + int(syscall.SIGINT)
	exitSIGPIPE = 128 + int(syscall.SIGPIPE)
	exitSIGTERM = 128 + int(syscall.SIGTERM)
)

// headlessFlags defines dsh run's scripting flags on fs.
func (o *runOptions) headlessFlags(fs *flag.FlagSet) {
	o.outputFormat = formatText
	fs.Var(clix.OneOf(&o.outputFormat, false, formatText, formatJSON, formatStreamJSON, formatEvents), "output-format", "text, json, stream-json or events")
	fs.BoolVar(&o.verbose, "verbose", false, "the transcript in full: every line, hooks' whole output, the warnings and notices of every level")
	fs.IntVar(&o.maxTurns, "max-turns", 0, "end the turn after N model steps (0: no limit)")
}

// flagsFirst moves the flags that follow the prompt's words before them, as claude -p
// takes its flags anywhere: "dsh run hello --max-turns 2" is "dsh run --max-turns 2 --
// hello". After "--" every word is the prompt's, and after the first word of the prompt a
// word that starts with "-" but names none of fs's flags is prompt text too ("-" alone is
// the prompt from stdin). The result ends the flags with "--".
func flagsFirst(fs *flag.FlagSet, args []string) []string {
	var flags, words []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			words = append(words, args[i+1:]...)
			break
		}
		name, isFlag := strings.CutPrefix(a, "-")
		if !isFlag || name == "" {
			words = append(words, a)
			continue
		}
		name = strings.TrimPrefix(name, "-")
		name, _, hasValue := strings.Cut(name, "=")
		f := fs.Lookup(name)
		if len(words) > 0 && f == nil && !(clix.IsHelp(a) && a != "help") {
			words = append(words, a) // prompt text
			continue
		}
		flags = append(flags, a)
		if f == nil || hasValue {
			continue
		}
		if b, ok := f.Value.(interface{ IsBoolFlag() bool }); !(ok && b.IsBoolFlag()) && i+1 < len(args) {
			i++
			flags = append(flags, args[i]) // its value
		}
	}
	return append(append(flags, "--"), words...)
}

// The engines' limits on a piped stdin beside a prompt argument (Claude Code 2.1.328):
// the wait for its first byte, and its size.
const (
	stdinWait     = 3 * time.Second
	maxStdinBytes = 10 << 20
)

// promptArgs turns dsh run's prompt words into the prompt: "-" alone, or no word with
// stdin not a terminal, reads the prompt from stdin (a nil stdin: none). Words with a pipe
// on stdin join what it holds as the dialect's engine joins them (join, measured: echo
// data | claude -p "summarize"): as Claude Code does, dsh waits stdinWait for the pipe's
// first byte and goes on without it then, saying so through warn; more than
// maxStdinBytes is an error.
func promptArgs(words []string, stdin io.Reader, join dialect.StdinPrompt, warn func(string)) (string, error) {
	prompt := strings.TrimSpace(strings.Join(words, " "))
	switch {
	case stdin == nil:
		return prompt, nil
	case len(words) == 1 && words[0] == "-", len(words) == 0 && !isTerminal(stdin):
		b, err := io.ReadAll(stdin)
		if err != nil {
			return "", fmt.Errorf("reading the prompt from stdin: %w", err)
		}
		return strings.TrimSpace(string(b)), nil
	case isTerminal(stdin):
		return prompt, nil
	}
	piped, err := readPiped(stdin, warn)
	if err != nil {
		return "", err
	}
	return join.Join(prompt, piped), nil
}

// readPiped reads the pipe on stdin beside a prompt argument: "" when no byte came within
// stdinWait (warn says so), an error past maxStdinBytes.
func readPiped(stdin io.Reader, warn func(string)) (string, error) {
	type result struct {
		data []byte
		err  error
	}
	first := make(chan struct{})
	done := make(chan result, 1)
	go func() {
		var buf []byte
		p := make([]byte, 32<<10)
		started := false
		start := func() {
			if !started {
				started = true
				close(first)
			}
		}
		for {
			n, err := stdin.Read(p)
			if n > 0 {
				start()
				if buf = append(buf, p[:n]...); len(buf) > maxStdinBytes {
					done <- result{err: fmt.Errorf("the piped stdin exceeds %d MiB: pass large content as a file path in the prompt instead", maxStdinBytes>>20)}
					return
				}
			}
			if err != nil {
				start()
				if errors.Is(err, io.EOF) {
					err = nil
				}
				done <- result{buf, err}
				return
			}
		}
	}()
	select {
	case <-first:
	case <-time.After(stdinWait):
		warn(fmt.Sprintf("no stdin data received in %v, going on without it (redirect stdin from /dev/null to skip the wait)", stdinWait))
		return "", nil
	}
	r := <-done
	if r.err != nil {
		return "", fmt.Errorf("reading the piped stdin: %w", r.err)
	}
	return string(r.data), nil
}

// isTerminal says whether r is a terminal (a character device).
func isTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// signalCause is the cancellation cause of a run a signal ended.
type signalCause struct{ sig os.Signal }

func (s signalCause) Error() string { return "interrupted by " + signalName(s.sig) }

func signalName(sig os.Signal) string {
	switch sig {
	case syscall.SIGHUP:
		return "SIGHUP"
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGPIPE:
		return "SIGPIPE (stdout or stderr was closed)"
	}
	return "SIGINT"
}

// exitCode is the exit status for sig: 128 + its number.
func (s signalCause) exitCode() int {
	switch s.sig {
	case syscall.SIGHUP:
		return exitSIGHUP
	case syscall.SIGTERM:
		return exitSIGTERM
	case syscall.SIGPIPE:
		return exitSIGPIPE
	}
	return exitSIGINT
}

// onSignals returns a context that SIGINT, SIGTERM or SIGHUP cancels with a signalCause:
// the run then cancels its turn, reaps its hooks' and Bash's process groups and its MCP
// servers, closes the turn in the log and exits 128 + the signal's number. After the
// first signal the default disposition comes back, so a second one ends dsh at once.
//
// A closed stdout or stderr (dsh run | head) ends the run the same way, as SIGPIPE with
// exit status 141, instead of killing dsh in the middle of a write, which would leave its
// temporary directories behind: SIGPIPE is caught for the run's lifetime, so such a write
// fails with EPIPE, and the writers guarded by the returned guard cancel the run on it.
// stop releases the signal handlers.
func onSignals(ctx context.Context) (_ context.Context, guard func(io.Writer) io.Writer, stop func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	// Caught and dropped: a write to a closed pipe then fails with EPIPE, whichever file
	// it goes to (a hook's stdin too, which fails that write as it did before).
	pipe := make(chan os.Signal, 1)
	signal.Notify(pipe, syscall.SIGPIPE)
	done := make(chan struct{})
	var once sync.Once
	go func() {
		for {
			select {
			case sig := <-ch:
				signal.Reset(syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
				cancel(signalCause{sig})
			case <-pipe:
				continue
			case <-done:
			}
			return
		}
	}()
	guard = func(w io.Writer) io.Writer {
		return &pipeGuard{w: w, broken: func() { cancel(signalCause{syscall.SIGPIPE}) }}
	}
	return ctx, guard, func() {
		once.Do(func() {
			signal.Stop(ch)
			signal.Stop(pipe)
			close(done)
			cancel(nil)
		})
	}
}

// pipeGuard is a writer whose write failing with EPIPE (its reader is gone) calls broken.
type pipeGuard struct {
	w      io.Writer
	broken func()
}

func (g *pipeGuard) Write(p []byte) (int, error) {
	n, err := g.w.Write(p)
	if errors.Is(err, syscall.EPIPE) {
		g.broken()
	}
	return n, err
}

// runResult is what one dsh run did: --output-format json prints it, and its exit status
// follows from it.
type runResult struct {
	// Type is "result" (so that a stream-json consumer tells it from the log's events).
	Type string `json:"type"`
	// Subtype is success, error_max_turns, error_during_execution or interrupted.
	Subtype string `json:"subtype"`
	// IsError says the run did not complete (exit status not 0).
	IsError bool `json:"is_error"`
	// Result is the text of the model's last message.
	Result string `json:"result"`
	// StopReason is how the last turn ended: completed, blocked, aborted, error,
	// max-tokens or interrupted.
	StopReason string `json:"stop_reason"`
	// Error says what went wrong, when IsError.
	Error string `json:"error,omitempty"`
	// SessionID is the session's id (its session/created record).
	SessionID string `json:"session_id"`
	// Log is the session log's path (--log), or null.
	Log *string `json:"log"`
	// NumTurns counts the model steps of the run.
	NumTurns int `json:"num_turns"`
	// DurationMS is the run's wall time.
	DurationMS int64 `json:"duration_ms"`
	// Usage sums the tokens the provider reported.
	Usage resultUsage `json:"usage"`

	code int // the exit status
}

// resultUsage is a runResult's token accounting.
type resultUsage struct {
	InputTokens  int `json:"input_tokens"`
	OutputTokens int `json:"output_tokens"`
}

// outcome follows the log to report how the run went.
type outcome struct {
	mu       sync.Mutex
	ended    dsh.TurnEndReason
	answer   string
	steps    int
	usage    resultUsage
	maxTurns bool
	logErr   error // why the log refused the turn's end (checkLog)
}

// checkLog asks check why the log could not be written when no turn end reached it.
func (c *outcome) checkLog(ctx context.Context, check func(context.Context) error) {
	c.mu.Lock()
	ended := c.ended != nil
	c.mu.Unlock()
	if ended || check == nil {
		return
	}
	err := check(context.WithoutCancel(ctx))
	c.mu.Lock()
	defer c.mu.Unlock()
	c.logErr = err
}

func (c *outcome) observe(e session.Event) {
	data, err := e.Decode()
	if err != nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	//dshvet:partial the result follows the turn, its steps and its answer; the other events do not change it
	switch d := data.(type) {
	case dsh.TurnStart:
		c.answer = ""
	case dsh.StepStart:
		c.steps++
	case dsh.TurnEnd:
		c.ended = d.Reason
	case dsh.AssistantMessageLogged:
		if t := textOf(d.Message.Content); t != "" {
			c.answer = t
		}
		if d.Usage != nil {
			c.usage.InputTokens += d.Usage.InputTokens
			c.usage.OutputTokens += d.Usage.OutputTokens
		}
	}
}

// setMaxTurns records whether --max-turns ended the turn.
func (c *outcome) setMaxTurns(hit bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.maxTurns = hit
}

// result is the run's result: its exit status is 0 when the turn completed or policy
// (a hook or plugin) blocked or halted it, 1 when it ended in error or reached
// --max-turns, 128 + n when signal n ended it.
func (c *outcome) result(ctx context.Context, sessionID, logPath string, start time.Time) runResult {
	c.mu.Lock()
	defer c.mu.Unlock()
	r := runResult{Type: "result", Subtype: "success", Result: c.answer, SessionID: sessionID,
		NumTurns: c.steps, DurationMS: time.Since(start).Milliseconds(), Usage: c.usage}
	if logPath != "" {
		r.Log = &logPath
	}
	if c.ended != nil {
		r.StopReason = string(c.ended.Kind())
	}
	fail := func(subtype, msg string, code int) runResult {
		r.Subtype, r.IsError, r.Error, r.code = subtype, true, msg, code
		return r
	}
	var sc signalCause
	if errors.As(context.Cause(ctx), &sc) {
		return fail("interrupted", sc.Error(), sc.exitCode())
	}
	if c.ended == nil && c.logErr != nil {
		return fail("error_during_execution", "the session log refused the turn: "+oneLine(c.logErr.Error()), clix.ExitFailure)
	}
	if c.maxTurns {
		return fail("error_max_turns", fmt.Sprintf("reached --max-turns after %d steps", c.steps), clix.ExitFailure)
	}
	//dshvet:partial a completed, blocked or max-tokens turn is the result as it is, after the switch
	switch d := c.ended.(type) {
	case nil:
		return fail("error_during_execution", "no turn ran", clix.ExitFailure)
	case dsh.TurnEndError:
		msg := d.Error.Message
		if d.Error.Code != "" {
			msg = d.Error.Code + ": " + msg
		}
		return fail("error_during_execution", "the model failed: "+oneLine(msg), clix.ExitFailure)
	case dsh.TurnEndAborted:
		if _, byPolicy := d.Reason.(dsh.CancelHook); !byPolicy {
			return fail("error_during_execution", "the turn was aborted: "+reason(d), clix.ExitFailure)
		}
	case dsh.TurnEndInterrupted:
		return fail("error_during_execution", "the turn was interrupted", clix.ExitFailure)
	}
	return r
}

// writeResult prints r as the output format asks: the answer (text) or the result object
// (json, stream-json) on stdout, and the error on stderr.
func writeResult(format string, r runResult, stdout, stderr io.Writer) {
	if r.IsError {
		fmt.Fprintf(stderr, "dsh run: %s\n", clix.Visible(r.Error))
	}
	switch format {
	case formatJSON, formatStreamJSON, formatEvents:
		b, _ := json.Marshal(r)
		fmt.Fprintf(stdout, "%s\n", b)
	default:
		if r.Result != "" && !r.IsError {
			// For a person, as the transcript: its control characters written out
			// (the json formats carry the exact text).
			fmt.Fprintln(stdout, clix.Visible(strings.TrimRight(r.Result, "\n")))
		}
	}
}

// streamOutput subscribes the stream formats to the session's log and to its children's:
// stream-json in claude -p's lines under a dialect that has them, else (and for events)
// every session event as a JSON line.
func (o runOptions) streamOutput(stdout io.Writer, s *runner.Session, log *session.Log, sessionID, workspace string) {
	switch {
	case o.outputFormat == formatStreamJSON && o.desc().StreamJSON == streamFormatClaude:
		// claude -p's stream: its init line first, then the messages.
		cs := newClaudeStream(stdout, sessionID, s.LLM.Model)
		var names []string
		for _, d := range s.Tools.Visible("main") {
			names = append(names, d.Name)
		}
		cs.start(workspace, names, s.PermissionMode())
		log.Subscribe(cs.observe)
		s.ObserveChildren(cs.child)
	case o.outputFormat == formatStreamJSON, o.outputFormat == formatEvents:
		stream := streamEvents(stdout)
		log.Subscribe(func(e session.Event) { stream(e, nil) })
		s.ObserveChildren(func(agentID string, lineage dsh.Lineage, child *session.Log) func() {
			mark := &subagentMark{AgentID: agentID, ParentCallID: lineage.ParentCallID}
			return child.Subscribe(func(e session.Event) { stream(e, mark) })
		})
	}
}

// subagentMark names the subagent an event line of --output-format events comes from.
type subagentMark struct {
	AgentID      string `json:"agentId"`
	ParentCallID string `json:"parentCallId"`
}

// streamEvents writes every session event to w as one JSON line (the log's own record),
// for --output-format events. An event of a subagent's log (child set) begins with
// "subagent": {agentId, parentCallId}.
func streamEvents(w io.Writer) func(e session.Event, child *subagentMark) {
	var mu sync.Mutex
	return func(e session.Event, child *subagentMark) {
		b, err := e.MarshalJSON()
		if err != nil {
			return
		}
		if child != nil {
			mark, _ := json.Marshal(child)
			b = append(append([]byte(`{"subagent":`), mark...), append([]byte(","), b[1:]...)...)
		}
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(w, "%s\n", b)
	}
}
