package builtin

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/dshkit/dsh/runtime/sandbox"
	"github.com/dshkit/dsh/runtime/tools"
)

// CodeExecSession is the failure of a write_stdin Codex refuses: an unknown (or finished)
// session, or a session whose command has no stdin (run without tty). Its message is
// Codex's own ("write_stdin failed: Unknown process id N").
const CodeExecSession = "EXEC_SESSION"

// CodeEscalation is the failure of an exec_command that asks for unsandboxed execution
// (sandbox_permissions "require_escalated") when no approval was asked and given: Codex's
// refusal under approval policy never (codexEscalationRefusal).
const CodeEscalation = "ESCALATION"

// codexEscalationRefusal is what Codex 0.169.0 answers an escalation under approval policy
// never, which codex exec always runs under.
const codexEscalationRefusal = "approval policy is Never; reject command — you cannot ask for escalated permissions if the approval policy is Never"

// Codex's unified exec bounds (0.169.0, its tools' descriptions): exec_command waits
// 10 s by default, within 250 ms to 30 s; a write_stdin that writes waits 250 ms by
// default, up to 30 s; an empty one (a poll) waits 5 s to 300 s.
const (
	codexExecYieldDefault  = 10000
	codexYieldMin          = 250
	codexYieldMax          = 30000
	codexWriteYieldDefault = 250
	codexPollYieldMin      = 5000
	codexPollYieldMax      = 300000
	// codexMaxSessions caps the commands left running at once.
	codexMaxSessions = 64
)

// execInput is exec_command's input (Codex's; justification and prefix_rule ask Codex's
// approval flow and do not change how dsh runs it; sandbox_permissions
// "require_escalated" is refused unless the call was approved).
type execInput struct {
	Cmd                string `json:"cmd"`
	SandboxPermissions string `json:"sandbox_permissions"`
	Workdir            string `json:"workdir"`
	Shell              string `json:"shell"`
	Login              *bool  `json:"login"`
	TTY                bool   `json:"tty"`
	YieldTimeMS        *int64 `json:"yield_time_ms"`
	MaxTokens          *int64 `json:"max_output_tokens"`
}

// writeStdinInput is write_stdin's input.
type writeStdinInput struct {
	SessionID   int64  `json:"session_id"`
	Chars       string `json:"chars"`
	YieldTimeMS *int64 `json:"yield_time_ms"`
	MaxTokens   *int64 `json:"max_output_tokens"`
}

// execResult is the value of exec_command and write_stdin: one chunk of a command's output
// (stdout and stderr merged, in order), and either its exit code or the session it still
// runs in. Stdout and ExitCode have Bash's names, so that what reads a shell tool's value
// (the Codex bridge's tool_response, dsh log) reads these too. Command and CallID name the
// exec_command call a write_stdin continues (Codex reports the command's end to the hooks
// as that call's).
type execResult struct {
	Stdout    string  `json:"stdout"`
	ExitCode  *int    `json:"exitCode,omitempty"`
	SessionID int64   `json:"sessionId,omitempty"`
	WallTime  float64 `json:"wallTime"`
	// Tokens is the chunk's token count before truncation (a token per 4 bytes, rounded
	// up); Truncated says Stdout is Codex's truncation of the chunk.
	Tokens    int    `json:"originalTokenCount"`
	Truncated bool   `json:"outputTruncated,omitempty"`
	Command   string `json:"command,omitempty"`
	CallID    string `json:"callId,omitempty"`
}

// execSessions are the commands exec_command left running, by session id; the toolset's
// exec_command and write_stdin share one.
type execSessions struct {
	mu sync.Mutex
	m  map[int64]*execProc
}

func newExecSessions() *execSessions { return &execSessions{m: map[int64]*execProc{}} }

// killAll kills every command left running, with its process group, and forgets it.
func (s *execSessions) killAll() {
	s.mu.Lock()
	procs := s.m
	s.m = map[int64]*execProc{}
	s.mu.Unlock()
	for _, p := range procs {
		p.proc.Kill()
	}
}

// execProc is one running command: its merged output so far, its stdin (tty only) and
// its end.
type execProc struct {
	proc    *sandbox.Process
	stdin   io.WriteCloser
	command string
	callID  string
	mu      sync.Mutex
	out     headTail
	done    chan struct{}
}

