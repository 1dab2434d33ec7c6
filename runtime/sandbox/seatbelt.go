package sandbox

import (
	"fmt"
	"strings"
)

// seatbeltExec is macOS's sandbox runner: it runs a command under a Seatbelt profile.
const seatbeltExec = "/usr/bin/sandbox-exec"

// seatbeltBase is the part of the Seatbelt profile every confined mode shares, after
// Codex's: deny by default, read everything, run and fork processes that inherit the
// profile, signal only within it, and the few devices and system queries a shell needs.
const seatbeltBase = `(version 1)
(deny default)
(allow file-read*)
(allow process-exec)
(allow process-fork)
(allow signal (target same-sandbox))
(allow process-info* (target same-sandbox))
(allow file-write-data
  (require-all (path "/dev/null") (vnode-type CHARACTER-DEVICE)))
(allow file-read* file-write* file-ioctl
  (literal "/dev/tty") (literal "/dev/ptmx") (regex #"^/dev/ttys[0-9]+$"))
(allow pseudo-tty)
(allow sysctl-read)
(allow ipc-posix-sem)
(allow ipc-posix-shm-read-data)
(allow mach-lookup
  (global-name "com.apple.system.opendirectoryd.libinfo")
  (global-name "com.apple.sysmond")
  (global-name "com.apple.PowerManagement.control"))
`

// seatbeltProfile is the Seatbelt profile of a policy whose commands may write beneath
// writable, never beneath protected, and reach the network when network is set, with the
// parameters sandbox-exec is given for its paths (-D NAME=VALUE): a path is a parameter,
// never text of the profile, so no path can change the profile's meaning.
func seatbeltProfile(writable, protected []string, network bool) (profile string, params []string) {
	var b strings.Builder
	b.WriteString(seatbeltBase)
	for i, root := range writable {
		name := fmt.Sprintf("WRITABLE_ROOT_%d", i)
		params = append(params, "-D", name+"="+root)
		var nots []string
		for j, p := range protected {
			if p == root || !strings.HasPrefix(p, root+"/") {
				continue
			}
			ro := fmt.Sprintf("%s_RO_%d", name, j)
			params = append(params, "-D", ro+"="+p)
			nots = append(nots, fmt.Sprintf(` (require-not (subpath (param %q)))`, ro))
		}
		if len(nots) == 0 {
			fmt.Fprintf(&b, "(allow file-write* (subpath (param %q)))\n", name)
			continue
		}
		fmt.Fprintf(&b, "(allow file-write* (require-all (subpath (param %q))%s))\n", name, strings.Join(nots, ""))
	}
	if network {
		b.WriteString("(allow network-outbound)\n(allow network-inbound)\n(allow system-socket)\n")
	}
	return b.String(), params
}

// seatbeltArgs are sandbox-exec's arguments to run path with argv (argv[0] first) under
// s's policy.
func (s *Sandbox) seatbeltArgs(path string, argv []string) []string {
	profile, params := seatbeltProfile(s.writable, s.spec().Protected, s.policy.Network)
	args := append([]string{seatbeltExec, "-p", profile}, params...)
	args = append(args, "--", path)
	if len(argv) > 1 {
		args = append(args, argv[1:]...)
	}
	return args
}
