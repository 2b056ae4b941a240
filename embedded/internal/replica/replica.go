// Package replica keeps a local file in step with a primary's log: it
// asks for the frames after the local position, applies them a batch at a
// time on commit boundaries, takes a snapshot when the log was compacted,
// and builds a new file from the new log when the primary's log was reset,
// then swaps it in.
package replica

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/gohrana/libsql/embedded/internal/durable"
	"github.com/gohrana/libsql/embedded/internal/encrypt"
	"github.com/gohrana/libsql/embedded/internal/localdb"
	"github.com/gohrana/libsql/embedded/internal/replog"
)

// Readers is the side that reads the local file, which a swap must stop
// and start again.
type Readers interface {
	// Detach stops new local reads, waits for those in flight (within
	// ctx), and closes the connections to the file. On error the readers
	// carry on as before.
	Detach(ctx context.Context) error
	// Attach opens the readers on the file again.
	Attach() error
}

// Config configures a Replicator.
type Config struct {
	Path    string
	Client  *replog.Client
	Logger  *slog.Logger // nil: no logging
	Readers Readers
	// DetachTimeout bounds a swap's wait for the reads in flight.
	DetachTimeout time.Duration
	// Key encrypts the local file, and any file built to replace it (nil:
	// in the clear).
	Key *encrypt.Key
}

// Result is what one Sync did.
type Result struct {
	// FrameNo is the last frame of the primary's log now applied (0 before
	// the first).
	FrameNo uint64
	// Frames is how many frames this Sync applied.
	Frames int
}

// Stats is what the syncs since Open did.
type Stats struct {
	FrameNo          uint64        // the last frame of the primary's log applied (0 before any)
	LastSync         time.Time     // when the last successful sync ended
	LastSyncDuration time.Duration // how long it took
	LastErr          error         // the last failed sync's error, until a later sync succeeds
	LastErrAt        time.Time     // when that sync ended
	Syncs            int64         // syncs that succeeded
	FailedSyncs      int64         // syncs that failed
	FramesApplied    int64         // frames applied by every sync, failed ones included
	LastSyncFrames   int           // frames the last successful sync applied: how far behind it found the file
}

// Replicator owns the local file's writing side. One Sync runs at a time.
type Replicator struct {
	cfg Config
	log *slog.Logger

	startMu sync.Mutex // guards started

	mu    sync.Mutex // one sync at a time; guards the fields below
	file  *localdb.File
	hello *replog.Hello
	prev  uint64 // checksum of the last applied log frame, if chain
	chain bool
	buf   []byte

	applied watch
	// started counts the syncs begun; synced is the count of the last one
	// that succeeded, when it began: a sync that began after a write and
	// succeeded has applied it, whatever became of the log meanwhile.
	started uint64
	synced  watch

	statsMu sync.Mutex // guards stats; never held during a sync
	stats   Stats
}

// Stats returns what the syncs since Open did, and the position applied.
func (r *Replicator) Stats() Stats {
	next, _ := r.applied.get()
	r.statsMu.Lock()
	defer r.statsMu.Unlock()
	st := r.stats
	if next > 0 {
		st.FrameNo = next - 1
	}
	return st
}

// record adds a sync that took from start until now, applied frames and
// ended with err, to the stats.
func (r *Replicator) record(start time.Time, frames int, err error) {
	end := time.Now()
	r.statsMu.Lock()
	defer r.statsMu.Unlock()
	r.stats.FramesApplied += int64(frames)
	if err != nil {
		r.stats.FailedSyncs++
		r.stats.LastErr, r.stats.LastErrAt = err, end
		return
	}
	r.stats.Syncs++
	r.stats.LastSync, r.stats.LastSyncDuration = end, end.Sub(start)
	r.stats.LastSyncFrames = frames
	r.stats.LastErr, r.stats.LastErrAt = nil, time.Time{}
}

// Open opens (or creates) the local file. It sends nothing.
func Open(ctx context.Context, cfg Config) (*Replicator, error) {
	// Spools a crash left behind (a snapshot is applied whole or not at
	// all, so they hold nothing of use).
	if stale, err := filepath.Glob(localdb.SpoolPattern(cfg.Path)); err == nil {
		for _, p := range stale {
			_ = os.Remove(p)
		}
	}
	f, err := localdb.OpenKey(ctx, cfg.Path, cfg.Key)
	if err != nil {
		return nil, err
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if cfg.DetachTimeout <= 0 {
		cfg.DetachTimeout = 5 * time.Second
	}
	r := &Replicator{cfg: cfg, log: log, file: f}
	r.chain = f.Position().Next == 0 // a log's first frame chains from 0
	r.applied.set(f.Position().Next)
	return r, nil
}

// Started returns the number of syncs begun so far.
func (r *Replicator) Started() uint64 {
	r.startMu.Lock()
	defer r.startMu.Unlock()
	return r.started
}

// Synced returns the number (as Started counted it) of the last sync that
// succeeded, and a channel closed when that changes.
func (r *Replicator) Synced() (uint64, <-chan struct{}) { return r.synced.get() }

// Applied returns the next frame_no to apply (the last applied, plus one;
// 0 before any) and a channel closed when that changes.
func (r *Replicator) Applied() (uint64, <-chan struct{}) { return r.applied.get() }

// Close closes the file. A Sync in progress finishes first.
func (r *Replicator) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.file.Close()
}

