//go:build !linux

package sqldproc

import "syscall"

// procAttr returns nil: elsewhere than on Linux there is no parent-death
// signal, and sqld is only ended by the code that started it.
func procAttr() *syscall.SysProcAttr { return nil }
