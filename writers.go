package libsql

import (
	"context"
)

// writers bounds how many autocommit statements that may write the
// connections of one Connector have in flight at once (Config.MaxWriters).
// SQLite takes one writer at a time anyway, and sqld 0.24.32 can stall all
// writes for good when many queue for its write lock at once; a bound in
// the client keeps that queue short without slowing a single writer.
//
// A nil *writers bounds nothing.
type writers struct {
	slots chan struct{}
}

// newWriters returns a bound of n, or nil for n <= 0 (unbounded).
func newWriters(n int) *writers {
	if n <= 0 {
		return nil
	}
	return &writers{slots: make(chan struct{}, n)}
}

// acquire takes a slot, waiting for one until ctx ends. The error then
// matches ctx's error and is safe to retry: nothing was sent. A nil bound
// has a slot for everyone. A wait for a slot that was not free at once is
// told to tr (nil: not traced) as a WaitWriteSlot.
func (w *writers) acquire(ctx context.Context, tr *connTrace) error {
	if w == nil || w.tryAcquire() {
		return nil
	}
	var ev *TraceEvent
	if tr != nil {
		ctx, ev = tr.startWait(ctx, WaitWriteSlot)
	}
	err := w.wait(ctx)
	if ev != nil {
		tr.end(ctx, ev, err)
	}
	return err
}

// tryAcquire takes a slot if one is free at once.
func (w *writers) tryAcquire() bool {
	select {
	case w.slots <- struct{}{}:
		return true
	default:
		return false
	}
}

// wait takes a slot, waiting for one until ctx ends (see acquire).
func (w *writers) wait(ctx context.Context) error {
	select {
	case w.slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		return slotWaitError(cap(w.slots), ctx.Err())
	}
}

// release gives back a slot taken by acquire.
func (w *writers) release() {
	if w != nil {
		<-w.slots
	}
}
