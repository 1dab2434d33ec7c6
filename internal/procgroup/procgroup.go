// Package procgroup starts a child process in a group of its own and ends the whole group:
// the child and whatever it started, so that nothing a hook, a shell command or a stdio
// server left running outlives it.
//
// On Unix the group is a process group (Setpgid) and signals go to all of it. On Windows
// it is a job object: Terminate and Kill both end every process in the job at once
// (TerminateJobObject), since Windows has no SIGTERM for a process without a console. Limits
// on Windows: the child is assigned to the job just after it starts, so a process it
// starts in that first instant is not in the job; and a process that leaves the job
// (created with CREATE_BREAKAWAY_FROM_JOB where the job allows it) is not ended.
package procgroup

import "os/exec"

// Group is a started child's process group. Its methods are safe for concurrent use and
// on a nil *Group (they do nothing).
type Group struct {
	pid int
	sys groupSys
}

// Start starts cmd in a group of its own (keeping the rest of cmd.SysProcAttr) and
// returns the group. On error nothing is running.
func Start(cmd *exec.Cmd) (*Group, error) {
	prepare(cmd)
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	g := &Group{pid: cmd.Process.Pid}
	g.sys = attach(cmd)
	return g, nil
}

// Pid is the id of the group's first process.
func (g *Group) Pid() int {
	if g == nil {
		return 0
	}
	return g.pid
}

// Terminate asks every process in the group to end (SIGTERM on Unix; on Windows it ends
// them, as Kill does).
func (g *Group) Terminate() {
	if g != nil {
		g.terminate()
	}
}

// Kill ends every process in the group (SIGKILL on Unix, the job's termination on
// Windows). It may be called any number of times.
func (g *Group) Kill() {
	if g != nil {
		g.kill()
	}
}
