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

// probe starts the helper once with the policy and no command, so that whatever the
// system refuses (user namespaces, a mount, the process limit) is found before the first
// command, not by it.
func probe(ctx context.Context, s *Sandbox) error {
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("the running program: %w", err)
	}
	cmd := exec.CommandContext(ctx, exe)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := wrapAs(s, cmd, ""); err != nil {
		return err
	}
	if err := cmd.Run(); err != nil {
		if msg := strings.TrimSpace(stderr.String()); msg != "" {
			return errors.New(strings.TrimPrefix(msg, "dsh sandbox: "))
		}
		if errors.Is(err, unix.EPERM) || errors.Is(err, unix.ENOSPC) || errors.Is(err, unix.EINVAL) || errors.Is(err, unix.EACCES) {
			return fmt.Errorf("the kernel refused new user namespaces (%w): see /proc/sys/user/max_user_namespaces, kernel.unprivileged_userns_clone or AppArmor's apparmor_restrict_unprivileged_userns", err)
		}
		return fmt.Errorf("the sandbox helper failed: %w", err)
	}
	return nil
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
	return nil
}
