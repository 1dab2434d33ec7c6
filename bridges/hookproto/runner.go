package hookproto

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"slices"
	"time"

	"github.com/dshkit/dsh/runtime/sandbox"
)

// Defaults for the zero fields of a [Command].
const (
	// DefaultOutputCap is the default cap on captured stdout and on captured stderr.
	DefaultOutputCap = 1 << 20
	// DefaultKillGrace is how long a timed-out or cancelled hook's process group has
	// between SIGTERM and SIGKILL.
	DefaultKillGrace = 500 * time.Millisecond
	// DefaultPipeGrace is how long the runner keeps reading stdout and stderr after the
	// hook's main process has exited, before it abandons the pipes (and kills the group).
	DefaultPipeGrace = 200 * time.Millisecond
)

// Command is one hook run: what to execute and under which limits. Only Command is
// required, or HTTP for an http hook.
type Command struct {
	// Shell is the argv prefix a shell-form command runs under, e.g. {"sh", "-c"} for
	// Claude Code or {"/bin/zsh", "-c"} for Codex (see [Rules.ShellArgv]); empty means
	// {"/bin/sh", "-c"}.
	Shell []string
	// Command is the command line (shell form), or the program to execute (exec form).
	Command string
	// Args, when non-nil (even empty), selects the exec form: Command runs with these
	// arguments directly, without a shell.
	Args []string
	// Stdin is written to the hook's standard input, which is then closed. A hook that
	// does not read it is not an error.
	Stdin []byte
	// Dir is the working directory; empty means the harness's.
	Dir string
	// Sandbox, when set, runs the hook confined by it (runtime/sandbox), as Bash is; nil
	// runs it with the user's rights.
	Sandbox *sandbox.Sandbox
	// BaseEnv is the environment the hook starts from, KEY=value pairs; nil means the
	// harness's (os.Environ()). dsh run --env-deny passes the harness's without the
	// denied variables.
	BaseEnv []string
	// Env holds KEY=value pairs added to (and overriding) the base environment.
	Env []string
	// Timeout bounds the run; 0 means no timeout (only ctx bounds it).
	Timeout time.Duration
	// MaxStdout and MaxStderr cap the bytes kept of each stream; 0 means
	// DefaultOutputCap. Output past the cap is read and discarded (the hook never blocks
	// on a full pipe); [Decode] never lets that discard a block.
	MaxStdout, MaxStderr int
	// KillGrace is the delay between SIGTERM and SIGKILL; 0 means DefaultKillGrace.
	KillGrace time.Duration
	// PipeGrace is how long to wait for pipe EOF after the main process exits; 0 means
	// DefaultPipeGrace.
	PipeGrace time.Duration
	// HTTP, when set, makes the run an http hook's request: Stdin is posted to HTTP.URL
	// and the answer read as stdout (MaxStdout, Timeout), and no process starts (Shell,
	// Command, Args, Dir, Sandbox, the environments and the graces are not used).
	HTTP *HTTPRequest
	// Invoke, when set, makes the run an in-process handler's call (an mcp_tool or prompt
	// hook): its answer is the stdout of an exit 0, its error the run's Err, and no
	// process starts.
	Invoke func(ctx context.Context) ([]byte, error)
}

// Result is how a run ended. ExitCode is set only when the process exited on its own;
// otherwise SpawnErr, TimedOut, Cancelled, Signal or Err says why not.
type Result struct {
	// ExitCode is the process's exit status; nil when it has none (spawn failure,
	// timeout, cancellation, death by signal).
	ExitCode *int
	// Signal is the signal that killed the process, when one did and the run was not
	// timed out or cancelled.
	Signal os.Signal
	// Stdout and Stderr are the captured output, each capped.
	Stdout, Stderr []byte
	// StdoutOverCap and StderrOverCap report output beyond the cap (discarded).
	StdoutOverCap, StderrOverCap bool
	// StdoutLost and StderrLost report that the discarded output held more than white
	// space (space, tab, newline, carriage return), so the kept text is incomplete. Output
	// over the cap that is only trailing white space loses nothing: a JSON decision
	// followed by a megabyte of spaces still decodes.
	StdoutLost, StderrLost bool
	// Duration is the wall time of the run, spawn to return.
	Duration time.Duration
	// TimedOut reports that Command.Timeout expired and the process group was killed.
	TimedOut bool
	// Cancelled reports that ctx ended first and the process group was killed (or, if
	// ctx had ended before the run, that nothing was started).
	Cancelled bool
	// SpawnErr is set when the process could not be started (missing shell or program,
	// bad working directory, …). A missing script under a shell is exit 127 instead.
	SpawnErr error
	// Orphaned reports that the main process exited but something it started still held
	// stdout or stderr open after PipeGrace; output written after that is lost.
	Orphaned bool
	// Err is any other I/O failure, such as failing to write stdin for a reason other
	// than the hook not reading it; for an http hook, an *HTTPError (a status other than
	// 2xx, a refused connection, a body that is not JSON, a URL not allowed, and, beside
	// TimedOut or Cancelled, the abandoned request).
	Err error
	// HTTPStatus is an http hook's answer's status code; 0 when none came (or the hook is
	// a command).
	HTTPStatus int
}

