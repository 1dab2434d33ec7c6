package helper

import (
	"os"
	"runtime"
	"syscall"
	"unsafe"
)

// Landlock's system calls (the same numbers on every architecture) and constants, and
// the others package syscall lacks, from the kernel's UAPI headers.
const (
	sysLandlockCreateRuleset = 444
	sysLandlockAddRule       = 445
	sysLandlockRestrictSelf  = 446
	sysOpenTree              = 428
	sysMoveMount             = 429
	sysMountSetattr          = 442

	openTreeClone        = 1
	atRecursive          = 0x8000
	moveMountFEmptyPath  = 0x4
	mountAttrRdonly      = 0x1
	mountAttrSizeVersion = 32 // MOUNT_ATTR_SIZE_VER0

	landlockCreateRulesetVersion = 1
	landlockRulePathBeneath      = 1

	fsExecute     = 1 << 0
	fsWriteFile   = 1 << 1
	fsReadFile    = 1 << 2
	fsReadDir     = 1 << 3
	fsTruncate    = 1 << 14
	fsIoctlDev    = 1 << 15
	fsResolveUnix = 1 << 16

	netBindTCP    = 1 << 0
	netConnectTCP = 1 << 1

	scopeAbstractUnixSocket = 1 << 0
	scopeSignal             = 1 << 1

	prSetNoNewPrivs      = 38
	prCapAmbient         = 47
	capSysAdmin          = 21
	prCapAmbientClearAll = 4
	rlimitNproc          = 6
	oPath                = 0x200000

	stNosuid      = 0x2
	stNodev       = 0x4
	stNoexec      = 0x8
	stNoatime     = 0x400
	stNodiratime  = 0x800
	stRelatime    = 0x1000
	sIFMT, sIFDIR = 0xf000, 0x4000
)

// MinLandlockABI is the least Landlock ABI the sandbox runs on: ABI 3 is the first that
// controls truncation, without which a command could empty any file it can read.
const MinLandlockABI = 3

// LandlockABI is the kernel's Landlock ABI version, or a message saying why there is none.
func LandlockABI() (int, string) {
	v, _, errno := syscall.Syscall(sysLandlockCreateRuleset, 0, 0, landlockCreateRulesetVersion)
	switch {
	case errno == syscall.ENOSYS:
		return 0, "this kernel has no Landlock (it needs Linux 5.13 or later built with CONFIG_SECURITY_LANDLOCK)"
	case errno == syscall.EOPNOTSUPP:
		return 0, "Landlock is not enabled on this kernel (add landlock to the lsm= boot parameter)"
	case errno != 0:
		return 0, "Landlock: " + errno.Error()
	}
	if int(v) < MinLandlockABI {
		return int(v), "this kernel's Landlock ABI is " + itoa(int(v)) + "; the sandbox needs " + itoa(MinLandlockABI) + " (Linux 6.2) or later"
	}
	return int(v), ""
}

// run applies sp to this process and executes path; with no path it returns "" once sp
// is applied (the probe). A message says what failed.
func run(sp Spec, path string, argv []string) string {
	// Only a helper sandbox.Wrap started is the first process of a PID namespace of its
	// own: any other process would change the whole system's pid_max and mounts, or fail.
	if os.Getpid() != 1 {
		return "helper: not started by sandbox.Wrap (not the first process of a new PID namespace)"
	}
	// Landlock and no_new_privs are set on this thread, which then executes the command.
	runtime.LockOSThread()
	var mounts chan<- mountRequest
	if sp.Zygote {
		// A thread of its own, locked before Landlock restricts this one (Landlock and
		// no_new_privs are a thread's), bind-mounts the read-only subpaths that appear
		// during the session.
		mounts = startMounter()
	}
	if msg := apply(sp); msg != "" {
		return msg
	}
	// The ambient CAP_SYS_ADMIN the mounts needed (sandbox.wrapAs) goes from this thread,
	// so that a command it executes, or forks and executes, has no capability (a user's
	// uid in the namespace is not 0; root's keeps root's there, as without the sandbox).
	if _, _, errno := syscall.RawSyscall6(syscall.SYS_PRCTL, prCapAmbient, prCapAmbientClearAll, 0, 0, 0, 0); errno != 0 {
		return "clearing the ambient capabilities: " + errno.Error()
	}
	if sp.Zygote {
		return serve(mounts)
	}
	if path == "" {
		return ""
	}
	return "executing " + path + ": " + syscall.Exec(path, argv, os.Environ()).Error()
}

