package sqldproc

import "syscall"

// procAttr makes the kernel kill sqld should the process that started it
// die without stopping it (a test binary killed on timeout, a panic).
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
