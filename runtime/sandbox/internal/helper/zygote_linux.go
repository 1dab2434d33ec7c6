package helper

import (
	"runtime"
	"sync"
	"syscall"
)

// ZygoteFD is the descriptor of the zygote's connection to its client: the first of
// exec.Cmd's ExtraFiles.
const ZygoteFD = 3

// serve is the zygote: the helper, once confined, runs each command its client asks for
// as a child of this thread (so that the child inherits its Landlock domain and
// no_new_privs, which are a thread's), each in a process group of its own, and reports
// when one exits. Every process of the sandbox ends with it: when the client's connection
// closes, it kills them all (it is the first process of the PID namespace) and exits.
func serve(mounts chan<- mountRequest) string {
	// The connection is the helper's alone: no command inherits it.
	syscall.CloseOnExec(ZygoteFD)
	z := &zygote{leaders: map[int]string{}, forked: make(chan struct{}, 1), mounts: mounts}
	requests := make(chan request)
	go z.read(requests)
	go z.reap()
	z.send("ready")
	for req := range requests {
		z.handle(req.fields, req.files)
		for _, fd := range req.files {
			_ = syscall.Close(fd)
		}
	}
	// The client is gone: end every process of the namespace, this one last.
	_ = syscall.Kill(-1, syscall.SIGKILL)
	return ""
}

type zygote struct {
	mounts  chan<- mountRequest
	wmu     sync.Mutex // writes to the connection
	mu      sync.Mutex // leaders, held from a fork until its leader is recorded
	leaders map[int]string
	forked  chan struct{}
}

// request is one request: its fields and the descriptors that came with it.
type request struct {
	fields []string
	files  []int
}

// read reads the requests: a frame is a 4-byte little-endian length and that many bytes
// of NUL-separated fields, its descriptors (SCM_RIGHTS) on its length. It closes requests
// at end of input or on an error.
func (z *zygote) read(requests chan<- request) {
	defer close(requests)
	oob := make([]byte, syscall.CmsgSpace(4*4))
	for {
		var head [4]byte
		n, oobn, _, _, err := syscall.Recvmsg(ZygoteFD, head[:], oob, syscall.MSG_CMSG_CLOEXEC)
		if err == syscall.EINTR {
			continue
		}
		if err != nil || n == 0 {
			return
		}
		if n < 4 && !readFull(head[n:]) {
			return
		}
		var files []int
		if oobn > 0 {
			if msgs, err := syscall.ParseSocketControlMessage(oob[:oobn]); err == nil {
				for _, m := range msgs {
					if rights, err := syscall.ParseUnixRights(&m); err == nil {
						files = append(files, rights...)
					}
				}
			}
		}
		size := int(head[0]) | int(head[1])<<8 | int(head[2])<<16 | int(head[3])<<24
		if size > maxFrame {
			return
		}
		body := make([]byte, size)
		if !readFull(body) {
			return
		}
		requests <- request{split(body), files}
	}
}

// maxFrame bounds a request: the kernel's limit on a command's arguments and environment
// (ARG_MAX, 2 MiB with the default stack limit) and some.
const maxFrame = 8 << 20

func readFull(b []byte) bool {
	for len(b) > 0 {
		n, err := syscall.Read(ZygoteFD, b)
		if err == syscall.EINTR {
			continue
		}
		if err != nil || n <= 0 {
			return false
		}
		b = b[n:]
	}
	return true
}

func split(b []byte) []string {
	var out []string
	start := 0
	for i, c := range b {
		if c == 0 {
			out = append(out, string(b[start:i]))
			start = i + 1
		}
	}
	return append(out, string(b[start:]))
}

