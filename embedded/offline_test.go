package embedded_test

import (
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gohrana/libsql/embedded"
	"github.com/gohrana/libsql/internal/sqldproc"
)

// offlineReplica opens a replica with offline writes that records the
// conflicts it is told of.
type conflictLog struct {
	mu   sync.Mutex
	list []embedded.Conflict
}

func (l *conflictLog) add(c embedded.Conflict) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.list = append(l.list, c)
}

func (l *conflictLog) all() []embedded.Conflict {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]embedded.Conflict(nil), l.list...)
}

func openOffline(t testing.TB, path, dsn string, opts ...embedded.Option) (*replica, *conflictLog) {
	t.Helper()
	log := &conflictLog{}
	opts = append([]embedded.Option{embedded.WithOfflineWrites(), embedded.WithSyncInterval(0), embedded.WithConflictHandler(log.add)}, opts...)
	return openReplica(t, path, dsn, opts...), log
}

// transports are the URLs of a primary by each transport the replica
// can write to it with.
func transports(p interface {
	URL() string
	WS() string
}) map[string]string {
	return map[string]string{"http": p.URL(), "ws": p.WS()}
}

// forEachTransport runs test in a subtest per transport of the primary
// (http, then ws), each against a sqld of its own: the test gets the
// server, the primary opened directly and the URL of the transport.
func forEachTransport(t *testing.T, test func(t *testing.T, p *sqldproc.Server, prim *sql.DB, url string)) {
	for _, transport := range []string{"http", "ws"} {
		t.Run(transport, func(t *testing.T) {
			p, prim := startPrimary(t)
			test(t, p, prim, transports(p)[transport])
		})
	}
}

// sameState checks that the replica's local file and the primary hold
// the same rows of table t (count and sums) and that the file is whole.
func sameState(t *testing.T, r *replica, prim *sql.DB, table string) {
	t.Helper()
	q := "SELECT count(*) || ':' || coalesce(sum(rowid), 0) || ':' || coalesce(sum(length(v)), 0) FROM " + table
	if got, want := one[string](t, r.db, q), one[string](t, prim, q); got != want {
		t.Fatalf("local %s, primary %s", got, want)
	}
	if got := one[string](t, r.db, "PRAGMA integrity_check"); got != "ok" {
		t.Fatalf("integrity_check: %s", got)
	}
}

func TestOfflineWritesPushOnce(t *testing.T) {
	p := sqlds.Start(t)
	for name, url := range transports(p) {
		t.Run(name, func(t *testing.T) {
			prim := primaryDB(t, p.URL())
			table := "t_" + name
			mustExec(t, prim, "CREATE TABLE "+table+" (id INTEGER PRIMARY KEY, v TEXT)")
			r, conflicts := openOffline(t, "", url)
			r.sync(t)
			for i := range 5 {
				mustExec(t, r.db, "INSERT INTO "+table+" (id, v) VALUES (?, ?)", i+1, fmt.Sprint("local-", i))
			}
			tx, err := r.db.Begin()
			if err != nil {
				t.Fatal(err)
			}
			for i := 5; i < 15; i++ {
				if _, err := tx.Exec("INSERT INTO "+table+" (id, v) VALUES (?, ?)", i+1, "tx"); err != nil {
					t.Fatal(err)
				}
			}
			if n := one[int](t, r.db, "SELECT count(*) FROM "+table); n != 5 {
				t.Fatalf("a read outside the transaction sees %d rows", n)
			}
			if err := tx.Commit(); err != nil {
				t.Fatal(err)
			}
			if n := one[int](t, r.db, "SELECT count(*) FROM "+table); n != 15 {
				t.Fatalf("local read: %d rows, want 15", n)
			}
			if n := one[int](t, prim, "SELECT count(*) FROM "+table); n != 0 {
				t.Fatalf("the primary has %d rows before the sync", n)
			}
			if st := r.c.Stats(); st.Pending != 6 {
				t.Fatalf("Pending %d, want 6", st.Pending)
			}
			when := time.Date(2026, 12, 2, 17, 30, 0, 5e8, time.FixedZone("x", 7200))
			mustExec(t, r.db, "INSERT INTO "+table+" (id, v) VALUES (?, ?)", 100, when)
			local := one[string](t, r.db, "SELECT v FROM "+table+" WHERE id = 100")
			r.sync(t)
			if got := one[string](t, r.db, "SELECT v FROM "+table+" WHERE id = 100"); got != local {
				t.Fatalf("a time written locally as %q is %q on the primary", local, got)
			}
			mustExec(t, prim, "DELETE FROM "+table+" WHERE id = 100")
			r.sync(t)
			sameState(t, r, prim, table)
			if n := one[int](t, prim, "SELECT count(*) FROM "+table); n != 15 {
				t.Fatalf("the primary has %d rows", n)
			}
			st := r.c.Stats()
			if st.Pending != 0 || st.Pushed != 7 || st.Conflicts != 0 || len(conflicts.all()) != 0 {
				t.Fatalf("stats %+v, conflicts %v", st, conflicts.all())
			}
			// Again: nothing pushed twice.
			r.sync(t)
			sameState(t, r, prim, table)
			mustExec(t, r.db, "UPDATE "+table+" SET v = 'again' WHERE id = 1")
			r.sync(t)
			sameState(t, r, prim, table)
			if v := one[string](t, prim, "SELECT v FROM "+table+" WHERE id = 1"); v != "again" {
				t.Fatalf("v = %q", v)
			}
			_ = errors.New
		})
	}
}

