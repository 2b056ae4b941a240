package replica

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/binary"
	"path/filepath"
	"testing"

	"github.com/gohrana/libsql/embedded/internal/localdb"
	"github.com/gohrana/libsql/embedded/internal/replog"
)

// logWriter crafts a primary's log from a local SQLite database: each
// commit is the pages that changed since the last, as frames with a valid
// checksum chain, the last one carrying size_after.
type logWriter struct {
	t     *testing.T
	db    *sql.DB
	prev  map[uint32][]byte
	next  uint64
	chain uint64
}

func (w *logWriter) exec(q string) {
	w.t.Helper()
	if _, err := w.db.Exec(q); err != nil {
		w.t.Fatalf("%s: %v", q, err)
	}
}

// commit returns a Frames message with the frames of one commit.
func (w *logWriter) commit() []byte {
	w.t.Helper()
	rows, err := w.db.Query("SELECT pgno, data FROM sqlite_dbpage ORDER BY pgno")
	if err != nil {
		w.t.Fatal(err)
	}
	cur := map[uint32][]byte{}
	var changed []uint32
	for rows.Next() {
		var pgno uint32
		var data []byte
		if err := rows.Scan(&pgno, &data); err != nil {
			w.t.Fatal(err)
		}
		cur[pgno] = data
		if !bytes.Equal(w.prev[pgno], data) {
			changed = append(changed, pgno)
		}
	}
	rows.Close()
	var msg []byte
	for i, pgno := range changed {
		f := replog.Frame{FrameNo: w.next, PageNo: pgno, Page: cur[pgno]}
		if i == len(changed)-1 {
			f.SizeAfter = uint32(len(cur))
		}
		f.Checksum = replog.NextChecksum(w.chain, f.Page)
		w.chain = f.Checksum
		w.next++
		data := replog.EncodeFrame(nil, f)
		msg = append(msg, 0x0a)                              // Frames.frames
		msg = binary.AppendUvarint(msg, uint64(len(data)+3)) // a Frame
		msg = append(msg, 0x0a)                              // Frame.data
		msg = binary.AppendUvarint(msg, uint64(len(data)))
		msg = append(msg, data...)
	}
	w.prev = cur
	return msg
}

// TestSyncShrinkingFile: a commit whose size_after is below the file's
// size (a VACUUM on the primary; sqld refuses VACUUM over Hrana, so the
// frames are crafted) truncates the local file first, and the result
// checks ok with the primary's content.
func TestSyncShrinkingFile(t *testing.T) {
	src, err := sql.Open("sqlite", localdb.DSN(filepath.Join(t.TempDir(), "src.db"), "journal_mode(WAL)"))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	src.SetMaxOpenConns(1)
	w := &logWriter{t: t, db: src, prev: map[uint32][]byte{}}
	w.exec("CREATE TABLE t (k INTEGER PRIMARY KEY, v BLOB)")
	w.exec("INSERT INTO t WITH RECURSIVE g(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM g WHERE x < 300) SELECT x, randomblob(1000) FROM g")
	grow := w.commit()
	grown := len(w.prev)
	w.exec("DELETE FROM t WHERE k > 20")
	w.exec("VACUUM")
	shrink := w.commit()

	srv := fakePrimaryOf(t, [][]byte{grow, shrink})
	path := filepath.Join(t.TempDir(), "r.db")
	r, err := Open(context.Background(), Config{Path: path, Client: replog.NewClient(replog.Config{URL: srv.URL, Client: srv.Client()}), Readers: noReaders{}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	// A batch short of MaxFramesPerBatch ends a sync (as at the end of
	// sqld's log): the fake's two batches take two.
	var res Result
	for range 2 {
		if res, err = r.Sync(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	want := uint32(len(w.prev))
	if int(want) >= grown {
		t.Fatalf("VACUUM left %d pages of %d: nothing to truncate", want, grown)
	}
	if r.file.Size() != want || res.FrameNo != w.next-1 {
		t.Fatalf("after the shrink: %d pages (want %d), frame %d (want %d)", r.file.Size(), want, res.FrameNo, w.next-1)
	}
	local, err := sql.Open("sqlite", localdb.DSN(path))
	if err != nil {
		t.Fatal(err)
	}
	defer local.Close()
	var check string
	var n, pages int
	if err := local.QueryRow("SELECT (SELECT count(*) FROM t), (SELECT * FROM pragma_page_count), (SELECT * FROM pragma_integrity_check)").Scan(&n, &pages, &check); err != nil {
		t.Fatal(err)
	}
	if n != 20 || uint32(pages) != want || check != "ok" {
		t.Errorf("local file: %d rows, %d pages, integrity_check %q", n, pages, check)
	}
}