// send writes one frame of fields.
func (z *zygote) send(fields ...string) {
	size := 0
	for _, f := range fields {
		size += len(f) + 1
	}
	b := make([]byte, 4, 4+size)
	for _, f := range fields {
		b = append(b, f...)
		b = append(b, 0)
	}
	b = b[:len(b)-1]
	n := len(b) - 4
	b[0], b[1], b[2], b[3] = byte(n), byte(n>>8), byte(n>>16), byte(n>>24)
	z.wmu.Lock()
	defer z.wmu.Unlock()
	for len(b) > 0 {
		w, err := syscall.Write(ZygoteFD, b)
		if err == syscall.EINTR {
			continue
		}
		if err != nil || w <= 0 {
			return
		}
		b = b[w:]
	}
}

// handle runs one request on this (the confined) thread:
//
//	run ID DIR PATH ARGC ARG... ENV...  with stdin, stdout and stderr as descriptors
//	kill PID SIGNAL                     to the process group of a command's first process
//	protect PATH                        bind-mount PATH read-only; answers "protected PATH"
//	                                    or "unprotected PATH MESSAGE"
//
// A run answers "started ID PID" or "failed ID ERRNO MESSAGE"; "exited ID PID STATUS"
// follows when the command's first process ends, possibly before "started" arrives.
func (z *zygote) handle(req []string, files []int) {
	switch {
	case len(req) >= 5 && req[0] == "run":
		id, dir, path := req[1], req[2], req[3]
		argc, ok := atoi(req[4])
		if !ok || 5+argc > len(req) || len(files) != 3 {
			z.send("failed", id, "22", "bad request")
			return
		}
		argv, env := req[5:5+argc], req[5+argc:]
		z.mu.Lock()
		pid, err := syscall.ForkExec(path, argv, &syscall.ProcAttr{Dir: dir, Env: env,
			Files: []uintptr{uintptr(files[0]), uintptr(files[1]), uintptr(files[2])},
			// The first process of a PID namespace of its own: when it ends, the kernel
			// kills whatever the command left running, a process that left the group
			// (setsid) included.
			Sys: &syscall.SysProcAttr{Setpgid: true, Cloneflags: syscall.CLONE_NEWPID}})
		if err == nil {
			z.leaders[pid] = id
		}
		z.mu.Unlock()
		if err != nil {
			z.send("failed", id, errnoOf(err), err.Error())
			return
		}
		select {
		case z.forked <- struct{}{}:
		default:
		}
		z.send("started", id, itoa(pid))
	case len(req) == 2 && req[0] == "protect":
		done := make(chan error, 1)
		z.mounts <- mountRequest{path: req[1], done: done}
		if err := <-done; err != nil {
			z.send("unprotected", req[1], err.Error())
			return
		}
		z.send("protected", req[1])
	case len(req) == 3 && req[0] == "kill":
		pid, ok1 := atoi(req[1])
		sig, ok2 := atoi(req[2])
		if ok1 && ok2 && pid > 1 {
			_ = syscall.Kill(-pid, syscall.Signal(sig))
		}
	}
}

// reap waits for every child and reports a command's exit. The children are the
// commands (each the first process of a PID namespace of its own, which reaps its
// orphans) and, should one come, an orphan of the helper's own namespace.
func (z *zygote) reap() {
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, 0, nil)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			<-z.forked // no child yet: wait for one
			continue
		}
		z.mu.Lock()
		id, ok := z.leaders[pid]
		delete(z.leaders, pid)
		z.mu.Unlock()
		if ok {
			z.send("exited", id, itoa(pid), itoa(int(ws)))
		}
	}
}

func errnoOf(err error) string {
	if e, ok := err.(syscall.Errno); ok {
		return itoa(int(e))
	}
	return "5" // EIO
}

// mountRequest asks the mounter to make path read-only.
type mountRequest struct {
	path string
	done chan<- error
}

// startMounter starts the goroutine that bind-mounts paths read-only on a thread of its
// own, locked now, before Landlock restricts the calling thread (Landlock forbids mounts
// to a restricted thread; the mount namespace is the process's, so the mounts are every
// later command's).
func startMounter() chan<- mountRequest {
	reqs := make(chan mountRequest)
	locked := make(chan struct{})
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the process
		close(locked)
		for r := range reqs {
			r.done <- bindReadOnly(r.path)
		}
	}()
	<-locked
	return reqs
}
