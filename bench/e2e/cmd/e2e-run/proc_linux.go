package main

import "syscall"

// childAttr makes the kernel kill a child (sqld, a worker) if this process
// dies without stopping it.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