// TestOfflineWritesPrimaryDown: writes with the primary stopped are read
// back locally, survive the Connector's Close and a new one on the file,
// and one Sync once the primary is back applies each once: the local file
// then equals the primary.
func TestOfflineWritesPrimaryDown(t *testing.T) {
	forEachTransport(t, offlinePrimaryDown)
}

func offlinePrimaryDown(t *testing.T, p *sqldproc.Server, prim *sql.DB, url string) {
	fill(t, prim, "t", 2000)
	r, _ := openOffline(t, "", url)
	r.sync(t)
	p.Kill()

	for i := range 20 {
		res := mustExec(t, r.db, "INSERT INTO t (id, v, n) VALUES (?, ?, ?)", 10000+i, "offline", i)
		if id, err := res.LastInsertId(); err != nil || id != int64(10000+i) {
			t.Fatalf("offline INSERT: LastInsertId %d, %v; want %d", id, err, 10000+i)
		}
	}
	mustExec(t, r.db, "UPDATE t SET v = 'changed offline' WHERE id <= 100")
	mustExec(t, r.db, "DELETE FROM t WHERE id > 1900 AND id <= 2000")
	mustExec(t, r.db, "CREATE TABLE made_offline (k TEXT)")
	mustExec(t, r.db, "INSERT INTO made_offline VALUES ('x')")
	if _, err := r.c.Sync(testCtx(t)); err == nil {
		t.Fatal("Sync with the primary stopped succeeded")
	}
	check := func(db *sql.DB) {
		t.Helper()
		if n := one[int](t, db, "SELECT count(*) FROM t"); n != 2000-100+20 {
			t.Fatalf("%d rows locally", n)
		}
		if n := one[int](t, db, "SELECT count(*) FROM t WHERE v = 'changed offline'"); n != 100 {
			t.Fatalf("%d rows changed locally", n)
		}
	}
	check(r.db)
	st := r.c.Stats()
	if st.Pending != 24 || st.LastErr == nil || st.FailedSyncs != 1 {
		t.Fatalf("stats %+v", st)
	}
	path := r.path
	r.close()

	// A new Connector on the file: still there, and more writes.
	r2, _ := openOffline(t, path, url)
	check(r2.db)
	mustExec(t, r2.db, "INSERT INTO t (id, v, n) VALUES (20000, 'second session', 0)")
	path = r2.path
	r2.close()
	r3, conflicts := openOffline(t, path, url)
	if n := one[int](t, r3.db, "SELECT count(*) FROM t WHERE id = 20000"); n != 1 {
		t.Fatal("the second session's write is gone")
	}

	restartSqld(t, p)
	r3.sync(t)
	sameState(t, r3, prim, "t")
	if n := one[int](t, prim, "SELECT count(*) FROM t WHERE v = 'offline'"); n != 20 {
		t.Fatalf("the primary has %d offline rows", n)
	}
	if n := one[int](t, prim, "SELECT count(*) FROM made_offline"); n != 1 {
		t.Fatalf("made_offline has %d rows", n)
	}
	if st := r3.c.Stats(); st.Pending != 0 || st.Pushed != 25 || len(conflicts.all()) != 0 {
		t.Fatalf("stats %+v, conflicts %v", st, conflicts.all())
	}
	// Written again locally after the sync: the file stays right.
	mustExec(t, r3.db, "INSERT INTO t (id, v, n) VALUES (20001, 'after', 0)")
	r3.sync(t)
	sameState(t, r3, prim, "t")
}

