package sandbox

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/dshkit/dsh/runtime/sandbox/internal/helper"
)

// zygote is the client of one helper serving in the sandbox's namespaces (helper.serve):
// it asks it to start commands and hears when they exit. The namespaces, the mounts and
// the Landlock rules are set up once, when it starts, not once per command: a command
// then costs one fork and exec in the helper.
type zygote struct {
	cmd       *exec.Cmd
	conn      *net.UnixConn
	protected []string // the read-only subpaths it bind-mounted

	wmu  sync.Mutex // writes
	mu   sync.Mutex // what follows
	next int
	proc map[string]*zproc
	live int  // commands started and not exited
	gone bool // the connection ended: no more commands
	done chan struct{}
	// protecting are the answers awaited to "protect" requests, by path.
	protecting map[string]chan error
	pmu        sync.Mutex // protected: one protection pass at a time
}

// zproc is a command a zygote runs.
type zproc struct {
	started chan struct{} // closed on "started" or "failed"
	exited  chan struct{} // closed on "exited", or when the zygote ends
	pid     int
	err     error // the start's failure
	status  syscall.WaitStatus
	lost    bool // the zygote ended before the command did
}

// startZygote starts a helper serving sp in new namespaces and waits until it is
// confined and ready; its error says what the system refused.
func startZygote(s *Sandbox, sp helper.Spec) (*zygote, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("the running program: %w", err)
	}
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("the helper's connection: %w", err)
	}
	theirs := os.NewFile(uintptr(fds[1]), "zygote")
	ours := os.NewFile(uintptr(fds[0]), "zygote client")
	defer theirs.Close()
	defer ours.Close()
	fc, err := net.FileConn(ours)
	if err != nil {
		return nil, fmt.Errorf("the helper's connection: %w", err)
	}
	conn := fc.(*net.UnixConn)
	sp.Zygote = true
	// Through a launcher (helper.LaunchArg), a fresh program, which makes the namespaces:
	// this process may be non-dumpable already (dsh run and dsh acp are), and then could
	// not write the new user namespace's uid_map itself.
	cmd := exec.Command(exe, append([]string{helper.Arg, helper.LaunchArg}, helper.Args(sp, "", nil)...)...)
	// An empty environment: a command comes with its own, and the helper's /proc/1/environ,
	// which the commands of its PID namespace can read, then holds nothing of dsh's.
	cmd.Env = []string{}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.ExtraFiles = []*os.File{theirs}
	if err := cmd.Start(); err != nil {
		conn.Close()
		return nil, fmt.Errorf("the sandbox's launcher: %w", err)
	}
	theirs.Close()
	z := &zygote{cmd: cmd, conn: conn, protected: sp.Protected, proc: map[string]*zproc{}, done: make(chan struct{}),
		protecting: map[string]chan error{}}
	ready := make(chan bool, 1)
	go z.read(ready)
	if !<-ready {
		conn.Close()
		_ = cmd.Wait()
		if msg := string(bytes.TrimSpace(stderr.Bytes())); msg != "" {
			return nil, errors.New(string(bytes.TrimPrefix([]byte(msg), []byte("dsh sandbox: "))))
		}
		return nil, errors.New("the sandbox helper ended before it was ready")
	}
	return z, nil
}

// read reads the helper's frames until the connection ends, then fails what is pending.
func (z *zygote) read(ready chan<- bool) {
	r := bufio.NewReader(z.conn)
	first := true
	for {
		var head [4]byte
		if _, err := io.ReadFull(r, head[:]); err != nil {
			break
		}
		n := binary.LittleEndian.Uint32(head[:])
		if n > 1<<20 {
			break
		}
		body := make([]byte, n)
		if _, err := io.ReadFull(r, body); err != nil {
			break
		}
		f := bytes.Split(body, []byte{0})
		if first {
			first = false
			ok := len(f) == 1 && string(f[0]) == "ready"
			ready <- ok
			if !ok {
				break
			}
			continue
		}
		z.frame(f)
	}
	if first {
		ready <- false
	}
	z.mu.Lock()
	z.gone = true
	for path, c := range z.protecting {
		c <- errors.New("the sandbox helper ended")
		delete(z.protecting, path)
	}
	for id, p := range z.proc {
		p.lost = true
		closeOnce(p.started)
		close(p.exited)
		delete(z.proc, id)
	}
	z.mu.Unlock()
	close(z.done)
}

func closeOnce(c chan struct{}) {
	select {
	case <-c:
	default:
		close(c)
	}
}

