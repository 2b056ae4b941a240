// Package helperproc starts the running test binary again as a helper
// process: the other side of a test that needs a second process (a server
// whose port another process holds, a replica killed mid-sync, a server
// that does not share the benchmark's CPU). The test binary's TestMain, or
// a test that skips unless its environment says otherwise, does the
// helper's part; it prints one line when it is ready.
//
//	h := helperproc.Start(t, []string{"MY_HELPER=serve"}, "-test.run=^$")
//	port := h.Line // the helper's first line
//
// A helper is killed if the test's process dies (internal/child); when
// the test ends its standard input is closed, which a helper that serves
// until then takes as its cue to exit, and it is waited for.
package helperproc

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"testing"

	"github.com/gohrana/libsql/internal/child"
)

// Process is a helper process that has printed its first line.
type Process struct {
	Cmd  *exec.Cmd
	Line string         // the first line it printed, without the newline
	Out  *bufio.Scanner // the lines it prints after that

	stdin io.Closer
}

// Start runs the test binary with args and env added to its environment,
// its stderr the test's, and waits for the first line it prints; it fails
// tb if the helper cannot start or ends before printing one.
func Start(tb testing.TB, env []string, args ...string) *Process {
	tb.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = child.Attr()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	p := &Process{Cmd: cmd, Out: bufio.NewScanner(stdout), stdin: stdin}
	tb.Cleanup(p.Stop)
	if !p.Out.Scan() {
		p.Kill()
		tb.Fatalf("helper %q: ended before its first line: %v", args, p.Out.Err())
	}
	p.Line = p.Out.Text()
	return p
}

// Pid is the helper's process id.
func (p *Process) Pid() int { return p.Cmd.Process.Pid }

// Stop closes the helper's standard input and waits for it to exit.
func (p *Process) Stop() {
	p.stdin.Close()
	_ = p.Cmd.Wait()
}

// Kill ends the helper as a crash would (SIGKILL) and waits for it.
func (p *Process) Kill() {
	_ = p.Cmd.Process.Kill()
	_ = p.Cmd.Wait()
}
