// Package sandbox confines the commands Bash runs, with Codex's three modes: read-only,
// workspace-write (the default) and danger-full-access.
//
// A confined command runs through a helper: the running program re-executed
// ([os.Executable]) with a hidden first argument. The helper starts in new user, PID and
// mount namespaces (and a new network namespace when the network is off) and applies the
// policy to itself; then it starts each command of the session ([Sandbox.Start], once per
// sandbox) or executes the one command it was started for ([Sandbox.Wrap]), so that every
// process a command starts inherits the rules, which it cannot undo:
//
//   - Landlock: everything is readable, only the writable roots are writable; with the
//     network off, TCP bind and connect are denied too, and signals and abstract Unix
//     sockets are scoped to the sandbox (where the kernel's Landlock ABI has them);
//   - read-only mounts, in the helper's mount namespace: every mount but the writable
//     roots (Landlock does not guard a file's mode, times or extended attributes), and
//     the read-only subpaths (.git, .dsh, .claude, .codex) inside them;
//   - PR_SET_NO_NEW_PRIVS, so that a setuid or file-capability binary gains nothing;
//   - a process limit: the sandbox's PID namespace takes at most Policy.MaxProcesses
//     processes (its pid_max, which bounds root too), and RLIMIT_NPROC is set to the same;
//   - with the network off, a network namespace with only a loopback that is down.
//
// Nothing needs root and no other binary is used. The helper runs while the program is
// initialized (package runtime/sandbox/internal/helper, which imports only os, runtime, sync,
// syscall and unsafe, so Go initializes it among the first packages), so any program or
// test binary linking this package can be re-executed as the helper; [Main] says so in a
// program's main, and returns at once in any process but the helper.
//
// What stays readable: every file the user can read, in every mode (as in Codex); the
// sandbox confines writes, the network and processes, not reads. A read-only subpath is
// protected only when it exists as the command starts, and pathname Unix sockets stay
// reachable on a kernel whose Landlock ABI is below 9.
//
// A mode other than danger-full-access never runs a command unconfined: [New] refuses
// with an error that says why (no Landlock, user namespaces refused, another operating
// system) and names danger-full-access. Hooks and MCP servers are not run through it.
package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/dshkit/dsh/internal/procgroup"
	"github.com/dshkit/dsh/runtime/sandbox/internal/helper"
)

// Mode is how much a confined command may do, with Codex's names and meanings.
type Mode string

const (
	// ReadOnly: the command reads the whole filesystem the user can read, writes nowhere
	// (but /dev/null and the like) and has no network unless Policy.Network.
	ReadOnly Mode = "read-only"
	// WorkspaceWrite: the command reads everything, writes only beneath the writable roots
	// (the workspace, a private temporary directory given as TMPDIR, and Policy.AddDirs),
	// never in their .git, .dsh, .claude or .codex, and has no network unless
	// Policy.Network. The default.
	WorkspaceWrite Mode = "workspace-write"
	// DangerFullAccess: no sandbox; the command runs with the user's rights.
	DangerFullAccess Mode = "danger-full-access"
)

// DefaultMode is the mode when none is given.
const DefaultMode = WorkspaceWrite

// Modes lists the modes, most confined first.
func Modes() []Mode { return []Mode{ReadOnly, WorkspaceWrite, DangerFullAccess} }

// ParseMode parses a mode's name; the empty string is DefaultMode.
func ParseMode(s string) (Mode, error) {
	if s == "" {
		return DefaultMode, nil
	}
	for _, m := range Modes() {
		if string(m) == s {
			return m, nil
		}
	}
	return "", fmt.Errorf("unknown sandbox mode %q (want read-only, workspace-write or danger-full-access)", s)
}

// ReadOnlySubpaths are the names that stay read-only inside every writable root, when they
// exist as the command starts.
var ReadOnlySubpaths = []string{".git", ".dsh", ".claude", ".codex"}

// DefaultMaxProcesses is Policy.MaxProcesses' default.
const DefaultMaxProcesses = 512

