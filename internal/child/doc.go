// Package child holds what the tests and tools set on the processes they
// start (sqld through internal/sqldproc, benchmark workers, busy loops),
// so that none outlives them:
//
//	cmd := exec.Command(...)
//	cmd.SysProcAttr = child.Attr()
package child
