package embedded

import "time"

// Stats is what a Connector's syncs did since NewConnector, background
// syncs and Sync calls alike: what an operator watches to see that the
// replica keeps up, and why not when it does not.
type Stats struct {
	// FrameNo is the last frame of the primary's log that the local file
	// has applied: the position reads see (0 before the first).
	FrameNo uint64
	// LastSync is when the last successful sync ended (zero before one),
	// and LastSyncDuration how long it took.
	LastSync         time.Time
	LastSyncDuration time.Duration
	// LastErr is the error of the last failed sync, kept until a later
	// sync succeeds (nil then), and LastErrAt when that sync ended. A
	// background sync's failure shows here.
	LastErr   error
	LastErrAt time.Time
	// Syncs and FailedSyncs count the syncs that succeeded and failed.
	Syncs       int64
	FailedSyncs int64
	// FramesApplied counts the frames every sync applied (a failed sync
	// keeps the whole commits it applied before it failed).
	FramesApplied int64
	// BytesReceived counts the bytes of the replication log's answers:
	// frames, snapshots and their framing.
	BytesReceived int64
	// BehindFrames is how far behind the primary the replica was when the
	// last successful sync began: the frames it applied to catch up with
	// the end of the primary's log (after a compaction, the frames of the
	// snapshot it loaded). 0: it was in step.
	BehindFrames int64

	// With offline writes: Pending is how many local transactions are not
	// yet on the primary; Pushed and Conflicts count the local transactions
	// the syncs since NewConnector applied on the primary and those it
	// refused. A failed push shows in LastErr as a failed sync does.
	Pending   int
	Pushed    int64
	Conflicts int64
}

// Stats returns what the Connector's syncs did since it was made.
func (c *Connector) Stats() Stats {
	st := c.repl.Stats()
	out := Stats{
		FrameNo:          st.FrameNo,
		LastSync:         st.LastSync,
		LastSyncDuration: st.LastSyncDuration,
		LastErr:          st.LastErr,
		LastErrAt:        st.LastErrAt,
		Syncs:            st.Syncs,
		FailedSyncs:      st.FailedSyncs,
		FramesApplied:    st.FramesApplied,
		BytesReceived:    c.client.BytesReceived(),
		BehindFrames:     int64(st.LastSyncFrames),
	}
	if o := c.off; o != nil {
		out.Pending = int(o.unpushed.Load())
		out.Pushed, out.Conflicts = o.pushed.Load(), o.conflicts.Load()
		out.FailedSyncs += o.failed.Load()
		o.errMu.Lock()
		if o.lastErr != nil && o.lastErrAt.After(out.LastErrAt) {
			out.LastErr, out.LastErrAt = o.lastErr, o.lastErrAt
		}
		o.errMu.Unlock()
	}
	return out
}
