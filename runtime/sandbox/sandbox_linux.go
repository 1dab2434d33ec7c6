package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// minLandlockABI is the least Landlock ABI the sandbox runs on: ABI 3 is the first that
// controls truncation, without which a command could empty any file it can read.
const minLandlockABI = 3

// landlockABI is the kernel's Landlock ABI version, or an error saying why there is none.
func landlockABI() (int, error) {
	v, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	switch {
	case errno == unix.ENOSYS:
		return 0, errors.New("this kernel has no Landlock (it needs Linux 5.13 or later built with CONFIG_SECURITY_LANDLOCK)")
	case errno == unix.EOPNOTSUPP:
		return 0, errors.New("Landlock is not enabled on this kernel (add landlock to the lsm= boot parameter)")
	case errno != 0:
		return 0, fmt.Errorf("Landlock: %w", errno)
	}
	return int(v), nil
}

// supported is the quick check before the probe: Landlock and its ABI.
func supported(context.Context, *Sandbox) error {
	abi, err := landlockABI()
	if err != nil {
		return err
	}
	if abi < minLandlockABI {
		return fmt.Errorf("this kernel's Landlock ABI is %d; the sandbox needs %d (Linux 6.2) or later", abi, minLandlockABI)
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
	sp, err := json.Marshal(s.spec())
	if err != nil {
		return err
	}
	args := []string{exe, helperArg, string(sp), path}
	if path != "" {
		args = append(args, cmd.Args...)
	}
	cmd.Path, cmd.Args = exe, args
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

// runHelper is the helper: args are the spec, the command's path and its arguments. It
// applies the spec to this process and executes the command; with no path it returns nil
// once the spec is applied (the probe).
func runHelper(args []string) error {
	if len(args) < 2 {
		return errors.New("helper: missing arguments")
	}
	var sp spec
	if err := json.Unmarshal([]byte(args[0]), &sp); err != nil {
		return fmt.Errorf("helper: %w", err)
	}
	// Landlock and no_new_privs are set on this thread, which then executes the command.
	runtime.LockOSThread()
	if err := apply(sp); err != nil {
		return err
	}
	if args[1] == "" {
		return nil
	}
	return syscall.Exec(args[1], args[2:], os.Environ())
}

// apply confines this process: the read-only subpaths, the process limit, no_new_privs
// and Landlock, in that order (a mount and the pid_max write must come before Landlock,
// which forbids both).
func apply(sp spec) error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("making the mount namespace private: %w", err)
	}
	for _, p := range sp.Protected {
		if err := bindReadOnly(p); err != nil {
			return fmt.Errorf("making %s read-only: %w", p, err)
		}
	}
	if err := os.WriteFile("/proc/sys/kernel/pid_max", []byte(strconv.Itoa(sp.MaxProcesses)), 0); err != nil {
		return fmt.Errorf("setting the process limit (pid_max of the sandbox's PID namespace): %w", err)
	}
	lim := &unix.Rlimit{Cur: uint64(sp.MaxProcesses), Max: uint64(sp.MaxProcesses)}
	if err := unix.Setrlimit(unix.RLIMIT_NPROC, lim); err != nil {
		return fmt.Errorf("setting RLIMIT_NPROC: %w", err)
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("PR_SET_NO_NEW_PRIVS: %w", err)
	}
	return restrictLandlock(sp)
}

// bindReadOnly bind-mounts p onto itself read-only, keeping the flags the kernel locks on
// a mount inherited from a more privileged namespace (a remount that dropped them fails).
func bindReadOnly(p string) error {
	if err := unix.Mount(p, p, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return err
	}
	var st unix.Statfs_t
	if err := unix.Statfs(p, &st); err != nil {
		return err
	}
	flags := uintptr(unix.MS_BIND | unix.MS_REMOUNT | unix.MS_RDONLY)
	for _, f := range [][2]uintptr{
		{unix.ST_NOSUID, unix.MS_NOSUID}, {unix.ST_NODEV, unix.MS_NODEV}, {unix.ST_NOEXEC, unix.MS_NOEXEC},
		{unix.ST_NOATIME, unix.MS_NOATIME}, {unix.ST_NODIRATIME, unix.MS_NODIRATIME}, {unix.ST_RELATIME, unix.MS_RELATIME},
	} {
		if uintptr(st.Flags)&f[0] != 0 {
			flags |= f[1]
		}
	}
	return unix.Mount("", p, "", flags, "")
}