// TestOfflineWritesConflicts: a key the primary got from another client
// meanwhile, an UPDATE of a row another client deleted, a write to a table
// the primary dropped: each is reported, the other local transactions
// still apply, in order, and the local file ends as the primary.
func TestOfflineWritesConflicts(t *testing.T) {
	forEachTransport(t, offlineConflicts)
}

func offlineConflicts(t *testing.T, _ *sqldproc.Server, prim *sql.DB, url string) {
	mustExec(t, prim, "CREATE TABLE u (id INTEGER PRIMARY KEY, v TEXT)")
	mustExec(t, prim, "CREATE TABLE gone (id INTEGER PRIMARY KEY)")
	mustExec(t, prim, "INSERT INTO u VALUES (1, 'one'), (2, 'two')")
	r, conflicts := openOffline(t, "", url)
	r.sync(t)

	mustExec(t, r.db, "INSERT INTO u VALUES (10, 'local ten')")    // conflict: the primary gets 10
	mustExec(t, r.db, "INSERT INTO u VALUES (11, 'local eleven')") // applies
	mustExec(t, r.db, "UPDATE u SET v = 'local one' WHERE id = 1") // conflict: 1 deleted
	mustExec(t, r.db, "INSERT INTO gone VALUES (5)")               // conflict: table dropped
	mustExec(t, r.db, "UPDATE u SET v = 'local two' WHERE id = 2") // applies
	// Refused by the primary as a whole batch before it runs any of it
	// (its parser takes no 1_000; a value over 5,000,000 bytes), and at
	// a step (no unistr there): each is a conflict, the others apply.
	mustExec(t, r.db, "INSERT INTO u VALUES (20, 1_000)")
	mustExec(t, r.db, "INSERT INTO u VALUES (12, 'twelve')")
	mustExec(t, r.db, "INSERT INTO u VALUES (21, ?)", strings.Repeat("x", 5_000_001))
	mustExec(t, r.db, "INSERT INTO u VALUES (22, unistr('x'))")
	mustExec(t, r.db, "INSERT INTO u VALUES (13, 'thirteen')")
	mustExec(t, prim, "INSERT INTO u VALUES (10, 'primary ten')")
	mustExec(t, prim, "DELETE FROM u WHERE id = 1")
	mustExec(t, prim, "DROP TABLE gone")

	r.sync(t)
	got := conflicts.all()
	if len(got) != 6 {
		t.Fatalf("%d conflicts: %+v", len(got), got)
	}
	for i, want := range []struct {
		sql  string
		err  string
		rows bool
	}{
		{"INSERT INTO u VALUES (10, 'local ten')", "UNIQUE", false},
		{"UPDATE u SET v = 'local one' WHERE id = 1", "", true},
		{"INSERT INTO gone VALUES (5)", "no such table", false},
		{"INSERT INTO u VALUES (20, 1_000)", "SQL_PARSE_ERROR", false},
		{"INSERT INTO u VALUES (21, ?)", "ARGS_INVALID", false},
		{"INSERT INTO u VALUES (22, unistr('x'))", "unistr", false},
	} {
		c := got[i]
		if len(c.SQL) != 1 || c.SQL[0] != want.sql || c.Err == nil {
			t.Errorf("conflict %d: %+v", i, c)
			continue
		}
		if want.rows != errors.Is(c.Err, embedded.ErrRowsChanged) || !strings.Contains(c.Err.Error(), want.err) {
			t.Errorf("conflict %d: %v", i, c.Err)
		}
	}
	if v := one[string](t, prim, "SELECT group_concat(id || '=' || v, ',') FROM (SELECT * FROM u ORDER BY id)"); v != "2=local two,10=primary ten,11=local eleven,12=twelve,13=thirteen" {
		t.Fatalf("primary: %s", v)
	}
	sameState(t, r, prim, "u")
	if st := r.c.Stats(); st.Pushed != 4 || st.Conflicts != 6 || st.Pending != 0 {
		t.Fatalf("stats %+v", st)
	}
	// The local effect of the conflicts is gone.
	if n := one[int](t, r.db, "SELECT count(*) FROM sqlite_schema WHERE name = 'gone'"); n != 0 {
		t.Fatal("the dropped table is still local")
	}
}

