package localdb

import (
	"bytes"
	"context"
	"database/sql"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/gohrana/libsql/embedded/internal/encrypt"
)

// source is a stand-in primary: a local SQLite database whose pages are
// read with sqlite_dbpage and handed over as commits.
type source struct {
	t    *testing.T
	db   *sql.DB
	prev map[uint32][]byte
	next uint64 // frame numbers given out, for positions
	log  LogID
}

func newSource(t *testing.T) *source {
	t.Helper()
	db, err := sql.Open("sqlite", DSN(filepath.Join(t.TempDir(), "primary.db"), "journal_mode(WAL)", "page_size(4096)"))
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	return &source{t: t, db: db, prev: map[uint32][]byte{}, log: LogID{1, 2, 3}}
}

// series stands for SQLite's generate_series, which modernc.org/sqlite
// does not build: generate_series(1, N) in a test's SQL becomes a
// recursive common table expression.
var series = regexp.MustCompile(`generate_series\(1, (\d+)\)`)

func (s *source) exec(q string, args ...any) {
	s.t.Helper()
	q = series.ReplaceAllString(q, "(WITH RECURSIVE g(value) AS (SELECT 1 UNION ALL SELECT value + 1 FROM g WHERE value < $1) SELECT value FROM g)")
	if _, err := s.db.Exec(q, args...); err != nil {
		s.t.Fatalf("source: %s: %v", q, err)
	}
}

// applyTo commits what the source wrote since its last commit and
// applies it to f, failing the source's test if f refuses it.
func (s *source) applyTo(ctx context.Context, f *File) {
	s.t.Helper()
	if err := f.Apply(ctx, s.commit()); err != nil {
		s.t.Fatal(err)
	}
}

// execAll runs the statements qs on db in order, failing the test at the
// first that fails.
func execAll(t testing.TB, db *sql.DB, qs ...string) {
	t.Helper()
	for _, q := range qs {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// pages returns every page of the source.
func pages(t testing.TB, db *sql.DB) map[uint32][]byte {
	t.Helper()
	rows, err := db.Query("SELECT pgno, data FROM sqlite_dbpage")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	m := map[uint32][]byte{}
	for rows.Next() {
		var pgno uint32
		var data []byte
		if err := rows.Scan(&pgno, &data); err != nil {
			t.Fatal(err)
		}
		m[pgno] = data
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return m
}

// commit returns the pages changed since the last commit, as one Commit.
func (s *source) commit() Commit {
	s.t.Helper()
	cur := pages(s.t, s.db)
	c := Commit{Pages: map[uint32][]byte{}, SizeAfter: uint32(len(cur))}
	for pgno, data := range cur {
		if !bytes.Equal(s.prev[pgno], data) {
			c.Pages[pgno] = data
		}
	}
	s.next += uint64(len(c.Pages))
	c.Pos = Position{Next: s.next, Log: s.log}
	s.prev = cur
	return c
}

// dump is the content of the tables a test checks, as text.
func dump(t testing.TB, db *sql.DB, q string) string {
	t.Helper()
	var s sql.NullString
	if err := db.QueryRow(q).Scan(&s); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return s.String
}

func integrity(t testing.TB, db *sql.DB) string {
	t.Helper()
	return dump(t, db, "PRAGMA integrity_check")
}

// openLocal opens a File and a reader on it.
func openLocal(t *testing.T, path string) (*File, *sql.DB) {
	t.Helper()
	f, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	r, err := sql.Open("sqlite", DSN(path, "query_only(1)", "busy_timeout(5000)"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return f, r
}

// openLocalKey is openLocal of a file encrypted under key.
func openLocalKey(t *testing.T, path, key string) (*File, *sql.DB) {
	t.Helper()
	k, err := encrypt.Load(path, key, true)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(k.Close)
	f, err := OpenKey(context.Background(), path, k)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	r, err := OpenReaders(path, 1, k)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return f, r
}