// Sync applies every frame the primary has beyond the local position.
func (r *Replicator) Sync(ctx context.Context) (Result, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.startMu.Lock()
	r.started++
	gen := r.started
	r.startMu.Unlock()
	start := time.Now()
	frames, err := r.sync(ctx)
	if err == nil {
		r.synced.set(gen)
	}
	r.record(start, frames, err)
	res := Result{Frames: frames}
	if n := r.file.Position().Next; n > 0 {
		res.FrameNo = n - 1
	}
	if err != nil {
		r.log.LogAttrs(ctx, slog.LevelWarn, "embedded: sync failed", slog.Int("frames", frames), slog.Uint64("frame_no", res.FrameNo), slog.Any("error", err))
		return res, err
	}
	if frames > 0 {
		r.log.LogAttrs(ctx, slog.LevelInfo, "embedded: synced", slog.Int("frames", frames), slog.Uint64("frame_no", res.FrameNo), slog.Duration("took", time.Since(start)))
	}
	return res, nil
}

// RestoreNext makes the next Sync write back the primary's pages over
// those the local writes changed, in the transaction of its first commit
// (or in one of its own if there is none): see localdb.File.StartRestore.
// Call it once the local writes are on the primary.
func (r *Replicator) RestoreNext() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.file.StartRestore()
}

// sync is Sync under r.mu.
func (r *Replicator) sync(ctx context.Context) (int, error) {
	n, err := r.syncLog(ctx)
	if err == nil && r.file.Restoring() {
		err = r.file.Restore(ctx)
	}
	return n, err
}

// A pull refused with NO_HELLO applied nothing: the session token of the
// last hello is stale, because sqld restarted or the namespace's config
// changed (the token covers its version), which sqld may do more than once
// while it starts. A sync says hello again, up to maxHellos times, waiting
// helloBackoff more before each after the first (0.05 + 0.1 + ... s).
const (
	maxHellos    = 5
	helloBackoff = 50 * time.Millisecond
)

// sleepCtx waits d, or until ctx ends, which it reports as false.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// syncLog applies the primary's log.
func (r *Replicator) syncLog(ctx context.Context) (int, error) {
	if r.hello == nil {
		if err := r.sayHello(ctx); err != nil {
			return 0, err
		}
	}
	if r.file.Position().Next != 0 && r.file.Position().Log != r.logID() {
		return r.rebootstrap(ctx)
	}
	total := 0
	for hellos := 0; ; {
		n, err := r.pull(ctx, r.file)
		total += n
		switch {
		case errors.Is(err, replog.ErrNoHello) && hellos < maxHellos:
			hellos++
			if hellos > 1 && !sleepCtx(ctx, time.Duration(hellos-1)*helloBackoff) {
				return total, err
			}
			if err := r.sayHello(ctx); err != nil {
				return total, err
			}
			if r.file.Position().Log != r.logID() && r.file.Position().Next != 0 {
				n, err := r.rebootstrap(ctx)
				return total + n, err
			}
		default:
			return total, err
		}
	}
}

func (r *Replicator) logID() localdb.LogID {
	id, _ := localdb.ParseLogID(r.hello.LogID) // checked in sayHello
	return id
}

func (r *Replicator) sayHello(ctx context.Context) error {
	h, err := r.cfg.Client.Hello(ctx)
	if err != nil {
		return err
	}
	if _, err := localdb.ParseLogID(h.LogID); err != nil {
		return &ProtocolError{Msg: err.Error()}
	}
	if r.hello == nil || r.hello.LogID != h.LogID || r.hello.GenerationID != h.GenerationID {
		r.log.LogAttrs(ctx, slog.LevelInfo, "embedded: hello", slog.String("log_id", h.LogID), slog.String("generation", h.GenerationID), slog.Uint64("primary_index", h.ReplicationIndex))
	}
	r.hello = &h
	if pos := r.file.Position(); h.HasReplicationIndex && pos.Next > h.ReplicationIndex+1 && pos.Log == r.logID() {
		// The primary's log ends before the local file: it lost frames
		// (restored from an older copy?). Nothing comes until it passes
		// the local position again.
		r.log.LogAttrs(ctx, slog.LevelWarn, "embedded: the local file is ahead of the primary's log", slog.Uint64("local_next", pos.Next), slog.Uint64("primary_index", h.ReplicationIndex))
	}
	return nil
}