// frame handles one of the helper's reports (see helper's handle).
func (z *zygote) frame(f [][]byte) {
	if len(f) < 2 {
		return
	}
	z.mu.Lock()
	defer z.mu.Unlock()
	if op := string(f[0]); op == "protected" || op == "unprotected" {
		if c := z.protecting[string(f[1])]; c != nil {
			delete(z.protecting, string(f[1]))
			if op == "protected" {
				c <- nil
			} else {
				c <- fmt.Errorf("making %s read-only: %s", f[1], bytes.Join(f[2:], nil))
			}
		}
		return
	}
	p := z.proc[string(f[1])]
	if p == nil {
		return
	}
	switch string(f[0]) {
	case "started":
		if len(f) == 3 {
			p.pid, _ = strconv.Atoi(string(f[2]))
		}
		closeOnce(p.started)
	case "failed":
		errno, msg := 0, "the helper gave no reason"
		if len(f) > 2 {
			errno, _ = strconv.Atoi(string(f[2]))
		}
		if len(f) > 3 {
			msg = string(f[3])
		}
		p.err = fmt.Errorf("sandbox: starting the command: %s: %w", msg, syscall.Errno(errno))
		closeOnce(p.started)
		close(p.exited)
		delete(z.proc, string(f[1]))
		z.live--
	case "exited":
		if len(f) == 4 {
			p.pid, _ = strconv.Atoi(string(f[2]))
			st, _ := strconv.ParseUint(string(f[3]), 10, 32)
			p.status = syscall.WaitStatus(st)
		}
		closeOnce(p.started)
		close(p.exited)
		delete(z.proc, string(f[1]))
		z.live--
	}
}

// protect has the helper bind-mount read-only each path of paths it has not yet (a .git
// made since it started), so that the next command finds it read-only; it fails when a
// mount fails, and the command then does not run.
func (z *zygote) protect(paths []string) error {
	z.pmu.Lock()
	defer z.pmu.Unlock()
	for _, p := range paths {
		if slices.Contains(z.protected, p) {
			continue
		}
		c := make(chan error, 1)
		z.mu.Lock()
		if z.gone {
			z.mu.Unlock()
			return errors.New("the sandbox helper has ended")
		}
		z.protecting[p] = c
		z.mu.Unlock()
		if err := z.send(nil, "protect", p); err != nil {
			return err
		}
		if err := <-c; err != nil {
			return err
		}
		z.protected = append(z.protected, p)
	}
	return nil
}

// close ends the helper and every process it started, and waits for it.
func (z *zygote) close() {
	z.conn.Close()
	<-z.done
	_ = z.cmd.Wait()
}

// send writes one frame of fields with the descriptors files.
func (z *zygote) send(files []*os.File, fields ...string) error {
	var body []byte
	for i, f := range fields {
		if i > 0 {
			body = append(body, 0)
		}
		body = append(body, f...)
	}
	head := binary.LittleEndian.AppendUint32(nil, uint32(len(body)))
	var oob []byte
	if len(files) > 0 {
		fds := make([]int, len(files))
		for i, f := range files {
			fds[i] = int(f.Fd())
		}
		oob = syscall.UnixRights(fds...)
	}
	z.wmu.Lock()
	defer z.wmu.Unlock()
	if _, _, err := z.conn.WriteMsgUnix(head, oob, nil); err != nil {
		return err
	}
	_, err := z.conn.Write(body)
	return err
}

// start asks the helper to run cmd with stdio (stdin, stdout, stderr); the returned process has
// started, or the error says why not.
func (z *zygote) start(cmd *exec.Cmd, env []string, stdio []*os.File) (*zproc, error) {
	z.mu.Lock()
	if z.gone {
		z.mu.Unlock()
		return nil, errors.New("sandbox: the helper has ended")
	}
	z.next++
	id := strconv.Itoa(z.next)
	p := &zproc{started: make(chan struct{}), exited: make(chan struct{})}
	z.proc[id] = p
	z.live++
	z.mu.Unlock()
	fields := append([]string{"run", id, cmd.Dir, cmd.Path, strconv.Itoa(len(cmd.Args))}, cmd.Args...)
	fields = append(fields, env...)
	if err := z.send(stdio, fields...); err != nil {
		z.mu.Lock()
		if z.proc[id] == p {
			delete(z.proc, id)
			z.live--
		}
		z.mu.Unlock()
		return nil, fmt.Errorf("sandbox: asking the helper to start %s: %w", cmd.Path, err)
	}
	<-p.started
	if p.err != nil {
		return nil, p.err
	}
	if p.lost {
		return nil, errors.New("sandbox: the helper ended before the command started")
	}
	return p, nil
}

