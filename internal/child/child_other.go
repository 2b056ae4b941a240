//go:build !linux

package child

import "syscall"

// Attr returns nil: elsewhere than on Linux there is no parent-death
// signal, and children are only stopped by the code that started them.
func Attr() *syscall.SysProcAttr { return nil }