// pull applies batches to f until the primary has no more frames: an
// answer with no frames, or fewer than a full batch's.
func (r *Replicator) pull(ctx context.Context, f *localdb.File) (int, error) {
	pos := f.Position()
	if pos.Next == 0 {
		pos.Log = r.logID()
	}
	a := r.assembler(f, pos.Next)
	total := 0
	for {
		msg, err := r.cfg.Client.BatchLogEntries(ctx, a.next, r.buf)
		if errors.Is(err, replog.ErrNeedSnapshot) {
			if a.pending() {
				return total, &ProtocolError{Msg: "NEED_SNAPSHOT in the middle of a commit"}
			}
			n, err := r.snapshot(ctx, f, pos)
			total += n
			if err != nil {
				return total, err
			}
			pos = f.Position()
			a = newAssembler(pos.Next, 0, false)
			continue
		}
		if err != nil {
			return total, err
		}
		r.buf = msg[:0]
		n := 0
		err = replog.FramesEach(msg, func(data []byte) error {
			fr, err := replog.DecodeFrame(data)
			if err != nil {
				return &ProtocolError{Msg: err.Error()}
			}
			n++
			return a.add(fr)
		})
		if err != nil {
			var de *replog.DecodeError
			if errors.As(err, &de) {
				err = &ProtocolError{Msg: err.Error()}
			}
			return total, err
		}
		if n == 0 {
			if a.pending() {
				return total, &ProtocolError{Msg: fmt.Sprintf("the log ends inside a commit (at frame %d)", a.next)}
			}
			return total, nil
		}
		if a.ready() {
			pages, size, next, sum, frames := a.take()
			pos.Next = next
			if err := f.Apply(ctx, localdb.Commit{Pages: pages, SizeAfter: size, Pos: pos}); err != nil {
				return total, err
			}
			total += frames
			if f == r.file {
				r.prev, r.chain = sum, true
				r.applied.set(next)
			}
			r.log.LogAttrs(ctx, slog.LevelDebug, "embedded: applied a batch", slog.Int("frames", frames), slog.Int("pages", len(pages)), slog.Uint64("next", next))
		}
		a.keep() // r.buf is read into again
		if a.ready() {
			return total, errors.New("embedded: internal error: whole commits left unapplied")
		}
		if n < replog.MaxFramesPerBatch && !a.pending() {
			// sqld ends an answer short of its maximum only at the end of
			// the log: no need to ask again to hear that.
			return total, nil
		}
	}
}

// assembler returns an assembler of the frames from next on for f. The
// checksum chain is known from a log's start, and after a frame applied
// to the file in this process.
func (r *Replicator) assembler(f *localdb.File, next uint64) *assembler {
	if next == 0 {
		return newAssembler(0, 0, true)
	}
	return newAssembler(next, r.prev, f == r.file && r.chain)
}

// Waits between the asks for a snapshot the primary is still writing
// (replog.ErrSnapshotPending): sqld writes a compaction's snapshot in the
// background, and answers UNAVAILABLE until it is there. A sync gives up
// after snapshotPendingMax (the next one asks again), so that a primary
// that never finishes does not hold the replica's lock for good.
const (
	snapshotFirstWait  = 100 * time.Millisecond
	snapshotMaxWait    = time.Second
	snapshotPendingMax = 30 * time.Second
)

// fetchSnapshot is Client.Snapshot from next, asked again, with growing
// waits, while the primary has not finished writing the snapshot (the
// refusal comes before any frame), for up to snapshotPendingMax and
// while ctx lasts.
func (r *Replicator) fetchSnapshot(ctx context.Context, next uint64, f func(data []byte) error) error {
	giveUp := time.Now().Add(snapshotPendingMax)
	wait := snapshotFirstWait
	got := false
	seen := func(data []byte) error {
		got = true
		return f(data)
	}
	for {
		err := r.cfg.Client.Snapshot(ctx, next, seen)
		if got || !errors.Is(err, replog.ErrSnapshotPending) || time.Now().Add(wait).After(giveUp) {
			return err
		}
		r.log.LogAttrs(ctx, slog.LevelInfo, "embedded: the primary's snapshot is not ready yet; asking again", slog.Duration("in", wait))
		if !sleepCtx(ctx, wait) {
			return err
		}
		wait = min(2*wait, snapshotMaxWait)
	}
}