// apply confines this process: a /proc of its own, the process limit, every mount but
// the writable roots read-only, the read-only subpaths, no_new_privs and Landlock, in that
// order (the mounts and the pid_max write come before Landlock, which forbids both).
func apply(sp Spec) string {
	if err := syscall.Mount("", "/", "", syscall.MS_REC|syscall.MS_PRIVATE, ""); err != nil {
		return "making the mount namespace private: " + err.Error()
	}
	// A /proc of the sandbox's own PID namespace, so that a command sees its processes
	// only, and /proc/1 is its own shell. Best effort: where /proc is partly masked (in a
	// container) the kernel refuses, and the system's /proc stays, readable as any file,
	// its other processes' links closed by Landlock's ptrace rule.
	_ = syscall.Mount("proc", "/proc", "proc", syscall.MS_NOSUID|syscall.MS_NODEV|syscall.MS_NOEXEC, "")
	if err := writeFile("/proc/sys/kernel/pid_max", itoa(sp.MaxProcesses)); err != nil {
		return "setting the process limit (pid_max of the sandbox's PID namespace): " + err.Error()
	}
	if msg := readOnlyOutside(sp.Writable); msg != "" {
		return msg
	}
	for _, p := range sp.Protected {
		if err := bindReadOnly(p); err != nil {
			return "making " + p + " read-only: " + err.Error()
		}
	}
	lim := syscall.Rlimit{Cur: uint64(sp.MaxProcesses), Max: uint64(sp.MaxProcesses)}
	if err := syscall.Setrlimit(rlimitNproc, &lim); err != nil {
		return "setting RLIMIT_NPROC: " + err.Error()
	}
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetNoNewPrivs, 1, 0); errno != 0 {
		return "PR_SET_NO_NEW_PRIVS: " + errno.Error()
	}
	return restrictLandlock(sp)
}

// readOnlyOutside makes every mount of the helper's mount namespace read-only but the
// writable roots, as Codex's --ro-bind / / does: Landlock controls a file's content and
// names, not its metadata, so without it a command could change the mode, times or
// extended attributes of a file outside the writable roots (chmod, touch -d, setxattr).
// Each writable root is copied first (open_tree: a detached copy of the mounts beneath it,
// as they are), everything is then made read-only (mount_setattr, recursively), and each
// copy is attached back at its root. The working directory is looked up again, through the
// new mounts. Device files stay writable on a read-only mount; Landlock decides which.
func readOnlyOutside(writable []string) string {
	fds := make([]int, len(writable))
	for i, w := range writable {
		fd, err := openTree(w)
		if err != nil {
			return "copying the mounts of " + w + ": " + err.Error()
		}
		defer syscall.Close(fd)
		fds[i] = fd
	}
	root, err := syscall.BytePtrFromString("/")
	if err != nil {
		return err.Error()
	}
	attr := [4]uint64{mountAttrRdonly} // struct mount_attr: attr_set, attr_clr, propagation, userns_fd
	if _, _, errno := syscall.Syscall6(sysMountSetattr, atFDCWD, uintptr(unsafe.Pointer(root)),
		atRecursive, uintptr(unsafe.Pointer(&attr)), mountAttrSizeVersion, 0); errno != 0 {
		return "making the filesystem read-only (mount_setattr): " + errno.Error()
	}
	for i, w := range writable {
		if err := moveMount(fds[i], w); err != nil {
			return "mounting " + w + " writable again: " + err.Error()
		}
	}
	if wd, err := syscall.Getwd(); err == nil {
		_ = syscall.Chdir(wd)
	}
	return ""
}

// atFDCWD is AT_FDCWD (-100), as a system call's argument.
var atFDCWD = func() uintptr { fd := -100; return uintptr(fd) }()