// TestOfflineWritesAnswerLost: a proxy cuts the connection once sqld has
// run the push and begun to answer, over each transport (over WebSocket
// it unmasks the client's frames to find the push); the next Sync applies
// nothing twice, and a conflict the lost push recorded is still reported.
func TestOfflineWritesAnswerLost(t *testing.T) {
	p, prim := startPrimary(t)
	for name := range transports(p) {
		t.Run(name, func(t *testing.T) {
			k, log := "k_"+name, "log_"+name
			mustExec(t, prim, "CREATE TABLE "+k+" (id INTEGER PRIMARY KEY, v TEXT)")
			mustExec(t, prim, "CREATE TABLE "+log+" (v TEXT)") // no key: a second apply would show
			proxy := newCutProxy(t, p.Addr(), "INSERT INTO libsql_offline_writes")
			r, conflicts := openOffline(t, "", transports(proxy)[name])
			r.sync(t)

			mustExec(t, prim, "INSERT INTO "+k+" VALUES (7, 'primary')")
			conflicting := "INSERT INTO " + k + " VALUES (7, 'local')"
			for i := range 10 {
				mustExec(t, r.db, "INSERT INTO "+log+" VALUES (?)", fmt.Sprint("entry ", i))
				if i == 4 {
					mustExec(t, r.db, conflicting)
				}
			}
			// The first batch fails on the conflict; the second, with it
			// recorded, commits, and its answer is cut.
			proxy.cut.Store(proxy.seen.Load() + 2)
			if _, err := r.c.Sync(testCtx(t)); err == nil {
				t.Fatal("the sync whose answer was cut succeeded")
			}
			if proxy.cuts.Load() != 1 {
				t.Fatalf("%d connections cut", proxy.cuts.Load())
			}
			if ws := proxy.wsCuts.Load() == 1; ws != (name == "ws") {
				t.Fatalf("the cut connection was a WebSocket: %v", ws)
			}
			if n := one[int](t, prim, "SELECT count(*) FROM "+log); n != 10 {
				t.Fatalf("the cut push applied %d rows, want 10", n)
			}
			if len(conflicts.all()) != 0 {
				t.Fatal("a conflict reported from a push whose answer was lost")
			}
			r.sync(t)
			if n := one[int](t, prim, "SELECT count(*) FROM "+log); n != 10 {
				t.Fatalf("after the next sync: %d rows, want 10", n)
			}
			sameState(t, r, prim, log)
			got := conflicts.all()
			if len(got) != 1 || got[0].SQL[0] != conflicting || !strings.Contains(got[0].Err.Error(), "UNIQUE") {
				t.Fatalf("conflicts %+v", got)
			}
			if st := r.c.Stats(); st.Pushed != 10 || st.Conflicts != 1 || st.Pending != 0 {
				t.Fatalf("stats %+v", st)
			}
		})
	}
}

