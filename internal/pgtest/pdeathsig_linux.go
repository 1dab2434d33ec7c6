package pgtest

import "syscall"

// setPdeathsig makes the server quit (immediate shutdown) if the test process dies first.
func setPdeathsig(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGQUIT }
