package localdb

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gohrana/libsql/embedded/internal/encrypt"
	"github.com/gohrana/libsql/embedded/internal/readloop"
)

const contentQuery = `SELECT (SELECT group_concat(name || ':' || type, ',') FROM (SELECT name, type FROM sqlite_schema ORDER BY name))
	|| '|' || coalesce((SELECT count(*) || '/' || sum(length(v)) FROM t), '-')`

// TestApplyCommits: the local file follows a primary through inserts,
// updates, an index, DELETE and DROP TABLE (freed pages reused by a new
// table), and a VACUUM that shrinks it, with integrity_check ok and the
// same content and size after each commit.
func TestApplyCommits(t *testing.T) {
	src := newSource(t)
	path := filepath.Join(t.TempDir(), "replica.db")
	f, r := openLocal(t, path)
	ctx := context.Background()

	steps := []struct {
		name string
		sql  []string
	}{
		{"create and insert", []string{"CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT)",
			"INSERT INTO t SELECT value, printf('%0100d', value) FROM generate_series(1, 2000)"}},
		{"update", []string{"UPDATE t SET v = v || 'x' WHERE k % 7 = 0"}},
		{"index", []string{"CREATE INDEX t_v ON t (v)"}},
		{"delete and drop", []string{"DELETE FROM t WHERE k > 500", "CREATE TABLE gone (x)", "INSERT INTO gone SELECT randomblob(3000) FROM generate_series(1, 50)", "DROP TABLE gone"}},
		{"freed pages reused", []string{"CREATE TABLE u (x)", "INSERT INTO u SELECT randomblob(2000) FROM generate_series(1, 40)"}},
		{"vacuum shrinks", []string{"DROP TABLE u", "DELETE FROM t WHERE k > 100", "VACUUM"}},
	}
	var lastSize uint32
	for _, st := range steps {
		for _, q := range st.sql {
			src.exec(q)
		}
		c := src.commit()
		if st.name == "vacuum shrinks" && c.SizeAfter >= lastSize {
			t.Fatalf("VACUUM did not shrink the source: %d pages after %d", c.SizeAfter, lastSize)
		}
		lastSize = c.SizeAfter
		if err := f.Apply(ctx, c); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if got := integrity(t, r); got != "ok" {
			t.Fatalf("%s: integrity_check %q", st.name, got)
		}
		if got, want := dump(t, r, contentQuery), dump(t, src.db, contentQuery); got != want {
			t.Fatalf("%s: local %q, primary %q", st.name, got, want)
		}
		if got := dump(t, r, "PRAGMA page_count"); got != dump(t, src.db, "PRAGMA page_count") {
			t.Fatalf("%s: page_count %s, want %d", st.name, got, c.SizeAfter)
		}
		if f.Position() != c.Pos || f.Size() != c.SizeAfter {
			t.Fatalf("%s: position %+v size %d, want %+v %d", st.name, f.Position(), f.Size(), c.Pos, c.SizeAfter)
		}
		// The file itself has the primary's size, not only its header:
		// a truncation is not cancelled by the pages written with it.
		if err := f.Checkpoint(ctx); err != nil {
			t.Fatal(err)
		}
		if fi, err := os.Stat(path); err != nil || fi.Size() != int64(c.SizeAfter)*PageSize {
			t.Fatalf("%s: the file has %d bytes (%v), want %d pages", st.name, fi.Size(), err, c.SizeAfter)
		}
	}

	// The position is in the file, with the pages.
	want := f.Position()
	f.Close()
	again, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if again.Position() != want || again.Size() != lastSize {
		t.Errorf("reopened at %+v (%d pages), want %+v (%d)", again.Position(), again.Size(), want, lastSize)
	}
}