// TestOfflineWritesTwoReplicas: two replicas of one primary write at once
// while offline, then both sync: each transaction of both is applied once,
// in each replica's own order.
func TestOfflineWritesTwoReplicas(t *testing.T) {
	p, prim := startPrimary(t)
	mustExec(t, prim, "CREATE TABLE ev (seq INTEGER PRIMARY KEY AUTOINCREMENT, v TEXT, n INTEGER)")
	urls := transports(p)
	a, _ := openOffline(t, "", urls["http"])
	b, _ := openOffline(t, "", urls["ws"])
	a.sync(t)
	b.sync(t)
	const each = 200
	var wg sync.WaitGroup
	for name, r := range map[string]*replica{"a": a, "b": b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				if i%10 == 9 { // some in transactions of two statements
					tx, err := r.db.Begin()
					if err != nil {
						t.Error(err)
						return
					}
					tx.Exec("INSERT INTO ev (v, n) VALUES (?, ?)", name, i)
					tx.Exec("UPDATE ev SET n = n WHERE seq = -1")
					if err := tx.Commit(); err != nil {
						t.Error(err)
						return
					}
					continue
				}
				if _, err := r.db.Exec("INSERT INTO ev (v, n) VALUES (?, ?)", name, i); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	// Both push; the second's pull brings the first's.
	a.sync(t)
	b.sync(t)
	a.sync(t)
	for _, who := range []string{"a", "b"} {
		if n := one[int](t, prim, "SELECT count(DISTINCT n) FROM ev WHERE v = ?", who); n != each {
			t.Fatalf("%s: %d distinct rows on the primary", who, n)
		}
		if n := one[int](t, prim, "SELECT count(*) FROM ev WHERE v = ?", who); n != each {
			t.Fatalf("%s: %d rows on the primary", who, n)
		}
		// In the replica's order: seq grows with n.
		if n := one[int](t, prim, `SELECT count(*) FROM ev x JOIN ev y ON x.v = y.v AND x.seq < y.seq AND x.n > y.n WHERE x.v = ?`, who); n != 0 {
			t.Fatalf("%s: %d pairs out of order", who, n)
		}
	}
	sameState(t, a, prim, "ev")
	sameState(t, b, prim, "ev")
}

// TestOfflineWritesNoTornReads: balances that only move between rows keep
// their total in every local read while the replica transfers locally and
// pushes and pulls every few milliseconds, with another client
// transferring on the primary.
func TestOfflineWritesNoTornReads(t *testing.T) {
	p, prim := startPrimary(t)
	b := newBank(t, prim)
	r, conflicts := openOffline(t, "", p.URL(), embedded.WithSyncInterval(5*time.Millisecond))
	r.sync(t)

	ctx := testCtx(t)
	stop := b.watch(t, r.db, 2)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() { // another client, on the primary
		for i := 0; ; i++ {
			select {
			case <-done:
				return
			default:
			}
			if err := b.transfer(ctx, prim, i); err != nil {
				t.Error(err)
				return
			}
			time.Sleep(3 * time.Millisecond)
		}
	})
	deadline := time.Now().Add(2 * time.Second)
	local := int64(0)
	for i := 0; time.Now().Before(deadline); i++ {
		if err := b.transfer(ctx, r.db, i*3+1); err != nil {
			t.Fatal(err)
		}
		local++
	}
	close(done)
	wg.Wait()
	reads, torn := stop()
	t.Logf("%d local reads during %d local transfers", reads, local)
	if torn != 0 {
		t.Errorf("%d torn reads of %d", torn, reads)
	}
	b.checkSynced(t, r, prim)
	if len(conflicts.all()) != 0 {
		t.Errorf("%d conflicts", len(conflicts.all()))
	}
	if st := r.c.Stats(); st.Pushed != local {
		t.Errorf("pushed %d of %d", st.Pushed, local)
	}
}

// TestOfflineWritesNewFile: a replica that never synced takes writes (a
// local-first app's first start, offline), and its first sync pushes them
// and pulls the primary's whole state.
func TestOfflineWritesNewFile(t *testing.T) {
	p, prim := startPrimary(t)
	fill(t, prim, "theirs", 500)
	r, _ := openOffline(t, "", p.URL())
	mustExec(t, r.db, "CREATE TABLE IF NOT EXISTS mine (id INTEGER PRIMARY KEY, v TEXT)")
	for i := range 10 {
		mustExec(t, r.db, "INSERT INTO mine (v) VALUES (?)", fmt.Sprint("first start ", i))
	}
	if n := one[int](t, r.db, "SELECT count(*) FROM mine"); n != 10 {
		t.Fatalf("%d rows locally", n)
	}
	r.sync(t)
	sameState(t, r, prim, "mine")
	sameState(t, r, prim, "theirs")
}