// Run executes one hook command and returns how it ended; it never panics and reports
// every failure in the Result (dsh bridge decision 4).
//
// The hook runs in its own process group with Stdin on its standard input (written from
// a goroutine, then closed; a hook that never reads it does not block the runner). When
// the timeout expires or ctx ends, the whole group gets SIGTERM, then SIGKILL after
// KillGrace. After the main process exits, Run reads the pipes for at most PipeGrace more,
// so a background grandchild holding stdout cannot stall it. Before returning, Run sends
// SIGKILL to the group, so no process of the hook's group outlives the call (a process
// that moved to another group or session escapes, as it would from any shell).
//
// With c.HTTP set, Run makes the http hook's request instead (see [HTTPRequest]): a 2xx
// answer whose body is empty or a JSON object is exit 0 with the body as stdout.
func Run(ctx context.Context, c Command) (res Result) {
	if c.HTTP != nil {
		return runHTTP(ctx, c)
	}
	if c.Invoke != nil {
		return runInvoke(ctx, c)
	}
	start := time.Now()
	defer func() { res.Duration = time.Since(start) }()
	if ctx.Err() != nil {
		res.Cancelled = true
		return res
	}
	var argv []string
	switch {
	case c.Args != nil:
		argv = append([]string{c.Command}, c.Args...)
	case len(c.Shell) > 0:
		argv = append(slices.Clone(c.Shell), c.Command)
	default:
		argv = []string{"/bin/sh", "-c", c.Command}
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = c.Dir
	base := c.BaseEnv
	if base == nil {
		base = os.Environ()
	}
	cmd.Env = append(slices.Clip(base), c.Env...)
	if c.Stdin != nil {
		cmd.Stdin = bytes.NewReader(c.Stdin)
	}
	stdout := &capBuffer{max: orDefault(c.MaxStdout, DefaultOutputCap)}
	stderr := &capBuffer{max: orDefault(c.MaxStderr, DefaultOutputCap)}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.WaitDelay = orDefault(c.PipeGrace, DefaultPipeGrace)

	// Confined by c.Sandbox when it is set (dsh run --sandbox-hooks), else as it is; in a
	// process group of its own either way.
	proc, err := c.Sandbox.Start(cmd)
	if err != nil {
		res.SpawnErr = err
		return res
	}
	defer proc.Kill() // leftovers of the group

	done := make(chan error, 1)
	go func() { done <- proc.Wait() }()
	var timeout <-chan time.Time
	if c.Timeout > 0 {
		t := time.NewTimer(c.Timeout)
		defer t.Stop()
		timeout = t.C
	}
	select {
	case err = <-done:
	case <-timeout:
		res.TimedOut = true
		err = killGroup(proc, orDefault(c.KillGrace, DefaultKillGrace), done)
	case <-ctx.Done():
		res.Cancelled = true
		err = killGroup(proc, orDefault(c.KillGrace, DefaultKillGrace), done)
	}

	res.Stdout, res.StdoutOverCap, res.StdoutLost = stdout.buf.Bytes(), stdout.over, stdout.lost
	res.Stderr, res.StderrOverCap, res.StderrLost = stderr.buf.Bytes(), stderr.over, stderr.lost
	switch {
	case errors.Is(err, exec.ErrWaitDelay):
		res.Orphaned = true
	case err != nil:
		res.Err = err
		return res
	}
	if res.TimedOut || res.Cancelled {
		return res
	}
	if sig := proc.Signal(); sig != 0 {
		res.Signal = sig
	} else {
		code := proc.ExitCode()
		res.ExitCode = &code
	}
	return res
}

// killGroup asks the process group to end (SIGTERM), kills it after grace if the main
// process has not exited, and returns the Wait error.
func killGroup(group *sandbox.Process, grace time.Duration, done <-chan error) error {
	group.Terminate()
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case err := <-done:
		return err
	case <-t.C:
		group.Kill()
		return <-done
	}
}

// capBuffer keeps the first max bytes written to it and discards (but accepts) the rest,
// so the writer never blocks on a full pipe and memory stays bounded. over reports that
// anything was discarded, lost that something other than white space was.
type capBuffer struct {
	buf  bytes.Buffer
	max  int
	over bool
	lost bool
}

func (b *capBuffer) Write(p []byte) (int, error) {
	room := max(b.max-b.buf.Len(), 0)
	if len(p) <= room {
		b.buf.Write(p)
		return len(p), nil
	}
	b.over = true
	b.buf.Write(p[:room])
	if !b.lost {
		for _, c := range p[room:] {
			if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
				b.lost = true
				break
			}
		}
	}
	return len(p), nil
}

func orDefault[T int | time.Duration](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

// runInvoke runs an in-process handler (Command.Invoke) under the command's timeout.
func runInvoke(ctx context.Context, c Command) (res Result) {
	start := time.Now()
	defer func() { res.Duration = time.Since(start) }()
	if ctx.Err() != nil {
		res.Cancelled = true
		return res
	}
	rctx := ctx
	if c.Timeout > 0 {
		var cancel context.CancelFunc
		rctx, cancel = context.WithTimeout(ctx, c.Timeout)
		defer cancel()
	}
	out, err := c.Invoke(rctx)
	var block *BlockingError
	switch {
	case ctx.Err() != nil:
		res.Cancelled = true
		return res
	case rctx.Err() != nil:
		res.TimedOut = true
		return res
	case errors.As(err, &block):
		out = block.Stdout
	case err != nil:
		res.Err = err
		return res
	}
	capped := &capBuffer{max: orDefault(c.MaxStdout, DefaultOutputCap)}
	_, _ = capped.Write(out)
	res.Stdout, res.StdoutOverCap, res.StdoutLost = capped.buf.Bytes(), capped.over, capped.lost
	res.ExitCode = intPtr(0)
	if block != nil {
		res.ExitCode, res.Stderr = intPtr(2), []byte(block.Reason)
	}
	return res
}

func intPtr(n int) *int { return &n }
