package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"

	"github.com/dshkit/dsh/internal/procgroup"
)

// On macOS a confined command runs under a Seatbelt profile (seatbeltProfile) through
// /usr/bin/sandbox-exec, as Codex runs its commands there: the writable roots but their
// read-only subpaths, the network only when the policy allows it. The process limit is
// not enforced. This is cross-built and vetted, not run, in dsh's CI.

// supported checks that sandbox-exec is there.
func supported(context.Context, *Sandbox) error {
	if _, err := os.Stat(seatbeltExec); err != nil {
		return fmt.Errorf("macOS's Seatbelt runner %s: %w", seatbeltExec, err)
	}
	return nil
}

// probe runs /usr/bin/true under the profile, so that a profile the system refuses is
// found before the first command.
func probe(ctx context.Context, s *Sandbox) error {
	cmd := exec.CommandContext(ctx, "/usr/bin/true")
	if err := wrap(s, cmd); err != nil {
		return err
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		if msg := strings.TrimSpace(stderr.String()); msg != "" {
			return fmt.Errorf("sandbox-exec: %s", msg)
		}
		return fmt.Errorf("sandbox-exec: %w", err)
	}
	return nil
}

// wrap makes cmd run through sandbox-exec under s's profile.
func wrap(s *Sandbox, cmd *exec.Cmd) error {
	args := s.seatbeltArgs(cmd.Path, cmd.Args)
	cmd.Path, cmd.Args = args[0], args
	return nil
}

// start starts cmd wrapped, in a process group of its own.
func start(s *Sandbox, cmd *exec.Cmd) (running, error) {
	cmd.Env = s.env(cmd)
	if err := wrap(s, cmd); err != nil {
		return nil, err
	}
	g, err := procgroup.Start(cmd)
	if err != nil {
		return nil, err
	}
	return &execRun{cmd: cmd, group: g}, nil
}

// execRun is a command started as a child of this process.
type execRun struct {
	cmd   *exec.Cmd
	group *procgroup.Group
}

func (r *execRun) wait() (int, error) {
	err := r.cmd.Wait()
	code := -1
	if r.cmd.ProcessState != nil {
		code = r.cmd.ProcessState.ExitCode()
	}
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		err = nil
	}
	return code, err
}

func (r *execRun) kill() { r.group.Kill() }

func (r *execRun) terminate() { r.group.Terminate() }

func (r *execRun) signal() syscall.Signal {
	if r.cmd.ProcessState != nil {
		if ws, ok := r.cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return ws.Signal()
		}
	}
	return 0
}

func (r *execRun) pid() int { return r.group.Pid() }

// zygotes is empty: macOS has no session helper.
type zygotes struct{}

func (s *Sandbox) closeZygotes() {}
