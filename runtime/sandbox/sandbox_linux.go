package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/dshkit/dsh/runtime/sandbox/internal/helper"
)

// supported is the quick check before the probe: Landlock and its ABI.
func supported(context.Context, *Sandbox) error {
	if _, msg := helper.LandlockABI(); msg != "" {
		return errors.New(msg)
	}
	return nil
}

// probe starts the helper that will run the commands (the zygote), which reports ready
// once the policy is applied, so that whatever the system refuses (user namespaces, a
// mount, the process limit) is found before the first command, not by it.
func probe(_ context.Context, s *Sandbox) error {
	_, err := s.zygoteFor(s.spec())
	return err
}

func wrap(s *Sandbox, cmd *exec.Cmd) error { return wrapAs(s, cmd, cmd.Path) }

// wrapAs makes cmd run the helper, which executes path with cmd's arguments ("" only
// applies the policy and exits).
func wrapAs(s *Sandbox, cmd *exec.Cmd, path string) error {
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("sandbox: the running program: %w", err)
	}
	cmd.Path, cmd.Args = exe, append([]string{exe, helper.Arg}, helper.Args(s.spec(), path, cmd.Args)...)
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	a := cmd.SysProcAttr
	a.Cloneflags |= unix.CLONE_NEWUSER | unix.CLONE_NEWPID | unix.CLONE_NEWNS
	if !s.policy.Network {
		a.Cloneflags |= unix.CLONE_NEWNET
	}
	// The same ids inside as outside, so that files keep their owner and a command sees
	// its user as it is.
	uid, gid := os.Getuid(), os.Getgid()
	a.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
	a.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
	a.GidMappingsEnableSetgroups = false
	// A user other than root loses every capability of the new namespace when the helper
	// executes (its uid there is not 0), so it could not make its mounts: CAP_SYS_ADMIN
	// stays, as an ambient capability, for the helper only; it drops it from the thread
	// that executes the commands.
	a.AmbientCaps = []uintptr{unix.CAP_SYS_ADMIN}
	return nil
}
