package embedded_test

import (
	"testing"
	"time"

	"github.com/gohrana/libsql/embedded"
)

// TestStats: Stats follows the syncs: the position and counts after
// syncs that applied frames and one that found none; a failed Sync and a
// failed background sync in LastErr, with the position kept; both cleared
// by a later sync that succeeds.
func TestStats(t *testing.T) {
	p, prim := startPrimary(t)
	r := openReplica(t, "", p.URL(), embedded.WithSyncInterval(0))
	if st := r.c.Stats(); st != (embedded.Stats{}) {
		t.Fatalf("before any sync: %+v", st)
	}

	fill(t, prim, "s", 500)
	before := time.Now()
	res := r.sync(t)
	st := r.c.Stats()
	if st.FrameNo != res.FrameNo || st.Syncs != 1 || st.FailedSyncs != 0 || st.FramesApplied != int64(res.FramesSynced) ||
		st.BehindFrames != int64(res.FramesSynced) || res.FramesSynced == 0 || st.BytesReceived < 500*10 ||
		st.LastSync.Before(before) || st.LastSyncDuration <= 0 || st.LastErr != nil {
		t.Fatalf("after a sync of %+v: %+v", res, st)
	}

	again := r.sync(t)
	st2 := r.c.Stats()
	if again.FramesSynced != 0 || st2.Syncs != 2 || st2.BehindFrames != 0 || st2.FramesApplied != st.FramesApplied ||
		st2.FrameNo != st.FrameNo || !st2.LastSync.After(st.LastSync) {
		t.Fatalf("after a sync in step (%+v): %+v", again, st2)
	}

	// A replica that syncs in the background, started with the primary
	// down.
	p.Kill()
	bg := openReplica(t, "", p.URL(), embedded.WithSyncInterval(20*time.Millisecond))
	_, err := r.c.Sync(testCtx(t))
	if err == nil {
		t.Fatal("Sync with the primary down succeeded")
	}
	st3 := r.c.Stats()
	if st3.LastErr == nil || st3.LastErr.Error() != err.Error() || st3.LastErrAt.IsZero() || st3.FailedSyncs != 1 ||
		st3.Syncs != 2 || st3.FrameNo != st.FrameNo || !st3.LastSync.Equal(st2.LastSync) {
		t.Fatalf("after a failed Sync (%v): %+v", err, st3)
	}
	waitStats(t, bg, "a failed background sync", func(st embedded.Stats) bool {
		return st.LastErr != nil && st.FailedSyncs > 0 && st.Syncs == 0
	})

	restartSqld(t, p)
	r.sync(t)
	if st := r.c.Stats(); st.LastErr != nil || !st.LastErrAt.IsZero() || st.Syncs != 3 || st.FailedSyncs != 1 {
		t.Fatalf("after the primary came back: %+v", st)
	}
	// (A sqld killed and started again may serve a new log: the position
	// is the one r reached after it.)
	waitStats(t, bg, "a background sync after the primary came back", func(st embedded.Stats) bool {
		return st.LastErr == nil && st.Syncs > 0 && st.FrameNo == r.c.Stats().FrameNo
	})
}

// waitStats waits up to 20 s for r's Stats to satisfy ok.
func waitStats(t *testing.T, r *replica, what string, ok func(embedded.Stats) bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		st := r.c.Stats()
		if ok(st) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: Stats still %+v", what, st)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
