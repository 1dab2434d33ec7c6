//go:build windows

package procgroup

import (
	"os/exec"
	"sync"
	"unsafe"

	"golang.org/x/sys/windows"
)

// groupSys holds the job object (0 if it could not be made: then only the child itself
// is ended).
type groupSys struct {
	job  windows.Handle
	once *sync.Once
}

func prepare(*exec.Cmd) {}

// attach puts the started child into a new job object that ends its processes when it is
// closed.
func attach(cmd *exec.Cmd) groupSys {
	job, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return groupSys{once: new(sync.Once)}
	}
	info := windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION{}
	info.BasicLimitInformation.LimitFlags = windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
	_, _ = windows.SetInformationJobObject(job, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info)))
	proc, err := windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE, false, uint32(cmd.Process.Pid))
	if err != nil {
		_ = windows.CloseHandle(job)
		return groupSys{once: new(sync.Once)}
	}
	defer windows.CloseHandle(proc)
	if err := windows.AssignProcessToJobObject(job, proc); err != nil {
		_ = windows.CloseHandle(job)
		return groupSys{once: new(sync.Once)}
	}
	return groupSys{job: job, once: new(sync.Once)}
}

func (g *Group) terminate() { g.kill() }

// kill terminates the job and closes it (once); without a job it ends the child alone.
func (g *Group) kill() {
	g.sys.once.Do(func() {
		if g.sys.job == 0 {
			if p, err := windows.OpenProcess(windows.PROCESS_TERMINATE, false, uint32(g.pid)); err == nil {
				_ = windows.TerminateProcess(p, 1)
				_ = windows.CloseHandle(p)
			}
			return
		}
		_ = windows.TerminateJobObject(g.sys.job, 1)
		_ = windows.CloseHandle(g.sys.job)
	})
}