// openTree is open_tree(2) with OPEN_TREE_CLONE and AT_RECURSIVE: a detached copy of the
// mounts at and beneath path.
func openTree(path string) (int, error) {
	p, err := syscall.BytePtrFromString(path)
	if err != nil {
		return -1, err
	}
	fd, _, errno := syscall.Syscall(sysOpenTree, atFDCWD, uintptr(unsafe.Pointer(p)),
		openTreeClone|atRecursive|syscall.O_CLOEXEC)
	if errno != 0 {
		return -1, errno
	}
	return int(fd), nil
}

// moveMount attaches the detached mounts of fd at path (move_mount(2)).
func moveMount(fd int, path string) error {
	empty, err := syscall.BytePtrFromString("")
	if err != nil {
		return err
	}
	p, err := syscall.BytePtrFromString(path)
	if err != nil {
		return err
	}
	if _, _, errno := syscall.Syscall6(sysMoveMount, uintptr(fd), uintptr(unsafe.Pointer(empty)),
		atFDCWD, uintptr(unsafe.Pointer(p)), moveMountFEmptyPath, 0); errno != 0 {
		return errno
	}
	return nil
}

func writeFile(path, s string) error {
	fd, err := syscall.Open(path, syscall.O_WRONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer syscall.Close(fd)
	_, err = syscall.Write(fd, []byte(s))
	return err
}

// bindReadOnly bind-mounts p onto itself read-only, keeping the flags the kernel locks on
// a mount inherited from a more privileged namespace (a remount that dropped them fails).
func bindReadOnly(p string) error {
	if err := syscall.Mount(p, p, "", syscall.MS_BIND|syscall.MS_REC, ""); err != nil {
		return err
	}
	var st syscall.Statfs_t
	if err := syscall.Statfs(p, &st); err != nil {
		return err
	}
	flags := uintptr(syscall.MS_BIND | syscall.MS_REMOUNT | syscall.MS_RDONLY)
	for _, f := range [][2]uintptr{
		{stNosuid, syscall.MS_NOSUID}, {stNodev, syscall.MS_NODEV}, {stNoexec, syscall.MS_NOEXEC},
		{stNoatime, syscall.MS_NOATIME}, {stNodiratime, syscall.MS_NODIRATIME}, {stRelatime, syscall.MS_RELATIME},
	} {
		if uintptr(st.Flags)&f[0] != 0 {
			flags |= f[1]
		}
	}
	return syscall.Mount("", p, "", flags, "")
}

// rulesetAttr is struct landlock_ruleset_attr up to its scoped field (ABI 6): the kernel
// takes a shorter struct from an older caller, and a longer one only if its tail is zero.
type rulesetAttr struct {
	handledFS  uint64
	handledNet uint64
	scoped     uint64
}

// pathBeneathAttr is struct landlock_path_beneath_attr, which the kernel packs (12
// bytes; the Go struct's padding is not read).
type pathBeneathAttr struct {
	allowed  uint64
	parentFD int32
}

const (
	fsRead  = fsExecute | fsReadFile | fsReadDir
	fsFile  = fsExecute | fsReadFile | fsWriteFile | fsTruncate | fsIoctlDev
	devRW   = fsReadFile | fsWriteFile | fsTruncate | fsIoctlDev
	devDirs = fsReadFile | fsReadDir | fsIoctlDev
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
func restrictLandlock(sp Spec) string {
	abi, msg := LandlockABI()
	if msg != "" {
		return msg
	}
	handled := handledFS(abi)
	attr := rulesetAttr{handledFS: handled}
	if abi >= 4 && !sp.Network {
		attr.handledNet = netBindTCP | netConnectTCP
	}
	if abi >= 6 {
		attr.scoped = scopeSignal
		if !sp.Network {
			attr.scoped |= scopeAbstractUnixSocket
		}
	}
	fd, _, errno := syscall.Syscall(sysLandlockCreateRuleset, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr), 0)
	if errno != 0 {
		return "landlock_create_ruleset: " + errno.Error()
	}
	defer syscall.Close(int(fd))
	read := uint64(fsRead)
	if sp.Network && abi >= 9 {
		read |= fsResolveUnix // with the network on, Unix sockets stay reachable
	}
	if msg := addPath(int(fd), "/", read&handled, true); msg != "" {
		return msg
	}
	if msg := addPath(int(fd), "/dev", devDirs&handled, false); msg != "" {
		return msg
	}
	for _, d := range devices {
		if msg := addPath(int(fd), d, devRW&handled, false); msg != "" {
			return msg
		}
	}
	for _, w := range sp.Writable {
		if msg := addPath(int(fd), w, handled, true); msg != "" {
			return msg
		}
	}
	if _, _, errno := syscall.Syscall(sysLandlockRestrictSelf, fd, 0, 0); errno != 0 {
		return "landlock_restrict_self: " + errno.Error()
	}
	return ""
}

// addPath grants access beneath path; a missing path is skipped unless required. A file
// gets only the rights that apply to files.
func addPath(rulesetFD int, path string, access uint64, required bool) string {
	fd, err := syscall.Open(path, oPath|syscall.O_CLOEXEC, 0)
	if err != nil {
		if !required && err == syscall.ENOENT {
			return ""
		}
		return "landlock rule for " + path + ": " + err.Error()
	}
	defer syscall.Close(fd)
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return "landlock rule for " + path + ": " + err.Error()
	}
	if st.Mode&sIFMT != sIFDIR {
		access &= fsFile
	}
	if access == 0 {
		return ""
	}
	attr := pathBeneathAttr{allowed: access, parentFD: int32(fd)}
	if _, _, errno := syscall.Syscall6(sysLandlockAddRule, uintptr(rulesetFD), landlockRulePathBeneath,
		uintptr(unsafe.Pointer(&attr)), 0, 0, 0); errno != 0 {
		return "landlock rule for " + path + ": " + errno.Error()
	}
	return ""
}

