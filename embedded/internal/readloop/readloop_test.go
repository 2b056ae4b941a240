package readloop

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"
)

// TestStart: every read is counted, the bad ones apart, and none runs
// once stop has returned.
func TestStart(t *testing.T) {
	var calls atomic.Int64
	stop := Start(t, 3, func() (bool, error) {
		return calls.Add(1)%2 == 0, nil
	})
	for calls.Load() < 100 {
		time.Sleep(time.Millisecond)
	}
	reads, bad := stop()
	if reads != calls.Load() {
		t.Errorf("%d reads counted of %d", reads, calls.Load())
	}
	if bad != (reads+1)/2 { // the odd calls
		t.Errorf("%d bad reads of %d, want every second one", bad, reads)
	}
	time.Sleep(10 * time.Millisecond)
	if calls.Load() != reads {
		t.Errorf("%d reads after stop", calls.Load()-reads)
	}
}

// failer records the errors Start reports instead of failing the test.
type failer struct {
	testing.TB
	errs atomic.Int64
}

func (f *failer) Error(...any) { f.errs.Add(1) }

// TestStartError: a read's error is reported once by its goroutine, which
// then reads no more.
func TestStartError(t *testing.T) {
	f := &failer{TB: t}
	var calls atomic.Int64
	stop := Start(f, 2, func() (bool, error) {
		calls.Add(1)
		return false, errors.New("read failed")
	})
	for f.errs.Load() < 2 {
		time.Sleep(time.Millisecond)
	}
	reads, bad := stop()
	if reads != 0 || bad != 0 || calls.Load() != 2 {
		t.Errorf("%d reads, %d bad, %d calls; want 0, 0, 2", reads, bad, calls.Load())
	}
}