// minMaxProcesses is the smallest pid_max the kernel accepts (RESERVED_PIDS + 1).
const minMaxProcesses = 301

// Policy is what a confined command may do.
type Policy struct {
	// Mode is the sandbox mode (default DefaultMode).
	Mode Mode
	// Workspace is the directory commands run in; writable under WorkspaceWrite. Required
	// unless Mode is DangerFullAccess.
	Workspace string
	// AddDirs are more writable roots under WorkspaceWrite (dsh's --add-dir); ignored
	// under ReadOnly.
	AddDirs []string
	// Network lets the command reach the network (Codex's network_access); off by default.
	Network bool
	// MaxProcesses bounds the processes one command may have running at once, itself
	// included (default DefaultMaxProcesses; the kernel's least is 301).
	MaxProcesses int
}

// Sandbox is a checked policy, ready to confine commands, with its private temporary
// directory. Its methods are safe for concurrent use; a nil *Sandbox confines nothing.
type Sandbox struct {
	policy   Policy
	tempDir  string
	writable []string
	zygotes  zygotes // the helpers Start runs commands through (Linux)
}

// New checks the policy and that this system can enforce it, and makes the private
// temporary directory (under WorkspaceWrite). Under any mode but DangerFullAccess, an
// error says why the sandbox cannot run and names danger-full-access: it never falls back
// to running commands unconfined. Close removes the temporary directory.
func New(ctx context.Context, p Policy) (*Sandbox, error) {
	if p.Mode == "" {
		p.Mode = DefaultMode
	}
	if _, err := ParseMode(string(p.Mode)); err != nil {
		return nil, err
	}
	s := &Sandbox{policy: p}
	if p.Mode == DangerFullAccess {
		return s, nil
	}
	if p.MaxProcesses == 0 {
		s.policy.MaxProcesses = DefaultMaxProcesses
	} else if p.MaxProcesses < minMaxProcesses {
		return nil, fmt.Errorf("sandbox: MaxProcesses %d is below the kernel's least, %d", p.MaxProcesses, minMaxProcesses)
	}
	if p.Workspace == "" {
		return nil, errors.New("sandbox: Policy.Workspace is required")
	}
	ws, err := resolveDir(p.Workspace)
	if err != nil {
		return nil, fmt.Errorf("sandbox: workspace: %w", err)
	}
	s.policy.Workspace = ws
	if p.Mode == WorkspaceWrite {
		s.writable = append(s.writable, ws)
		s.policy.AddDirs = nil
		for _, d := range p.AddDirs {
			r, err := resolveDir(d)
			if err != nil {
				return nil, fmt.Errorf("sandbox: writable directory: %w", err)
			}
			s.policy.AddDirs = append(s.policy.AddDirs, r)
			s.writable = append(s.writable, r)
		}
	}
	if err := supported(ctx, s); err != nil {
		return nil, refusal(p.Mode, err)
	}
	if p.Mode == WorkspaceWrite {
		tmp, err := os.MkdirTemp("", "dsh-sandbox-tmp-")
		if err != nil {
			return nil, fmt.Errorf("sandbox: temporary directory: %w", err)
		}
		if tmp, err = filepath.EvalSymlinks(tmp); err != nil {
			_ = os.RemoveAll(tmp)
			return nil, fmt.Errorf("sandbox: temporary directory: %w", err)
		}
		s.tempDir = tmp
		s.writable = append(s.writable, tmp)
	}
	if err := probe(ctx, s); err != nil {
		s.Close()
		return nil, refusal(p.Mode, err)
	}
	return s, nil
}

// Check reports whether this system can enforce p, with New's error when it cannot; it
// leaves nothing behind.
func Check(ctx context.Context, p Policy) error {
	s, err := New(ctx, p)
	if err != nil {
		return err
	}
	s.Close()
	return nil
}

// refusal is the one-line error of a mode this system cannot enforce.
func refusal(m Mode, err error) error {
	return fmt.Errorf("sandbox %s cannot run here: %w; to run Bash unconfined, with your rights, choose --sandbox %s", m, err, DangerFullAccess)
}

