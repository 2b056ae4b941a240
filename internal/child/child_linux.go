package child

import "syscall"

// Attr makes the kernel kill a child process with SIGKILL if the process
// that started it dies first, even without stopping it (a panic, a kill).
func Attr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