// TestApplyRefusesBadCommits: a commit that would not leave a valid file
// writes nothing.
func TestApplyRefusesBadCommits(t *testing.T) {
	src := newSource(t)
	src.exec("CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT)")
	src.exec("INSERT INTO t SELECT value, 'v' FROM generate_series(1, 500)")
	f, r := openLocal(t, filepath.Join(t.TempDir(), "replica.db"))
	ctx := context.Background()
	good := src.commit()

	page := func(b byte) []byte { p := make([]byte, PageSize); p[0] = b; return p }
	tests := []struct {
		name string
		c    Commit
	}{
		{"no page 1 in the first commit", Commit{Pages: map[uint32][]byte{2: page(1)}, SizeAfter: 2, Pos: good.Pos}},
		{"page 1 without a header", Commit{Pages: map[uint32][]byte{1: page(1)}, SizeAfter: 1, Pos: good.Pos}},
		{"size_after 0", Commit{Pages: good.Pages, SizeAfter: 0, Pos: good.Pos}},
		{"page past size_after", Commit{Pages: good.Pages, SizeAfter: 2, Pos: good.Pos}},
		{"short page", Commit{Pages: map[uint32][]byte{1: good.Pages[1], 2: {1, 2}}, SizeAfter: 2, Pos: good.Pos}},
		{"no position", Commit{Pages: good.Pages, SizeAfter: good.SizeAfter}},
		{"grows without its last page", Commit{Pages: map[uint32][]byte{1: good.Pages[1]}, SizeAfter: 3, Pos: good.Pos}},
	}
	for _, tt := range tests {
		if err := f.Apply(ctx, tt.c); !errors.Is(err, ErrBadCommit) {
			t.Errorf("%s: error %v, want ErrBadCommit", tt.name, err)
		}
		if f.Position() != (Position{}) {
			t.Fatalf("%s: the file moved to %+v", tt.name, f.Position())
		}
	}
	if err := f.Apply(ctx, good); err != nil {
		t.Fatal(err)
	}
	before := dump(t, r, contentQuery)
	bad := Commit{Pages: map[uint32][]byte{2: page(9)}, SizeAfter: good.SizeAfter + 5, Pos: Position{Next: 999}}
	if err := f.Apply(ctx, bad); !errors.Is(err, ErrBadCommit) {
		t.Errorf("growth without the last page: %v", err)
	}
	if got := dump(t, r, contentQuery); got != before || integrity(t, r) != "ok" || f.Position() != good.Pos {
		t.Errorf("a refused commit changed the file: %q, %+v", got, f.Position())
	}
}

// TestOpenRefusesForeignFile: a database the replica did not write has no
// position; its pages are not the primary's.
func TestOpenRefusesForeignFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "other.db")
	db, err := sql.Open("sqlite", DSN(path))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("CREATE TABLE x (y)"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if _, err := Open(context.Background(), path); !errors.Is(err, errNoStamp) {
		t.Errorf("error %v, want errNoStamp", err)
	}
}

// TestSpoolApply: a snapshot's pages, added in any order and some twice,
// make the same file as the primary's; for an encrypted file the spool on
// disk holds none of them in the clear.
func TestSpoolApply(t *testing.T) {
	const marker = "spool-marker-93c1"
	src := newSource(t)
	src.exec("CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT)")
	src.exec("INSERT INTO t SELECT value, printf('%s%0200d', ?, value) FROM generate_series(1, 3000)", marker)
	all := src.commit()
	for _, encrypted := range []bool{false, true} {
		t.Run(map[bool]string{false: "plaintext", true: "encrypted"}[encrypted], func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "replica.db")
			var f *File
			var r *sql.DB
			if encrypted {
				f, r = openLocalKey(t, path, "spool key")
			} else {
				f, r = openLocal(t, path)
			}
			s, err := f.NewSpool()
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			stale := make([]byte, PageSize)
			for pgno := all.SizeAfter; pgno >= 1; pgno-- {
				if pgno%10 == 0 {
					if err := s.Add(pgno, stale); err != nil { // replaced below
						t.Fatal(err)
					}
				}
				if err := s.Add(pgno, all.Pages[pgno]); err != nil {
					t.Fatal(err)
				}
			}
			if s.Len() != int(all.SizeAfter) {
				t.Fatalf("spool holds %d pages, want %d", s.Len(), all.SizeAfter)
			}
			if err := s.Add(0, stale); !errors.Is(err, ErrBadCommit) {
				t.Errorf("page 0: %v", err)
			}
			spooled, err := os.ReadFile(s.f.Name())
			if err != nil {
				t.Fatal(err)
			}
			if clear := bytes.Contains(spooled, []byte(marker)); clear == encrypted {
				t.Fatalf("marker in the clear in the spool: %v", clear)
			}
			if err := f.ApplySpool(context.Background(), s, all.SizeAfter, all.Pos); err != nil {
				t.Fatal(err)
			}
			if got := integrity(t, r); got != "ok" {
				t.Fatalf("integrity_check %q", got)
			}
			if got, want := dump(t, r, contentQuery), dump(t, src.db, contentQuery); got != want {
				t.Errorf("local %q, primary %q", got, want)
			}
		})
	}
}