// kill sends sig to the process group of p's command.
func (z *zygote) kill(p *zproc, sig syscall.Signal) {
	if p.pid > 1 {
		_ = z.send(nil, "kill", strconv.Itoa(p.pid), strconv.Itoa(int(sig)))
	}
}

// zygotes holds a sandbox's helper, started with the sandbox (the probe) and kept for its
// session.
type zygotes struct {
	mu  sync.Mutex
	cur *zygote
}

// zygoteFor is the sandbox's helper, started if there is none yet, with sp's read-only
// subpaths all bind-mounted, those that appeared since it started (a .git a command made)
// included, so that each command gets the subpaths that exist as it starts.
func (s *Sandbox) zygoteFor(sp helper.Spec) (*zygote, error) {
	zs := &s.zygotes
	zs.mu.Lock()
	z := zs.cur
	if z == nil {
		var err error
		if z, err = startZygote(s, sp); err != nil {
			zs.mu.Unlock()
			return nil, err
		}
		zs.cur = z
	}
	zs.mu.Unlock()
	if err := z.protect(sp.Protected); err != nil {
		return nil, err
	}
	return z, nil
}

// closeZygotes ends the sandbox's helper.
func (s *Sandbox) closeZygotes() {
	s.zygotes.mu.Lock()
	z := s.zygotes.cur
	s.zygotes.cur = nil
	s.zygotes.mu.Unlock()
	if z != nil {
		z.close()
	}
}

// zrun is a command a zygote runs, with the copies of its output.
type zrun struct {
	z       *zygote
	p       *zproc
	delay   time.Duration // exec.Cmd's WaitDelay
	readers []*os.File
	copies  sync.WaitGroup
}

// start runs cmd confined, through the zygote serving the read-only subpaths that exist
// now.
func start(s *Sandbox, cmd *exec.Cmd) (running, error) {
	z, err := s.zygoteFor(s.spec())
	if err != nil {
		return nil, refusal(s.policy.Mode, err)
	}
	r := &zrun{z: z, delay: cmd.WaitDelay}
	var ends []*os.File
	// stdin: /dev/null, or a pipe fed with cmd.Stdin and then closed (a command that
	// never reads it does not block: the write fails once it is gone).
	if cmd.Stdin == nil {
		null, err := os.Open(os.DevNull)
		if err != nil {
			return nil, err
		}
		ends = append(ends, null)
	} else {
		pr, pw, err := os.Pipe()
		if err != nil {
			return nil, err
		}
		ends = append(ends, pr)
		go func() {
			_, _ = io.Copy(pw, cmd.Stdin)
			pw.Close()
		}()
	}
	for _, w := range []io.Writer{cmd.Stdout, cmd.Stderr} {
		pr, pw, err := os.Pipe()
		if err != nil {
			r.closeAll(ends)
			return nil, err
		}
		ends = append(ends, pw)
		r.readers = append(r.readers, pr)
		if w == nil {
			w = io.Discard
		}
		r.copies.Go(func() { _, _ = io.Copy(w, pr) })
	}
	p, err := z.start(cmd, s.env(cmd), ends)
	for _, w := range ends {
		w.Close()
	}
	if err != nil {
		r.closeAll(nil)
		return nil, err
	}
	r.p = p
	return r, nil
}

func (r *zrun) closeAll(ends []*os.File) {
	for _, f := range ends {
		f.Close()
	}
	for _, f := range r.readers {
		f.Close()
	}
	r.copies.Wait()
}

func (r *zrun) wait() (int, error) {
	<-r.p.exited
	copied := make(chan struct{})
	go func() { r.copies.Wait(); close(copied) }()
	var err error
	if r.p.lost {
		err = errors.New("sandbox: the helper ended while the command ran")
	}
	if r.delay > 0 {
		select {
		case <-copied:
		case <-time.After(r.delay):
			for _, f := range r.readers {
				f.Close()
			}
			<-copied
			if err == nil {
				err = exec.ErrWaitDelay
			}
		}
	} else {
		<-copied
	}
	for _, f := range r.readers {
		f.Close()
	}
	ws := r.p.status
	if r.p.lost || !ws.Exited() {
		return -1, err
	}
	return ws.ExitStatus(), err
}

func (r *zrun) kill() { r.z.kill(r.p, syscall.SIGKILL) }

func (r *zrun) terminate() { r.z.kill(r.p, syscall.SIGTERM) }

func (r *zrun) signal() syscall.Signal {
	if r.p.lost || !r.p.status.Signaled() {
		return 0
	}
	return r.p.status.Signal()
}

func (r *zrun) pid() int { return r.p.pid }