// TestOfflineWritesNewLogAndSnapshot: local writes pushed to a primary
// whose log was reset (the replica builds a new file and swaps it in,
// the writer with it) or compacted (the pull is a snapshot, applied with
// the restore): the file ends as the primary, and local writes go on.
func TestOfflineWritesNewLogAndSnapshot(t *testing.T) {
	for _, tc := range []struct {
		name, logged string
		args         []string
	}{
		{"new log", "swapped in the new file", nil},
		{"snapshot", "snapshot applied", []string{"--max-log-size", "1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, prim := startPrimary(t, tc.args...)
			fill(t, prim, "t", 500)
			var log logRecorder
			r, conflicts := openOffline(t, "", p.URL(), embedded.WithLogger(slog.New(&log)))
			r.sync(t)
			for i := range 30 {
				mustExec(t, r.db, "INSERT INTO t (id, v, n) VALUES (?, 'local', ?)", 1000+i, i)
			}
			mustExec(t, r.db, "UPDATE t SET v = 'local' WHERE id <= 50")
			if tc.args == nil {
				p.Kill()
				restartSqld(t, p)
			} else {
				for i := range 40 {
					mustExec(t, prim, "UPDATE t SET v = printf('%.*c', 3000, 'x'), n = n + ? WHERE id > 100 AND id <= 110", i)
				}
				time.Sleep(500 * time.Millisecond) // compaction runs in the background
			}
			r.sync(t)
			if log.count(tc.logged) == 0 {
				t.Fatalf("not logged: %q", tc.logged)
			}
			sameState(t, r, prim, "t")
			if n := one[int](t, prim, "SELECT count(*) FROM t WHERE v = 'local'"); n != 80 {
				t.Fatalf("%d local rows on the primary", n)
			}
			mustExec(t, r.db, "INSERT INTO t (id, v, n) VALUES (5000, 'after', 0)")
			r.sync(t)
			sameState(t, r, prim, "t")
			if len(conflicts.all()) != 0 {
				t.Fatalf("conflicts %v", conflicts.all())
			}
		})
	}
}

// TestOfflineWritesVectorAfterReopen: a replica opened again (a new writer
// connection) writes locally to a table with a vector index, and the sync
// pushes the row. The writer used to load the index while the driver's
// libsql_vector_idx was not yet registered, and every such write failed.
func TestOfflineWritesVectorAfterReopen(t *testing.T) {
	p, prim := vectorPrimary(t, 8)
	rng := rand.New(rand.NewPCG(7, 11))
	mustExec(t, prim, "INSERT INTO items VALUES (1, vector32(?))", vecText(randomVec(rng, 8)))
	path := t.TempDir() + "/replica.db"
	r, _ := openOffline(t, path, p.URL())
	r.sync(t)
	r.close()
	r, _ = openOffline(t, path, p.URL())
	q := vecText(randomVec(rng, 8))
	mustExec(t, r.db, "INSERT INTO items VALUES (2, vector32(?))", q)
	r.sync(t)
	if got := ids(t, r, "SELECT id FROM vector_top_k('items_idx', vector32(?), 1)", q); !slices.Equal(got, []int64{2}) {
		t.Errorf("nearest after the sync: %v", got)
	}
	if n := one[int64](t, prim, "SELECT count(*) FROM items"); n != 2 {
		t.Errorf("the primary has %d rows, want 2", n)
	}
}