func resolveDir(d string) (string, error) {
	abs, err := filepath.Abs(d)
	if err != nil {
		return "", err
	}
	r, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", err
	}
	fi, err := os.Stat(r)
	if err != nil {
		return "", err
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("%s is not a directory", d)
	}
	return r, nil
}

// Policy is the checked policy, with its paths absolute and resolved.
func (s *Sandbox) Policy() Policy {
	if s == nil {
		return Policy{Mode: DangerFullAccess}
	}
	p := s.policy
	p.AddDirs = append([]string(nil), p.AddDirs...)
	return p
}

// Mode is the sandbox's mode (DangerFullAccess for a nil *Sandbox).
func (s *Sandbox) Mode() Mode { return s.Policy().Mode }

// TempDir is the private temporary directory given to commands as TMPDIR ("" but under
// WorkspaceWrite).
func (s *Sandbox) TempDir() string {
	if s == nil {
		return ""
	}
	return s.tempDir
}

// WritableRoots are the directories a command may write beneath (none under ReadOnly and
// DangerFullAccess, where nothing is confined).
func (s *Sandbox) WritableRoots() []string {
	if s == nil {
		return nil
	}
	return append([]string(nil), s.writable...)
}

// Wrap makes cmd, not yet started, run confined: it runs through the helper, with TMPDIR
// set to the private temporary directory. Under DangerFullAccess (and for a nil
// *Sandbox) it leaves cmd as it is. It keeps cmd.SysProcAttr's other settings (a process
// group, say), so that ending the group still ends every process of the command. The
// command gets namespaces of its own, made by this process as cmd starts: on Linux, as a
// user other than root, this process must then be dumpable (Start has no such need).
func (s *Sandbox) Wrap(cmd *exec.Cmd) error {
	if s == nil || s.policy.Mode == DangerFullAccess {
		return nil
	}
	if cmd.Err != nil {
		return cmd.Err
	}
	if cmd.Process != nil {
		return errors.New("sandbox: Wrap after Start")
	}
	if s.tempDir != "" {
		cmd.Env = s.env(cmd)
	}
	return wrap(s, cmd)
}

// env is cmd's environment (the process's when cmd.Env is nil), with TMPDIR the private
// temporary directory when there is one.
func (s *Sandbox) env(cmd *exec.Cmd) []string {
	env := cmd.Env
	if env == nil {
		env = os.Environ()
	}
	if s.tempDir == "" {
		return env
	}
	kept := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if !strings.HasPrefix(kv, "TMPDIR=") {
			kept = append(kept, kv)
		}
	}
	return append(kept, "TMPDIR="+s.tempDir)
}

// Process is a command Start started, confined or not.
type Process struct {
	cmd   *exec.Cmd
	group *procgroup.Group // unconfined
	run   running          // confined
	code  int
}

// running is a confined command: the per-OS side of a Process.
type running interface {
	// wait waits for the command's first process to end and its output to be copied,
	// and returns its exit code (-1 when a signal ended it).
	wait() (int, error)
	// kill ends the command's process group (SIGKILL); terminate asks it to end
	// (SIGTERM).
	kill()
	terminate()
	// signal is the signal that ended the command's first process (0: none), once
	// wait has returned.
	signal() syscall.Signal
	// pid is the command's first process's id, in the sandbox's PID namespace.
	pid() int
}