func (p *execProc) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.Write(b)
}

// take returns the output since the last take.
func (p *execProc) take() headTail {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := p.out
	p.out = headTail{max: out.max}
	return out
}

// yield waits until the command ends or d passes (or ctx ends: then the command is left
// running), and returns the output so far, truncated to maxTokens as Codex truncates it.
func (p *execProc) yield(ctx context.Context, d time.Duration, maxTokens *int64) (execResult, bool) {
	start := time.Now()
	timer := time.NewTimer(d)
	defer timer.Stop()
	exited := false
	select {
	case <-p.done:
		exited = true
	case <-timer.C:
	case <-ctx.Done():
	}
	r := execResult{WallTime: float64(time.Since(start).Microseconds()) / 1e6}
	r.Stdout, r.Tokens, r.Truncated = p.take().truncate(maxTokens)
	if exited {
		code := p.proc.ExitCode()
		r.ExitCode = &code
	}
	return r, exited
}

// codexOutputBytes is Codex's output budget for a model outside its catalog when the call
// sets no max_output_tokens: 10000 bytes (measured, codex/exec-truncate).
const codexOutputBytes = 10000

// headTail keeps the first and the last max bytes of a command's output, and counts its
// bytes and lines: all that Codex's truncation (the head and the tail of a budget) reads.
type headTail struct {
	max         int
	head, tail  []byte
	total       int
	newlines    int
	endsNewline bool
}

func (h *headTail) Write(p []byte) (int, error) {
	h.total += len(p)
	h.newlines += bytes.Count(p, []byte("\n"))
	if len(p) > 0 {
		h.endsNewline = p[len(p)-1] == '\n'
	}
	rest := p
	if room := h.max - len(h.head); room > 0 {
		n := min(room, len(rest))
		h.head = append(h.head, rest[:n]...)
		rest = rest[n:]
	}
	if len(rest) > 0 {
		h.tail = append(h.tail, rest...)
		if len(h.tail) > h.max {
			h.tail = append(h.tail[:0], h.tail[len(h.tail)-h.max:]...)
		}
	}
	return len(p), nil
}

// truncate is the chunk as Codex shows it: whole when it fits the budget (maxTokens
// tokens of 4 bytes, else codexOutputBytes), else "Warning: truncated output (original
// token count: N)", "Total output lines: L", a blank line, then the budget's first half,
// "…N tokens truncated…" (or "…N chars truncated…" under the byte budget) and its last
// half (measured, codex/exec-truncate). tokens is the chunk's token count.
func (h headTail) truncate(maxTokens *int64) (out string, tokens int, truncated bool) {
	tokens = (h.total + 3) / 4
	budget := codexOutputBytes
	if maxTokens != nil && *maxTokens >= 0 {
		budget = int(min(*maxTokens, int64(h.max/2))) * 4
	}
	budget = min(budget, 2*h.max)
	dropped := h.total - len(h.head) - len(h.tail)
	if h.total <= budget && dropped == 0 {
		return text(append(slices.Clip(h.head), h.tail...)), tokens, false
	}
	half := budget / 2
	var head, tail []byte
	if dropped == 0 {
		all := append(slices.Clip(h.head), h.tail...)
		head, tail = all[:half], all[len(all)-half:]
	} else {
		head, tail = h.head[:min(half, len(h.head))], h.tail[len(h.tail)-min(half, len(h.tail)):]
	}
	// A character the cut split goes whole (at most UTFMax-1 bytes at either end).
	for i := 0; i < utf8.UTFMax-1 && len(head) > 0; i++ {
		if r, size := utf8.DecodeLastRune(head); r != utf8.RuneError || size != 1 {
			break
		}
		head = head[:len(head)-1]
	}
	for i := 0; i < utf8.UTFMax-1 && len(tail) > 0 && !utf8.RuneStart(tail[0]); i++ {
		tail = tail[1:]
	}
	marker := fmt.Sprintf("…%d chars truncated…", h.total-budget)
	if maxTokens != nil {
		marker = fmt.Sprintf("…%d tokens truncated…", tokens-budget/4)
	}
	lines := h.newlines
	if h.total > 0 && !h.endsNewline {
		lines++
	}
	return fmt.Sprintf("Warning: truncated output (original token count: %d)\nTotal output lines: %d\n\n%s%s%s",
		tokens, lines, text(head), marker, text(tail)), tokens, true
}

