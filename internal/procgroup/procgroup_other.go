//go:build !unix && !windows

package procgroup

import (
	"os"
	"os/exec"
)

type groupSys struct{}

func prepare(*exec.Cmd) {}

func attach(*exec.Cmd) groupSys { return groupSys{} }

// Where there are no process groups only the child itself is ended.
func (g *Group) terminate() { g.kill() }

func (g *Group) kill() {
	if p, err := os.FindProcess(g.pid); err == nil {
		_ = p.Kill()
	}
}
