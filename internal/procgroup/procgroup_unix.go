//go:build unix

package procgroup

import (
	"os/exec"
	"syscall"
)

type groupSys struct{}

func prepare(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
}

func attach(*exec.Cmd) groupSys { return groupSys{} }

func (g *Group) terminate() { _ = syscall.Kill(-g.pid, syscall.SIGTERM) }

func (g *Group) kill() { _ = syscall.Kill(-g.pid, syscall.SIGKILL) }