func clampYield(ms *int64, def, lo, hi int64) time.Duration {
	v := def
	if ms != nil {
		v = *ms
	}
	return time.Duration(max(lo, min(hi, v))) * time.Millisecond
}

// codexExec is Codex's exec_command: cmd run by a shell (a login shell when login is true) in
// workdir (under the workspace when relative), confined by Options.Sandbox as Bash is;
// after yield_time_ms a command still running is left in a session that write_stdin
// continues. Without tty its stdin is closed; with tty it is a pipe write_stdin writes
// to (a pipe, not a terminal: the command sees no tty, and nothing is echoed).
func codexExec(o Options) tools.Definition {
	s := o.execSessions
	return tools.Definition{
		Name:            "exec_command",
		Description:     "Runs a command, returning output or a session ID for ongoing interaction.",
		InputSchema:     json.RawMessage(`{"type":"object","properties":{"cmd":{"type":"string"}},"required":["cmd"]}`),
		Output:          &tools.Output{Render: renderText(renderExec), PresentationMeta: bashMeta},
		FinalizeContent: plainFailure,
		Run: func(ctx context.Context, rc *tools.RunContext) (any, error) {
			var in execInput
			if err := rc.BindArguments(&in); err != nil {
				return nil, tools.NewError(CodeBadInput, err.Error())
			}
			if in.SandboxPermissions == "require_escalated" && !rc.Approved() {
				// codex exec runs under approval policy never whatever config.toml says, and
				// refuses an escalation no one approved (measured on 0.169.0:
				// codex/escalate-never); dsh's approval is the asked call's.
				return nil, tools.NewError(CodeEscalation, codexEscalationRefusal)
			}
			return s.start(ctx, o, in, rc.Exec().CallID)
		},
	}
}