// rulesetAttr is struct landlock_ruleset_attr up to its scoped field (ABI 6): the kernel
// takes a shorter struct from an older caller, and a longer one only if its tail is zero.
type rulesetAttr struct {
	handledFS  uint64
	handledNet uint64
	scoped     uint64
}

// pathBeneathAttr is struct landlock_path_beneath_attr, which the kernel packs (12
// bytes, the Go struct's padding is not read).
type pathBeneathAttr struct {
	allowed  uint64
	parentFD int32
}

const (
	fsRead  = unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_READ_DIR
	fsFile  = unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_WRITE_FILE | unix.LANDLOCK_ACCESS_FS_TRUNCATE | unix.LANDLOCK_ACCESS_FS_IOCTL_DEV
	devRW   = unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_WRITE_FILE | unix.LANDLOCK_ACCESS_FS_TRUNCATE | unix.LANDLOCK_ACCESS_FS_IOCTL_DEV
	devDirs = unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_READ_DIR | unix.LANDLOCK_ACCESS_FS_IOCTL_DEV
)

// handledFS is every filesystem right of Landlock ABI abi.
func handledFS(abi int) uint64 {
	switch {
	case abi >= 9:
		return 1<<17 - 1 // RESOLVE_UNIX: connect(2) to pathname Unix sockets
	case abi >= 5:
		return 1<<16 - 1 // IOCTL_DEV
	case abi >= 3:
		return 1<<15 - 1 // TRUNCATE
	case abi == 2:
		return 1<<14 - 1 // REFER
	}
	return 1<<13 - 1
}

// devices are the device files every command may read and write.
var devices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty"}

// restrictLandlock enforces the Landlock ruleset on this thread: everything readable,
// the writable roots writable, the usual devices usable; with the network off, no TCP
// bind or connect and no abstract Unix socket outside the sandbox; signals only within it.
func restrictLandlock(sp spec) error {
	abi, err := landlockABI()
	if err != nil {
		return err
	}
	if abi < minLandlockABI {
		return fmt.Errorf("this kernel's Landlock ABI is %d; the sandbox needs %d or later", abi, minLandlockABI)
	}
	handled := handledFS(abi)
	attr := rulesetAttr{handledFS: handled}
	if abi >= 4 && !sp.Network {
		attr.handledNet = unix.LANDLOCK_ACCESS_NET_BIND_TCP | unix.LANDLOCK_ACCESS_NET_CONNECT_TCP
	}
	if abi >= 6 {
		attr.scoped = unix.LANDLOCK_SCOPE_SIGNAL
		if !sp.Network {
			attr.scoped |= unix.LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET
		}
	}
	fd, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr), 0)
	if errno != 0 {
		return fmt.Errorf("landlock_create_ruleset: %w", errno)
	}
	defer unix.Close(int(fd))
	read := uint64(fsRead)
	if sp.Network && abi >= 9 {
		read |= 1 << 16 // RESOLVE_UNIX: with the network on, Unix sockets stay reachable
	}
	if err := addPath(int(fd), "/", read&handled, true); err != nil {
		return err
	}
	if err := addPath(int(fd), "/dev", devDirs&handled, false); err != nil {
		return err
	}
	for _, d := range devices {
		if err := addPath(int(fd), d, devRW&handled, false); err != nil {
			return err
		}
	}
	for _, w := range sp.Writable {
		if err := addPath(int(fd), w, handled, true); err != nil {
			return err
		}
	}
	if _, _, errno := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, fd, 0, 0); errno != 0 {
		return fmt.Errorf("landlock_restrict_self: %w", errno)
	}
	return nil
}

// addPath grants access beneath path; a missing path is skipped unless required. A file
// gets only the rights that apply to files.
func addPath(rulesetFD int, path string, access uint64, required bool) error {
	fd, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		if !required && errors.Is(err, unix.ENOENT) {
			return nil
		}
		return fmt.Errorf("landlock rule for %s: %w", path, err)
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return fmt.Errorf("landlock rule for %s: %w", path, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		access &= fsFile
	}
	if access == 0 {
		return nil
	}
	attr := pathBeneathAttr{allowed: access, parentFD: int32(fd)}
	if _, _, errno := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(rulesetFD), unix.LANDLOCK_RULE_PATH_BENEATH,
		uintptr(unsafe.Pointer(&attr)), 0, 0, 0); errno != 0 {
		return fmt.Errorf("landlock rule for %s: %w", path, errno)
	}
	return nil
}