// TestReadersNeverTorn: readers on other connections see the sum of
// balances that only move between rows stay the same in every read while
// commits are applied.
func TestReadersNeverTorn(t *testing.T) {
	src := newSource(t)
	src.exec("CREATE TABLE acct (id INTEGER PRIMARY KEY, bal INTEGER, pad TEXT)")
	src.exec("INSERT INTO acct SELECT value, 1000, printf('%0500d', value) FROM generate_series(1, 200)")
	f, r := openLocal(t, filepath.Join(t.TempDir(), "replica.db"))
	ctx := context.Background()
	src.applyTo(ctx, f)
	r.SetMaxOpenConns(4)

	stop := readloop.Start(t, 3, func() (bool, error) {
		var n, sum int64
		if err := r.QueryRow("SELECT count(*), sum(bal) FROM acct").Scan(&n, &sum); err != nil {
			return false, err
		}
		return n == 200 && sum == 200*1000, nil
	})
	deadline := time.Now().Add(time.Second)
	commits := 0
	for i := 0; time.Now().Before(deadline); i++ {
		from, to := i%200+1, (i*7)%200+1
		src.exec("UPDATE acct SET bal = bal - 5 WHERE id = ?", from)
		src.exec("UPDATE acct SET bal = bal + 5 WHERE id = ?", to)
		src.applyTo(ctx, f)
		commits++
	}
	reads, torn := stop()
	t.Logf("%d reads during %d commits", reads, commits)
	if torn != 0 || reads == 0 {
		t.Errorf("%d torn reads of %d", torn, reads)
	}
	if got := integrity(t, r); !strings.EqualFold(got, "ok") {
		t.Errorf("integrity_check %q", got)
	}
}

// BenchmarkApply applies commits of 64 changed pages each.
func BenchmarkApply(b *testing.B) {
	for _, key := range []string{"", "bench key"} {
		b.Run(map[bool]string{false: "plaintext", true: "encrypted"}[key != ""], func(b *testing.B) {
			benchmarkApply(b, key)
		})
	}
}

func benchmarkApply(b *testing.B, key string) {
	path := filepath.Join(b.TempDir(), "replica.db")
	var k *encrypt.Key
	if key != "" {
		var err error
		if k, err = encrypt.Load(path, key, true); err != nil {
			b.Fatal(err)
		}
		defer k.Close()
	}
	f, err := OpenKey(context.Background(), path, k)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	page1 := make([]byte, PageSize)
	copy(page1, "SQLite format 3\x00")
	page1[16], page1[17] = 0x10, 0x00 // 4096
	page1[18], page1[19], page1[21], page1[22], page1[23] = 2, 2, 64, 32, 32
	const pages = 64
	c := Commit{Pages: map[uint32][]byte{1: page1}, SizeAfter: pages}
	for pgno := uint32(2); pgno <= pages; pgno++ {
		c.Pages[pgno] = make([]byte, PageSize)
	}
	b.SetBytes(pages * PageSize)
	for i := 0; b.Loop(); i++ {
		c.Pos = Position{Next: uint64(i+1) * pages}
		if err := f.Apply(context.Background(), c); err != nil {
			b.Fatal(err)
		}
	}
}

// TestApplyRefusesMovedFile: a second writer that applied commits behind
// this File's back makes Apply fail rather than mix two states.
func TestApplyRefusesMovedFile(t *testing.T) {
	src := newSource(t)
	src.exec("CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT)")
	path := filepath.Join(t.TempDir(), "replica.db")
	a, _ := openLocal(t, path)
	ctx := context.Background()
	if err := a.Apply(ctx, src.commit()); err != nil {
		t.Fatal(err)
	}
	b, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	src.exec("INSERT INTO t VALUES (1, 'one')")
	if err := b.Apply(ctx, src.commit()); err != nil {
		t.Fatal(err)
	}
	src.exec("INSERT INTO t VALUES (2, 'two')")
	if err := a.Apply(ctx, src.commit()); !errors.Is(err, ErrMoved) {
		t.Errorf("apply behind another writer: %v, want ErrMoved", err)
	}
}