// launch starts the helper args describe (the helper's arguments after Arg) in new user,
// PID and mount namespaces, and a new network namespace unless args hold "net", with the
// user's own uid and gid mapped to themselves and CAP_SYS_ADMIN kept, as an ambient
// capability, for its mounts; it passes on its standard streams and ZygoteFD, and
// returns once the helper has ended.
func launch(args []string) string {
	exe, err := os.Executable()
	if err != nil {
		return "the running program: " + err.Error()
	}
	flags := uintptr(syscall.CLONE_NEWUSER | syscall.CLONE_NEWPID | syscall.CLONE_NEWNS | syscall.CLONE_NEWNET)
	for _, a := range args {
		if a == "--" {
			break
		}
		if a == "net" {
			flags &^= syscall.CLONE_NEWNET
		}
	}
	uid, gid := os.Getuid(), os.Getgid()
	pid, err := syscall.ForkExec(exe, append([]string{exe, Arg}, args...), &syscall.ProcAttr{
		Env:   []string{},
		Files: []uintptr{0, 1, 2, ZygoteFD},
		Sys: &syscall.SysProcAttr{
			Cloneflags:                 flags,
			UidMappings:                []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}},
			GidMappings:                []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}},
			GidMappingsEnableSetgroups: false,
			AmbientCaps:                []uintptr{capSysAdmin},
		},
	})
	if err != nil {
		return namespaceRefusal(err)
	}
	// The connection is the helper's alone.
	_ = syscall.Close(ZygoteFD)
	// Wait for the helper, so that it is reaped as it ends, and its client, waiting for
	// this process, knows it is gone.
	for {
		var ws syscall.WaitStatus
		if _, err := syscall.Wait4(pid, &ws, 0, nil); err != syscall.EINTR {
			break
		}
	}
	return ""
}

// namespaceRefusal says why the kernel refused the new namespaces.
func namespaceRefusal(err error) string {
	switch err {
	case syscall.EPERM, syscall.ENOSPC, syscall.EINVAL, syscall.EACCES:
		return "the kernel refused new user namespaces (" + err.Error() + "): see /proc/sys/user/max_user_namespaces, kernel.unprivileged_userns_clone or AppArmor's apparmor_restrict_unprivileged_userns"
	}
	return "starting the sandbox helper: " + err.Error()
}
