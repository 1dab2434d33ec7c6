// Package helper is the sandbox's helper process: a program started with Arg as its first
// argument applies the policy its arguments describe to itself and then executes the
// command, during this package's initialization.
//
// The package imports only os, runtime, sync, syscall and unsafe, so that Go initializes it
// among the first packages of any program linking it (initialization follows import
// paths, a package as soon as it is the first in order whose imports are initialized):
// the helper then runs before the packages it does not need, whose initialization
// (milliseconds in dsh's binary) would otherwise be paid by every confined command.
//
// Its arguments, after Arg: "net" (the network stays on), "zygote" (serve a client on
// ZygoteFD instead of executing one command), "np=N" (the process limit),
// "w=DIR" (a writable root) and "ro=DIR" (a read-only subpath), in any number and order,
// then "--", the command's path ("" only applies the policy and exits 0: the probe) and
// its arguments, argv[0] first.
package helper

import "os"

// Arg is the hidden first argument that makes a process the helper.
const Arg = "__dsh-sandbox-helper"

// LaunchArg, after Arg, makes the process a launcher: it starts the helper its other
// arguments describe in new namespaces, and exits when the helper does. A launcher is a freshly executed
// program, so it may make the namespaces where its parent could not (a non-dumpable
// parent cannot write a new user namespace's uid_map as an unprivileged user).
const LaunchArg = "launch"

// Spec is the policy the helper applies.
type Spec struct {
	// Writable are the writable roots.
	Writable []string
	// Protected are the read-only subpaths inside them, bind-mounted read-only.
	Protected []string
	// Network leaves the network alone; otherwise TCP bind and connect are denied.
	Network bool
	// MaxProcesses is the PID namespace's pid_max and RLIMIT_NPROC.
	MaxProcesses int
	// Zygote makes the helper, once confined, serve its client on ZygoteFD instead of
	// executing a command: it starts each command the client asks for (see serve).
	Zygote bool
}

func init() { Main() }

// Main runs the helper when this process is one, and never returns then; otherwise it
// returns at once. The package's initialization calls it.
func Main() {
	if len(os.Args) < 2 || os.Args[1] != Arg {
		return
	}
	var msg string
	if len(os.Args) > 2 && os.Args[2] == LaunchArg {
		msg = launch(os.Args[3:])
	} else {
		var sp Spec
		var path string
		var argv []string
		if sp, path, argv, msg = parse(os.Args[2:]); msg == "" {
			msg = run(sp, path, argv)
		}
	}
	if msg != "" {
		os.Stderr.WriteString("dsh sandbox: " + msg + "\n")
		os.Exit(126)
	}
	os.Exit(0)
}

// Args are the helper's arguments after Arg for sp and the command (path "" for the
// probe).
func Args(sp Spec, path string, argv []string) []string {
	args := []string{"np=" + itoa(sp.MaxProcesses)}
	if sp.Network {
		args = append(args, "net")
	}
	if sp.Zygote {
		args = append(args, "zygote")
	}
	for _, w := range sp.Writable {
		args = append(args, "w="+w)
	}
	for _, p := range sp.Protected {
		args = append(args, "ro="+p)
	}
	args = append(args, "--", path)
	if path != "" {
		args = append(args, argv...)
	}
	return args
}

// parse reads Args' output; msg says what is wrong with it.
func parse(args []string) (sp Spec, path string, argv []string, msg string) {
	for i, a := range args {
		switch {
		case a == "--":
			if i+1 >= len(args) {
				return sp, "", nil, "helper: no command"
			}
			return sp, args[i+1], args[i+2:], ""
		case a == "net":
			sp.Network = true
		case a == "zygote":
			sp.Zygote = true
		case len(a) > 3 && a[:3] == "np=":
			n, ok := atoi(a[3:])
			if !ok {
				return sp, "", nil, "helper: bad argument " + a
			}
			sp.MaxProcesses = n
		case len(a) > 2 && a[:2] == "w=":
			sp.Writable = append(sp.Writable, a[2:])
		case len(a) > 3 && a[:3] == "ro=":
			sp.Protected = append(sp.Protected, a[3:])
		default:
			return sp, "", nil, "helper: bad argument " + a
		}
	}
	return sp, "", nil, "helper: no command"
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	for ; n > 0; n /= 10 {
		i--
		b[i] = byte('0' + n%10)
	}
	return string(b[i:])
}

func atoi(s string) (int, bool) {
	n := 0
	for _, c := range []byte(s) {
		if c < '0' || c > '9' || n > 1<<30 {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, s != ""
}
