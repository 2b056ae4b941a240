package helperproc

import (
	"bufio"
	"fmt"
	"os"
	"syscall"
	"testing"
)

// helperEnv makes the test binary a helper: it prints "ready", then
// "more", and exits when its stdin closes.
const helperEnv = "HELPERPROC_TEST_HELPER"

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) != "" {
		fmt.Println("ready")
		fmt.Println("more")
		bufio.NewReader(os.Stdin).ReadString('\n')
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestStartStop(t *testing.T) {
	p := Start(t, []string{helperEnv + "=1"}, "-test.run=^$")
	if p.Line != "ready" {
		t.Fatalf("first line %q, want ready", p.Line)
	}
	if !p.Out.Scan() || p.Out.Text() != "more" {
		t.Fatalf("next line %q, %v; want more", p.Out.Text(), p.Out.Err())
	}
	if p.Pid() <= 0 {
		t.Fatalf("pid %d", p.Pid())
	}
	p.Stop()
	if !p.Cmd.ProcessState.Success() {
		t.Fatalf("the helper did not exit cleanly once its stdin closed: %v", p.Cmd.ProcessState)
	}
}

func TestKill(t *testing.T) {
	p := Start(t, []string{helperEnv + "=1"}, "-test.run=^$")
	p.Kill()
	ws, ok := p.Cmd.ProcessState.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("the helper was not killed: %v", p.Cmd.ProcessState)
	}
}