// TestOfflineWritesVectorTopK: a local write is seen by the next local
// vector_top_k (the replica's decoded copy of the index follows local
// transactions, not only the primary's commits), before and after the
// sync that pushes it.
func TestOfflineWritesVectorTopK(t *testing.T) {
	p, prim := vectorPrimary(t, 8)
	rng := rand.New(rand.NewPCG(5, 25))
	for id := 1; id <= 60; id++ {
		mustExec(t, prim, "INSERT INTO items VALUES (?, vector32(?))", id, vecText(randomVec(rng, 8)))
	}
	r, _ := openOffline(t, "", p.URL())
	r.sync(t)
	q := vecText(randomVec(rng, 8))
	const nearest = "SELECT id FROM vector_top_k('items_idx', vector32(?), 1)"
	before := ids(t, r, nearest, q)
	if len(before) != 1 || before[0] == 1000 {
		t.Fatalf("nearest before the local write: %v", before)
	}
	mustExec(t, r.db, "INSERT INTO items VALUES (1000, vector32(?))", q)
	if got := ids(t, r, nearest, q); !slices.Equal(got, []int64{1000}) {
		t.Errorf("nearest after the local write: %v", got)
	}
	mustExec(t, r.db, "DELETE FROM items WHERE id = ?", before[0])
	if got := ids(t, r, "SELECT id FROM vector_top_k('items_idx', vector32(?), 2)", q); slices.Contains(got, before[0]) {
		t.Errorf("after the local delete of %d: %v", before[0], got)
	}
	r.sync(t)
	if got := ids(t, r, nearest, q); !slices.Equal(got, []int64{1000}) {
		t.Errorf("nearest after the sync: %v", got)
	}
	if n := one[int](t, prim, "SELECT count(*) FROM items WHERE id IN (1000, ?)", before[0]); n != 1 {
		t.Errorf("the primary has %d of the rows 1000 and %d, want 1", n, before[0])
	}
}

// TestOfflineSQL: what cannot be pushed is refused at once, locally, with
// ErrOfflineSQL and the reason, and nothing is queued; a CREATE TRIGGER
// whose body has several statements is one statement, runs offline, and
// works on the primary after the sync.
func TestOfflineSQL(t *testing.T) {
	p, prim := startPrimary(t)
	mustExec(t, prim, "CREATE TABLE t1 (x INTEGER PRIMARY KEY, n INTEGER)")
	mustExec(t, prim, "CREATE TABLE t1_log (x INTEGER, v TEXT)")
	r, conflicts := openOffline(t, "", p.URL())
	r.sync(t)
	for _, q := range []struct{ sql, why string }{
		{"CREATE TEMP VIEW v2 AS SELECT x FROM t1", "TEMP"},
		{"CREATE TEMPORARY TABLE tt (x)", "TEMP"},
		{"CREATE TABLE temp.tt (x)", "TEMP"},
		{"CREATE TEMP TRIGGER tr AFTER INSERT ON t1 BEGIN SELECT 1; END", "TEMP"},
		{"ANALYZE", "ANALYZE"},
		{"ATTACH 'x.db' AS x", "ATTACH"},
		{"VACUUM", "VACUUM"},
		{"BEGIN", "transaction control"},
		{"INSERT INTO t1 VALUES (1, 1); INSERT INTO t1 VALUES (2, 2)", "several statements"},
	} {
		_, err := r.db.ExecContext(testCtx(t), q.sql)
		if !errors.Is(err, embedded.ErrOfflineSQL) || !strings.Contains(err.Error(), q.why) {
			t.Errorf("%s: %v; want ErrOfflineSQL (%s)", q.sql, err, q.why)
		}
	}
	if st := r.c.Stats(); st.Pending != 0 {
		t.Fatalf("%d transactions queued by refused statements", st.Pending)
	}
	mustExec(t, r.db, "CREATE TRIGGER t1r1 AFTER UPDATE ON t1 BEGIN INSERT INTO t1_log VALUES (new.x, 'a'); INSERT INTO t1_log VALUES (new.x, 'b'); END;")
	mustExec(t, r.db, "INSERT INTO t1 VALUES (1, 0)")
	mustExec(t, r.db, "UPDATE t1 SET n = 1 WHERE x = 1")
	if n := one[int](t, r.db, "SELECT count(*) FROM t1_log"); n != 2 {
		t.Fatalf("the trigger ran locally: %d rows", n)
	}
	r.sync(t)
	if c := conflicts.all(); len(c) != 0 {
		t.Fatalf("conflicts: %+v", c)
	}
	mustExec(t, prim, "UPDATE t1 SET n = 2 WHERE x = 1")
	if n := one[int](t, prim, "SELECT count(*) FROM t1_log"); n != 4 {
		t.Fatalf("the trigger on the primary: %d log rows, want 4", n)
	}
	r.sync(t)
	sameState(t, r, prim, "t1_log")
}