// snapshot applies the snapshot that holds pos.Next to f, in one local
// transaction, through a spool on disk.
func (r *Replicator) snapshot(ctx context.Context, f *localdb.File, pos localdb.Position) (int, error) {
	r.log.LogAttrs(ctx, slog.LevelInfo, "embedded: the log was compacted; loading a snapshot", slog.Uint64("from", pos.Next))
	sp, err := f.NewSpool()
	if err != nil {
		return 0, err
	}
	defer sp.Close()
	var (
		n         int
		maxFrame  uint64
		sizeAfter uint32
		ended     bool
	)
	err = r.fetchSnapshot(ctx, pos.Next, func(data []byte) error {
		fr, err := replog.DecodeFrame(data)
		if err != nil {
			return &ProtocolError{Msg: err.Error()}
		}
		if ended {
			return &ProtocolError{Msg: "a snapshot frame after the one with size_after"}
		}
		if fr.FrameNo < pos.Next {
			return &ProtocolError{Msg: fmt.Sprintf("snapshot frame %d before the offset asked for, %d", fr.FrameNo, pos.Next)}
		}
		if n == 0 || fr.FrameNo > maxFrame {
			maxFrame = fr.FrameNo
		}
		if fr.IsCommit() {
			sizeAfter, ended = fr.SizeAfter, true
		}
		n++
		return sp.Add(fr.PageNo, fr.Page)
	})
	if err != nil {
		return 0, err
	}
	if n == 0 || !ended {
		return 0, &ProtocolError{Msg: fmt.Sprintf("a snapshot of %d frames without size_after", n)}
	}
	pos.Next = maxFrame + 1
	if err := f.ApplySpool(ctx, sp, sizeAfter, pos); err != nil {
		return 0, err
	}
	if f == r.file {
		// The frames after a snapshot do not chain from the checksums in
		// it (sqld starts the next log from its own running checksum).
		r.chain = false
		r.applied.set(pos.Next)
	}
	r.log.LogAttrs(ctx, slog.LevelInfo, "embedded: snapshot applied", slog.Int("pages", sp.Len()), slog.Uint64("next", pos.Next))
	return n, nil
}

// bootstrapPath is where a new file is built when the primary's log was
// reset, beside the file it replaces.
func bootstrapPath(path string) string { return path + "-bootstrap" }

// rebootstrap builds a new file from the primary's new log, beside the
// current one (which readers go on reading), and swaps it in once whole. A
// new file left by an interrupted bootstrap of the same log is carried on.
func (r *Replicator) rebootstrap(ctx context.Context) (int, error) {
	path := bootstrapPath(r.cfg.Path)
	r.log.LogAttrs(ctx, slog.LevelWarn, "embedded: the primary's log was reset; building a new file", slog.String("log_id", r.hello.LogID), slog.String("path", path))
	nf, err := localdb.OpenKey(ctx, path, r.cfg.Key)
	if err == nil && nf.Position().Next != 0 && nf.Position().Log != r.logID() {
		nf.Close()
		err = errors.New("stale")
	}
	if err != nil {
		if err := removeDB(path); err != nil {
			return 0, err
		}
		if nf, err = localdb.OpenKey(ctx, path, r.cfg.Key); err != nil {
			return 0, err
		}
	}
	n, err := r.pull(ctx, nf)
	if err == nil {
		err = nf.Checkpoint(ctx)
	}
	if cerr := nf.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return n, err
	}
	return n, r.swapIn(ctx, path)
}

// swapIn replaces the file with the one at path: the readers stop (the
// reads in flight finish on the old file), the new file is renamed over
// the old one, and the readers start again on it. A reader sees the old
// file or the new one, never a mix.
func (r *Replicator) swapIn(ctx context.Context, path string) error {
	dctx, cancel := context.WithTimeout(ctx, r.cfg.DetachTimeout)
	defer cancel()
	if err := r.cfg.Readers.Detach(dctx); err != nil {
		return fmt.Errorf("embedded: swap to the new file postponed: %w", err)
	}
	defer func() {
		if err := r.cfg.Readers.Attach(); err != nil {
			r.log.LogAttrs(ctx, slog.LevelError, "embedded: reopen the local file", slog.Any("error", err))
		}
	}()
	if err := r.file.Close(); err != nil {
		return err
	}
	for _, suffix := range []string{"-wal", "-shm"} {
		if err := os.Remove(r.cfg.Path + suffix); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	renameErr := os.Rename(path, r.cfg.Path)
	if renameErr == nil {
		renameErr = durable.SyncDir(dirOf(r.cfg.Path))
	}
	f, err := localdb.OpenKey(ctx, r.cfg.Path, r.cfg.Key)
	if err != nil {
		return errors.Join(renameErr, err)
	}
	r.file = f
	r.chain = false
	r.applied.set(f.Position().Next)
	if renameErr == nil {
		r.log.LogAttrs(ctx, slog.LevelInfo, "embedded: swapped in the new file", slog.Uint64("next", f.Position().Next))
	}
	return renameErr
}