// Start starts cmd, not yet started, in a process group of its own. Confined, it runs
// through the sandbox's helper, which set up the namespaces, the mounts and the Landlock
// rules once for the session (and bind-mounts a read-only subpath that appeared since), so
// that a command costs one fork and exec more than an unconfined one; its TMPDIR is the
// private temporary directory, and it is the first process of a PID namespace of its own,
// so that whatever it leaves running, in its group or not, ends when it does. Under DangerFullAccess, and for a nil *Sandbox, it starts
// cmd as it is (internal/procgroup). Confined, cmd's Stdin, Stdout, Stderr, Dir, Env and
// WaitDelay are used, and nothing else of it.
func (s *Sandbox) Start(cmd *exec.Cmd) (*Process, error) {
	if s == nil || s.policy.Mode == DangerFullAccess {
		g, err := procgroup.Start(cmd)
		if err != nil {
			return nil, err
		}
		return &Process{cmd: cmd, group: g}, nil
	}
	if cmd.Err != nil {
		return nil, cmd.Err
	}
	if cmd.Process != nil {
		return nil, errors.New("sandbox: Start after the command started")
	}
	r, err := start(s, cmd)
	if err != nil {
		return nil, err
	}
	return &Process{cmd: cmd, run: r}, nil
}

// Wait waits for the command to end and its output to be copied, as exec.Cmd.Wait does,
// but a non-zero exit is not an error: ExitCode has it. It returns exec.ErrWaitDelay when
// the output was still open WaitDelay after the command ended (a process it left running
// holds it).
func (p *Process) Wait() error {
	if p.run != nil {
		code, err := p.run.wait()
		p.code = code
		return err
	}
	err := p.cmd.Wait()
	if p.cmd.ProcessState != nil {
		p.code = p.cmd.ProcessState.ExitCode()
	}
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		return nil
	}
	return err
}

// ExitCode is the exit code Wait found: -1 when a signal ended the command.
func (p *Process) ExitCode() int { return p.code }

// Kill ends every process of the command's process group. It may be called any number of
// times, before or after Wait.
func (p *Process) Kill() {
	if p.run != nil {
		p.run.kill()
		return
	}
	p.group.Kill()
}

// Terminate asks every process of the command's process group to end (SIGTERM; on
// Windows it ends them, as Kill does).
func (p *Process) Terminate() {
	if p.run != nil {
		p.run.terminate()
		return
	}
	p.group.Terminate()
}

// Signal is the signal that ended the command's first process, once Wait has returned;
// 0 when it exited (or on Windows).
func (p *Process) Signal() syscall.Signal {
	if p.run != nil {
		return p.run.signal()
	}
	if p.cmd.ProcessState != nil {
		if ws, ok := p.cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return ws.Signal()
		}
	}
	return 0
}

// Pid is the id of the command's first process, which leads its process group (for a
// confined command, in the sandbox's PID namespace).
func (p *Process) Pid() int {
	if p.run != nil {
		return p.run.pid()
	}
	return p.group.Pid()
}

// Close ends the helpers and every process they started, and removes the private
// temporary directory. It may be called more than once.
func (s *Sandbox) Close() {
	if s == nil {
		return
	}
	s.closeZygotes()
	if s.tempDir != "" {
		_ = os.RemoveAll(s.tempDir)
	}
}

// Readable says, in a sentence, what a confined command can read, as Codex tells its
// users: confinement is about writes and the network, not secrecy.
func (s *Sandbox) Readable() string {
	if s.Mode() == DangerFullAccess {
		return "everything the user can read and write"
	}
	return "every file the user can read, including files outside the workspace (such as ~/.ssh); the sandbox confines writes and the network, not reads"
}

// Main runs the helper in a process Wrap started, and never returns then; in any other
// process it returns at once. The helper runs already while the program is initialized
// (package runtime/sandbox/internal/helper, which this package imports, before the
// packages it does not need), so a program or test binary linking this package needs
// nothing more; calling Main first thing in main, or in TestMain, is harmless and says so.
func Main() { helper.Main() }

// spec is the helper's spec for a command starting now: the read-only subpaths are those
// that exist now.
func (s *Sandbox) spec() helper.Spec {
	sp := helper.Spec{Writable: s.writable, Network: s.policy.Network, MaxProcesses: s.policy.MaxProcesses}
	for _, root := range s.writable {
		for _, name := range ReadOnlySubpaths {
			p := filepath.Join(root, name)
			if _, err := os.Stat(p); err == nil {
				sp.Protected = append(sp.Protected, p)
			}
		}
	}
	return sp
}