// TestOfflineWritesEmptyPrimary: a replica of a primary whose log is
// still empty (a new database: its file has no position yet) writes
// offline, is closed and opened again with its writes (the file was once
// refused as not a replica's), and pushes them.
func TestOfflineWritesEmptyPrimary(t *testing.T) {
	p := sqlds.Start(t)
	r, _ := openOffline(t, "", p.URL())
	r.sync(t)
	mustExec(t, r.db, "CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)")
	mustExec(t, r.db, "INSERT INTO t (v) VALUES ('one'), ('two')")
	path := r.path
	r.close()
	r, conflicts := openOffline(t, path, p.URL())
	if n := one[int](t, r.db, "SELECT count(*) FROM t"); n != 2 {
		t.Fatalf("after reopening: %d rows", n)
	}
	mustExec(t, r.db, "INSERT INTO t (v) VALUES ('three')")
	r.sync(t)
	prim := primaryDB(t, p.URL())
	sameState(t, r, prim, "t")
	if n := one[int](t, prim, "SELECT count(*) FROM t"); n != 3 || len(conflicts.all()) != 0 {
		t.Fatalf("the primary has %d rows; conflicts %v", n, conflicts.all())
	}
	r.close()
	r, _ = openOffline(t, path, p.URL())
	sameState(t, r, prim, "t")
}

// TestOfflinePush: Push sends what waits, one request per batch when the
// primary's record is where the replica left it, and pulls nothing; the
// local file keeps its writes until the next Sync brings the primary's
// state. Nothing is pushed twice.
func TestOfflinePush(t *testing.T) {
	p, prim := startPrimary(t)
	mustExec(t, prim, "CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)")
	proxy := newCutProxy(t, p.Addr(), "INSERT INTO libsql_offline_writes")
	r, conflicts := openOffline(t, "", proxy.URL())
	r.sync(t)
	for round := range 3 {
		for i := range 50 {
			mustExec(t, r.db, "INSERT INTO t (id, v) VALUES (?, ?)", round*100+i, "local")
		}
		mustExec(t, prim, "INSERT INTO t (id, v) VALUES (?, 'primary')", 1000+round)
		requests := proxy.seen.Load()
		if err := r.c.Push(testCtx(t)); err != nil {
			t.Fatal(err)
		}
		if got := proxy.seen.Load() - requests; got != 1 {
			t.Errorf("round %d: %d push requests, want 1", round, got)
		}
		if st := r.c.Stats(); st.Pending != 0 || st.Pushed != int64(50*(round+1)) {
			t.Fatalf("round %d: stats %+v", round, st)
		}
		if n := one[int](t, prim, "SELECT count(*) FROM t WHERE v = 'local'"); n != 50*(round+1) {
			t.Fatalf("round %d: the primary has %d local rows", round, n)
		}
		// The local file shows its own writes, not the primary's since.
		if n := one[int](t, r.db, "SELECT count(*) FROM t"); n != 50*(round+1) {
			t.Fatalf("round %d: the local file has %d rows", round, n)
		}
		if err := r.c.Push(testCtx(t)); err != nil {
			t.Fatal(err)
		}
	}
	if n := one[int](t, prim, "SELECT count(*) FROM t"); n != 153 {
		t.Fatalf("the primary has %d rows, want 153", n)
	}
	r.sync(t)
	sameState(t, r, prim, "t")
	if len(conflicts.all()) != 0 {
		t.Fatalf("conflicts %v", conflicts.all())
	}
	plain := openReplica(t, "", p.URL())
	if err := plain.c.Push(testCtx(t)); !errors.Is(err, embedded.ErrNoOfflineWrites) {
		t.Fatalf("Push without offline writes: %v", err)
	}
}