func (s *execSessions) start(ctx context.Context, o Options, in execInput, callID string) (execResult, error) {
	if in.Cmd == "" {
		return execResult{}, tools.NewError(CodeBadInput, "exec_command: cmd is empty")
	}
	dir := o.Workspace
	if in.Workdir != "" {
		dir = in.Workdir
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(o.Workspace, dir)
		}
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			return execResult{}, tools.NewError(CodeBadInput, fmt.Sprintf("exec_command: workdir %s is not a directory", dir))
		}
	}
	env := o.Env
	if env == nil {
		env = os.Environ()
	}
	shell := in.Shell
	if shell == "" {
		shell = passwdShell()
	}
	if shell == "" {
		shell = "bash"
	}
	if _, err := exec.LookPath(shell); err != nil {
		shell = "/bin/sh"
	}
	// Codex runs a command in the environment of the user's login shell (a snapshot it
	// takes once); dsh runs it with the session's environment, and as a login shell only
	// when the call asks for one (login true), which costs the profile's start-up each time.
	flag := "-c"
	if in.Login != nil && *in.Login {
		flag = "-lc"
	}
	cmd := exec.Command(shell, flag, in.Cmd)
	cmd.Dir, cmd.Env = dir, env
	p := &execProc{command: in.Cmd, callID: callID, out: headTail{max: max(o.MaxOutput, codexOutputBytes)}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p, p
	cmd.WaitDelay = 500 * time.Millisecond
	if in.TTY {
		w, err := cmd.StdinPipe()
		if err != nil {
			return execResult{}, err
		}
		p.stdin = w
	}
	s.mu.Lock()
	full := len(s.m) >= codexMaxSessions
	s.mu.Unlock()
	if full {
		return execResult{}, tools.NewError(CodeExecSession, fmt.Sprintf("exec_command failed: %d commands are still running; end some with write_stdin first", codexMaxSessions))
	}
	proc, err := o.Sandbox.Start(cmd)
	if err != nil {
		return execResult{}, err
	}
	p.proc = proc
	go func() {
		// A command left running is killed, its group with it, once it has run as long as
		// Bash may (Options.MaxBashTimeout).
		t := time.AfterFunc(o.MaxBashTimeout, proc.Kill)
		err := proc.Wait()
		t.Stop()
		proc.Kill()
		if err != nil && !errors.Is(err, exec.ErrWaitDelay) {
			fmt.Fprintf(p, "\n%v\n", err)
		}
		close(p.done)
	}()
	r, exited := p.yield(ctx, clampYield(in.YieldTimeMS, codexExecYieldDefault, codexYieldMin, codexYieldMax), in.MaxTokens)
	if exited {
		return r, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for {
		id := rand.Int64N(99000) + 1000 // Codex's ids: 1000 to 99999
		if s.m[id] == nil {
			s.m[id] = p
			r.SessionID = id
			return r, nil
		}
	}
}

// codexWriteStdin is Codex's write_stdin: chars written to a running session's stdin
// (none: a poll), then its output until it ends or yield_time_ms passes. An unknown or
// finished session, or chars for a command run without tty, is a failure in Codex's words.
func codexWriteStdin(o Options) tools.Definition {
	s := o.execSessions
	return tools.Definition{
		Name:        "write_stdin",
		Description: "Writes characters to an existing exec_command session and returns recent output.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"session_id":{"type":"number"}},"required":["session_id"]}`),
		Output:      &tools.Output{Render: renderText(renderExec), PresentationMeta: bashMeta},
		Run: runWith(func(ctx context.Context, in writeStdinInput) (execResult, error) {
			return s.write(ctx, in)
		}),
		FinalizeContent: plainFailure,
	}
}

func (s *execSessions) write(ctx context.Context, in writeStdinInput) (execResult, error) {
	s.mu.Lock()
	p := s.m[in.SessionID]
	s.mu.Unlock()
	if p == nil {
		return execResult{}, tools.NewError(CodeExecSession, fmt.Sprintf("write_stdin failed: Unknown process id %d", in.SessionID))
	}
	yield := clampYield(in.YieldTimeMS, codexWriteYieldDefault, codexYieldMin, codexYieldMax)
	if in.Chars == "" {
		yield = clampYield(in.YieldTimeMS, codexPollYieldMin, codexPollYieldMin, codexPollYieldMax)
	} else {
		if p.stdin == nil {
			return execResult{}, tools.NewError(CodeExecSession, "write_stdin failed: stdin is closed for this session; rerun exec_command with tty=true to keep stdin open")
		}
		if _, err := io.WriteString(p.stdin, in.Chars); err != nil {
			return execResult{}, tools.NewError(CodeExecSession, "write_stdin failed: failed to write to stdin")
		}
	}
	r, exited := p.yield(ctx, yield, in.MaxTokens)
	if exited {
		s.mu.Lock()
		delete(s.m, in.SessionID)
		s.mu.Unlock()
		r.Command, r.CallID = p.command, p.callID
	} else {
		r.SessionID = in.SessionID
	}
	return r, nil
}

// renderExec renders a chunk as Codex does: "Chunk ID" (derived from the value, so that a
// rendering is reproducible; Codex's is random), "Wall time", "Process exited with code
// N" or "Process running with session ID N", "Original token count" (a token per 4 bytes,
// rounded up) and the output after "Output:".
func renderExec(r execResult) string {
	status := fmt.Sprintf("Process running with session ID %d", r.SessionID)
	if r.ExitCode != nil {
		status = fmt.Sprintf("Process exited with code %d", *r.ExitCode)
	}
	h := fnv.New32a()
	fmt.Fprintf(h, "%s\x00%g\x00%s", status, r.WallTime, r.Stdout)
	return fmt.Sprintf("Chunk ID: %06x\nWall time: %.4f seconds\n%s\nOriginal token count: %d\nOutput:\n%s",
		h.Sum32()&0xffffff, r.WallTime, status, r.Tokens, r.Stdout)
}

// passwdShell is the user's login shell as /etc/passwd gives it, "" when it gives none:
// Codex's "user's default shell", which it takes from there and not from $SHELL (measured
// on 0.169.0: with SHELL=/bin/sh its commands ran under /bin/bash, sandbox/workspace-write).
func passwdShell() string {
	data, err := os.ReadFile("/etc/passwd")
	if err != nil {
		return ""
	}
	uid := strconv.Itoa(os.Getuid())
	for line := range strings.SplitSeq(string(data), "\n") {
		f := strings.Split(line, ":")
		if len(f) >= 7 && f[2] == uid {
			return f[6]
		}
	}
	return ""
}
