package embedded_test

// The randomized differential tester (embedded/internal/difftest): random
// SQL, syncs and faults on replicas of a sqld of its own, every local
// answer held against a shadow SQLite database, every synced file against
// the primary, and each replica's transactions on the primary against
// what it committed and what it was told were conflicts.
//
//	go test -run TestDifferential -difftest.duration 30m  # longer
//	go test -run TestDifferential -difftest.seed 42 -difftest.scenario two-offline
//
// A failure prints the seed and writes the run's op log, shrunk when the
// scenario replays deterministically, to testdata/difftest/, where
// TestDifferentialRegressions replays every file.

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gohrana/libsql"
	"github.com/gohrana/libsql/embedded"
	"github.com/gohrana/libsql/embedded/internal/difftest"
	"github.com/gohrana/libsql/embedded/internal/encrypt"
	"github.com/gohrana/libsql/embedded/internal/localdb"
	"github.com/gohrana/libsql/internal/sqldproc"
	"github.com/gohrana/libsql/sqlscan"
)

var (
	diffDuration = flag.Duration("difftest.duration", 60*time.Second, "how long TestDifferential runs, over all its scenarios")
	diffSeed     = flag.Uint64("difftest.seed", 0, "TestDifferential's seed (0: from the clock)")
	diffOnly     = flag.String("difftest.scenario", "", "run only this scenario of TestDifferential")
	diffShrink   = flag.Duration("difftest.shrink", 2*time.Minute, "how long a failure's reproduction is shrunk")
	diffFile     = flag.String("difftest.file", "", "the op log TestDifferentialShrink shrinks in place")
	diffInterval = flag.Duration("difftest.interval", 0, "the background sync interval of the actors that have one (0: each scenario's)")
)

// A diffScenario is a setup of actors the tester runs.
type diffScenario struct {
	name   string
	actors []difftest.ActorSpec
	// writer: a goroutine writes to the primary's shared tables all
	// along, not in the op log's order.
	writer bool
	// faults: the primary is killed and started again now and then.
	faults bool
	ws     bool // the replicas reach the primary over WebSocket
}

// deterministic reports whether the scenario's op log replays the same:
// no background sync, no writer goroutine.
func (s diffScenario) deterministic() bool {
	if s.writer {
		return false
	}
	for _, a := range s.actors {
		if a.Interval > 0 {
			return false
		}
	}
	return true
}

var diffScenarios = []diffScenario{
	{name: "offline", actors: []difftest.ActorSpec{{Name: "a", Kind: "offline"}}, faults: true},
	{name: "offline-bg-writer", actors: []difftest.ActorSpec{{Name: "a", Kind: "offline", Interval: 25 * time.Millisecond}}, writer: true, faults: true},
	{name: "two-offline", actors: []difftest.ActorSpec{{Name: "a", Kind: "offline"}, {Name: "b", Kind: "offline"}, {Name: "p", Kind: "direct"}}, ws: true},
	{name: "replica-bg-writer", actors: []difftest.ActorSpec{{Name: "a", Kind: "replica", Interval: 40 * time.Millisecond}}, writer: true},
	{name: "offline-encrypted", actors: []difftest.ActorSpec{{Name: "a", Kind: "offline", Encrypted: true}, {Name: "b", Kind: "replica"}}},
}

// writerActor names the writer goroutine in the op log.
const writerActor = "w"

// sharedNS is the namespace of the tables every actor writes; an actor's
// own are its name and "_".
const sharedNS = "s_"

func TestDifferential(t *testing.T) {
	seed := *diffSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	var chosen []diffScenario
	seeds := map[string]uint64{}
	for i, sc := range diffScenarios {
		if *diffOnly == "" || sc.name == *diffOnly {
			chosen = append(chosen, sc)
			seeds[sc.name] = seed + uint64(i)
		}
	}
	if len(chosen) == 0 {
		t.Fatalf("no scenario %q", *diffOnly)
	}
	each := *diffDuration / time.Duration(len(chosen))
	bin := sqldproc.Binary(t, "LIBSQL_EMBEDDED_SQLD")
	for _, sc := range chosen {
		t.Run(sc.name, func(t *testing.T) {
			s := seeds[sc.name]
			t.Logf("seed %d (-difftest.seed %d -difftest.scenario %s)", s, seed, sc.name)
			r := newDiffRun(t, bin, sc, s)
			defer r.close()
			r.generate(time.Now().Add(each))
			if r.failure == nil {
				r.finish()
			}
			t.Logf("%d ops, %d compared, %d syncs checked, %d conflicts, %d faults", len(r.script.Ops), r.compared, r.syncs, r.conflicts(), r.faults)
			if r.failure != nil {
				r.report(t, bin, sc, s)
			}
		})
	}
}

// TestDifferentialRegressions replays every op log of testdata/difftest:
// the shrunk failures of earlier runs, and the cases of issue 32.
func TestDifferentialRegressions(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "difftest", "*.txt"))
	if len(files) == 0 {
		t.Fatal("no op logs in testdata/difftest")
	}
	bin := sqldproc.Binary(t, "LIBSQL_EMBEDDED_SQLD")
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txt"), func(t *testing.T) {
			t.Parallel()
			f, err := os.Open(file)
			if err != nil {
				t.Fatal(err)
			}
			s, err := difftest.Parse(f)
			f.Close()
			if err != nil {
				t.Fatal(err)
			}
			if err := replayScript(t.Context(), t, bin, s); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestDifferentialShrink shrinks the op log -difftest.file names, in
// place, for up to -difftest.shrink: a failure's reproduction that
// TestDifferential did not shrink far enough.
func TestDifferentialShrink(t *testing.T) {
	if *diffFile == "" {
		t.Skip("-difftest.file names no op log")
	}
	data, err := os.ReadFile(*diffFile)
	if err != nil {
		t.Fatal(err)
	}
	s, err := difftest.Parse(strings.NewReader(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	bin := sqldproc.Binary(t, "LIBSQL_EMBEDDED_SQLD")
	first := replayScript(t.Context(), t, bin, s)
	if first == nil {
		t.Fatal("the op log does not fail")
	}
	want := failureText(first)
	shrunk := difftest.Shrink(s, func(c *difftest.Script) bool {
		err := replayScript(t.Context(), t, bin, c)
		return err != nil && failureText(err) == want
	}, time.Now().Add(*diffShrink))
	shrunk.Comments = append(shrunk.Comments, fmt.Sprintf("shrunk again to %d ops", len(shrunk.Ops)))
	if err := os.WriteFile(*diffFile, []byte(shrunk.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d ops of %d left, failing with %s", len(shrunk.Ops), len(s.Ops), want)
}

// replayScript runs the script's ops in order on a new sqld and new
// replicas, with every check; it returns the first failure.
func replayScript(ctx context.Context, tb testing.TB, bin string, s *difftest.Script) error {
	sc := diffScenario{name: "replay", actors: s.Actors}
	// An audit table only where the ops use it: a table more on the
	// primary changes its schema cookie and root pages, which a case
	// may depend on.
	audit := func(a *diffActor) bool {
		return slices.ContainsFunc(s.Ops, func(op difftest.Op) bool { return strings.Contains(op.SQL, a.auditTable()) })
	}
	r := newDiffRunCtx(ctx, tb, bin, sc, 0, audit)
	defer r.close()
	if r.failure != nil {
		return r.failure
	}
	for _, op := range s.Ops {
		if r.step(op); r.failure != nil {
			return r.failure
		}
	}
	if r.finish(); r.failure != nil {
		return r.failure
	}
	return nil
}

// diffRun is one run of a scenario.
type diffRun struct {
	tb     testing.TB
	ctx    context.Context
	bin    string
	sc     diffScenario
	srv    *sqldproc.Server
	prim   *sql.DB
	dir    string
	actors []*diffActor
	gen    *difftest.Gen
	seed   uint64

	// world: the ops of the writer goroutine hold it shared; the checks
	// of a sync and the primary's faults hold it alone, so that nothing
	// writes to the primary while a file is held against it.
	world sync.RWMutex
	down  atomic.Bool // the primary is killed

	logMu   sync.Mutex
	script  *difftest.Script
	failure error

	compared, syncs, faults int
	stopWriter              func()
	// generated: the ops are the generator's, whose SQL means the same on
	// the primary, so a transaction on the actor's own tables alone must
	// never be refused.
	generated bool
}

// diffActor is an actor and, for a replica, its local state.
type diffActor struct {
	spec    difftest.ActorSpec
	ns      string
	path    string
	c       *embedded.Connector
	db      *sql.DB
	shadow  *sql.DB
	shadowN int
	key     *encrypt.Key // the checks' key of an encrypted file, once loaded
	tx      *sql.Tx      // the local transaction, and the shadow's
	stx     *sql.Tx
	txNS    string
	// txWide: the open transaction ran a statement whose outcome depends
	// on other actors' objects (one on shared tables, an ALTER TABLE), or
	// on a tainted one.
	txWide bool
	// txNames: the actor's own objects the open transaction names.
	txNames []string
	// tainted: own objects that a write the primary may refuse (a wide
	// transaction's, or an autocommit statement on other actors' objects)
	// has named since the last sync: until a sync brings the primary's
	// state back, a later write that names one may be refused too (it
	// may depend on what the refused write did locally).
	tainted map[string]bool

	// The audit: each transaction of a replica adds its sequence number
	// to the table ns+"audit" before it commits.
	audited bool
	// unsure: the shadow may no longer hold the actor's state (a write
	// whose outcome is unknown, or that went its own way on a table
	// another actor writes); nothing is compared until the next sync
	// makes the shadow a copy of the file again.
	unsure    bool
	seq       int64
	txSeq     int64 // the open transaction's, once its audit row is in
	committed map[int64]bool
	shared    map[int64]bool // the committed ones that wrote shared tables
	cmu       sync.Mutex
	conflicts []embedded.Conflict
}

// exact reports whether the actor's local file changes only by its own
// ops (a replica with offline writes and no background sync), so that
// each of its answers must equal its shadow's, whatever tables it reads.
func (a *diffActor) exact() bool { return a.spec.Kind == "offline" && a.spec.Interval == 0 }

func (a *diffActor) replica() bool { return a.spec.Kind != "direct" }

func (a *diffActor) auditTable() string { return a.ns + "audit" }

func newDiffRun(tb testing.TB, bin string, sc diffScenario, seed uint64) *diffRun {
	return newDiffRunCtx(tb.(*testing.T).Context(), tb, bin, sc, seed, func(*diffActor) bool { return true })
}

// newDiffRunCtx starts a run: a sqld, the audit tables of the actors
// audit says, and the replicas, synced.
func newDiffRunCtx(ctx context.Context, tb testing.TB, bin string, sc diffScenario, seed uint64, audit func(*diffActor) bool) *diffRun {
	r := &diffRun{tb: tb, ctx: ctx, bin: bin, sc: sc, seed: seed, gen: difftest.NewGen(seed),
		script: &difftest.Script{Actors: sc.actors, Comments: []string{fmt.Sprintf("scenario %s, seed %d", sc.name, seed)}}}
	if sc.writer {
		// The writer goroutine's ops are in the log as actor w's.
		r.script.Actors = append(slices.Clone(sc.actors), difftest.ActorSpec{Name: writerActor, Kind: "direct"})
	}
	dir, err := os.MkdirTemp("", "difftest-")
	if err != nil {
		r.failure = err
		return r
	}
	r.dir = dir
	if err := os.Mkdir(filepath.Join(dir, "primary"), 0o755); err != nil {
		r.failure = err
		return r
	}
	r.srv, err = sqldproc.Start(ctx, sqldproc.Config{Bin: bin, Dir: filepath.Join(dir, "primary")})
	if err != nil {
		r.failure = err
		return r
	}
	r.prim, err = sql.Open(libsql.DriverName, r.srv.URL())
	if err != nil {
		r.failure = err
		return r
	}
	for _, spec := range sc.actors {
		a := &diffActor{spec: spec, ns: spec.Name + "_", path: filepath.Join(dir, spec.Name+".db"),
			committed: map[int64]bool{}, shared: map[int64]bool{}}
		r.actors = append(r.actors, a)
		if !a.replica() || !audit(a) {
			continue
		}
		a.audited = true
		if _, err := r.prim.ExecContext(ctx, "CREATE TABLE "+a.auditTable()+" (seq INTEGER)"); err != nil {
			r.failure = err
			return r
		}
	}
	for _, a := range r.actors {
		if a.replica() {
			if err := r.open(a); err != nil {
				r.failure = err
				return r
			}
			if _, err := a.c.Sync(ctx); err != nil {
				r.failure = fmt.Errorf("%s: the first sync: %w", a.spec.Name, err)
				return r
			}
			if err := r.resetShadow(a); err != nil {
				r.failure = err
				return r
			}
		}
	}
	if sc.writer {
		r.startWriter()
	}
	return r
}

func (r *diffRun) url() string {
	if r.sc.ws {
		return r.srv.WS()
	}
	return r.srv.URL()
}

// open opens a's replica.
func (r *diffRun) open(a *diffActor) error {
	interval := a.spec.Interval
	if interval > 0 && *diffInterval > 0 {
		interval = *diffInterval
	}
	opts := []embedded.Option{embedded.WithSyncInterval(interval), embedded.WithRequestTimeout(10 * time.Second)}
	if a.spec.Kind == "offline" {
		opts = append(opts, embedded.WithOfflineWrites(), embedded.WithConflictHandler(func(c embedded.Conflict) {
			a.cmu.Lock()
			defer a.cmu.Unlock()
			a.conflicts = append(a.conflicts, c)
		}))
	}
	if a.spec.Encrypted {
		opts = append(opts, embedded.WithEncryption(encryptionKey(a)))
	}
	c, err := embedded.NewConnector(a.path, r.url(), opts...)
	if err != nil {
		return fmt.Errorf("%s: open: %w", a.spec.Name, err)
	}
	a.c, a.db = c, sql.OpenDB(c)
	a.db.SetMaxOpenConns(1)
	return nil
}

func (a *diffActor) closeReplica() error {
	if a.tx != nil {
		a.tx.Rollback()
		a.stx.Rollback()
		a.tx, a.stx = nil, nil
	}
	err := a.db.Close()
	return errors.Join(err, a.c.Close())
}

// resetShadow makes a's shadow a new copy of a's local file, which a
// check has just held equal to the primary.
func (r *diffRun) resetShadow(a *diffActor) error {
	if a.shadow != nil {
		a.shadow.Close()
	}
	a.shadowN++
	path := filepath.Join(r.dir, fmt.Sprintf("%s-shadow-%d.db", a.spec.Name, a.shadowN))
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=synchronous(OFF)&_pragma=journal_mode(MEMORY)")
	if err != nil {
		return err
	}
	db.SetMaxOpenConns(1)
	a.shadow = db
	file, err := r.file(a)
	if err != nil {
		return err
	}
	defer file.Close()
	if err := difftest.Copy(r.ctx, file, db); err != nil {
		return fmt.Errorf("%s: the shadow: %w", a.spec.Name, err)
	}
	return nil
}

func (r *diffRun) close() {
	if r.stopWriter != nil {
		r.stopWriter()
	}
	for _, a := range r.actors {
		if a.c != nil {
			a.closeReplica()
		}
		if a.shadow != nil {
			a.shadow.Close()
		}
		if a.key != nil {
			a.key.Close()
		}
	}
	if r.prim != nil {
		r.prim.Close()
	}
	if r.srv != nil {
		r.srv.Close()
	}
	if r.dir != "" {
		os.RemoveAll(r.dir)
	}
}

func (r *diffRun) fail(op int, format string, args ...any) {
	if r.failure == nil {
		r.failure = fmt.Errorf("op %d: %s", op, fmt.Sprintf(format, args...))
	}
}

func (r *diffRun) record(op difftest.Op) int {
	r.logMu.Lock()
	defer r.logMu.Unlock()
	r.script.Ops = append(r.script.Ops, op)
	return len(r.script.Ops) - 1
}

func (r *diffRun) conflicts() int {
	n := 0
	for _, a := range r.actors {
		a.cmu.Lock()
		n += len(a.conflicts)
		a.cmu.Unlock()
	}
	return n
}

// conflictNotes says, for a failure that does not replay, which conflicts
// each actor was told of: the background work that led to it.
func (r *diffRun) conflictNotes() []string {
	var out []string
	for _, a := range r.actors {
		a.cmu.Lock()
		out = append(out, fmt.Sprintf("%s was told of %d conflicts", a.spec.Name, len(a.conflicts)))
		for _, c := range a.conflicts[max(0, len(a.conflicts)-5):] {
			out = append(out, fmt.Sprintf("  conflict %d (%d statements): %v", c.ID, len(c.SQL), c.Err))
		}
		a.cmu.Unlock()
	}
	return out
}

// generate runs random ops until the deadline or a failure.
func (r *diffRun) generate(deadline time.Time) {
	r.generated = true
	restartIn := 0
	for r.failure == nil && time.Now().Before(deadline) && r.ctx.Err() == nil {
		if r.sc.faults {
			switch {
			case r.down.Load():
				if restartIn--; restartIn <= 0 {
					r.step(difftest.Op{Actor: difftest.ActorPrimary, Kind: difftest.OpRestart})
				}
			case r.gen.Chance(0.002):
				r.step(difftest.Op{Actor: difftest.ActorPrimary, Kind: difftest.OpKill})
				restartIn = 5 + r.gen.Intn(40)
			}
		}
		a := r.actors[r.gen.Intn(len(r.actors))]
		if op, ok := r.next(a); ok {
			r.step(op)
		}
	}
}

// next returns a random op for a.
func (r *diffRun) next(a *diffActor) (difftest.Op, bool) {
	op := difftest.Op{Actor: a.spec.Name}
	if !a.replica() {
		st, ok := r.directStatement()
		if !ok {
			return op, false
		}
		op.Kind, op.SQL, op.Args = difftest.OpExec, st.SQL, st.Args
		return op, true
	}
	if a.tx != nil {
		switch n := r.gen.Intn(100); {
		case n < 72:
		case n < 80 && a.txSeq == 0:
			a.seq++
			op.Kind, op.SQL, op.Args = difftest.OpExec, "INSERT INTO "+a.auditTable()+" (seq) VALUES (?)", []any{a.seq}
			return op, true
		case n < 94 && a.txSeq != 0:
			op.Kind = difftest.OpCommit
			return op, true
		case n >= 94:
			op.Kind = difftest.OpRollback
			return op, true
		}
		return r.randomStatement(a, op, a.txNS)
	}
	switch n := r.gen.Intn(1000); {
	case n < 60:
		a.txNS = r.pickNS(a)
		op.Kind = difftest.OpBegin
		return op, true
	case n < 100 && !r.primaryTxOpen(a):
		op.Kind = difftest.OpSync
		return op, true
	case n < 105:
		op.Kind = difftest.OpReopen
		return op, true
	case n < 115 && a.spec.Kind == "offline" && !r.primaryTxOpen(a):
		op.Kind = difftest.OpPush
		return op, true
	}
	return r.randomStatement(a, op, r.pickNS(a))
}

// randomStatement makes op a random statement of a in ns.
func (r *diffRun) randomStatement(a *diffActor, op difftest.Op, ns string) (difftest.Op, bool) {
	st, err := r.statement(a, ns)
	if err != nil {
		r.fail(len(r.script.Ops), "%s: the shadow's schema: %v", a.spec.Name, err)
		return op, false
	}
	op.SQL, op.Args = st.SQL, st.Args
	op.Kind = difftest.OpExec
	if st.Read {
		op.Kind = difftest.OpQuery
	}
	return op, true
}

// primaryTxOpen reports whether an actor but a holds a transaction on the
// primary: a push would wait for its lock until sqld times it out (5 s).
func (r *diffRun) primaryTxOpen(a *diffActor) bool {
	return slices.ContainsFunc(r.actors, func(x *diffActor) bool { return x != a && x.spec.Kind == "replica" && x.tx != nil })
}

// shared reports whether the scenario has tables every actor writes.
func (r *diffRun) shared() bool { return len(r.actors) > 1 || r.sc.writer }

func (r *diffRun) pickNS(a *diffActor) string {
	if r.shared() && r.gen.Chance(0.4) {
		return sharedNS
	}
	return a.ns
}

// statement generates a statement of a in ns, on its shadow's schema.
func (r *diffRun) statement(a *diffActor, ns string) (difftest.Stmt, error) {
	var q difftest.Queryer = a.shadow
	if a.stx != nil {
		q = a.stx
	}
	s, err := difftest.ReadSchema(r.ctx, q, ns, a.auditTable())
	if err != nil {
		return difftest.Stmt{}, err
	}
	return r.gen.Statement(&s, ns), nil
}

// directStatement generates a write of the primary's shared tables.
func (r *diffRun) directStatement() (difftest.Stmt, bool) {
	if r.down.Load() {
		return difftest.Stmt{}, false
	}
	s, err := difftest.ReadSchema(r.ctx, r.prim, sharedNS)
	if err != nil {
		return difftest.Stmt{}, false // the primary went down meanwhile
	}
	st := r.gen.Statement(&s, sharedNS)
	return st, !st.Read
}

// step runs one op and checks it.
func (r *diffRun) step(op difftest.Op) {
	i := r.record(op)
	if os.Getenv("DIFFTEST_SLOW") != "" {
		start := time.Now()
		defer func() {
			if d := time.Since(start); d > 100*time.Millisecond {
				fmt.Printf("slow op %d (%v): %s %s %.80s\n", i, d, op.Actor, op.Kind, op.SQL)
			}
		}()
	}
	if op.Actor == difftest.ActorPrimary {
		r.fault(i, op)
		return
	}
	var a *diffActor
	for _, x := range r.actors {
		if x.spec.Name == op.Actor {
			a = x
		}
	}
	if a == nil && op.Actor == writerActor {
		a = &diffActor{spec: difftest.ActorSpec{Name: writerActor, Kind: "direct"}}
	}
	if a == nil {
		r.fail(i, "no actor %q", op.Actor)
		return
	}
	if !a.replica() {
		if op.Kind == difftest.OpExec && !r.down.Load() {
			r.prim.ExecContext(r.ctx, op.SQL, op.Args...) // errors are the workload's
		}
		return
	}
	if r.down.Load() && a.spec.Kind == "replica" && op.Kind != difftest.OpQuery && op.Kind != difftest.OpSync {
		return // its writes and transactions need the primary
	}
	switch op.Kind {
	case difftest.OpExec, difftest.OpQuery:
		r.statementOp(i, a, op)
	case difftest.OpBegin:
		if a.tx != nil {
			return
		}
		tx, err := a.db.BeginTx(r.ctx, nil)
		if err != nil {
			r.fail(i, "%s: begin: %v", a.spec.Name, err)
			return
		}
		stx, err := a.shadow.BeginTx(r.ctx, nil)
		if err != nil {
			r.fail(i, "%s: the shadow's begin: %v", a.spec.Name, err)
			return
		}
		a.tx, a.stx, a.txSeq, a.txWide, a.txNames = tx, stx, 0, false, a.txNames[:0]
	case difftest.OpCommit, difftest.OpRollback:
		r.endTx(i, a, op.Kind == difftest.OpCommit)
	case difftest.OpSync:
		r.world.Lock()
		defer r.world.Unlock()
		r.sync(i, a)
	case difftest.OpPush:
		if a.tx != nil {
			r.endTx(i, a, false)
		}
		if err := a.c.Push(r.ctx); err != nil && !r.down.Load() && a.spec.Kind == "offline" {
			r.fail(i, "%s: push: %v", a.spec.Name, err)
		}
	case difftest.OpReopen:
		r.world.Lock()
		defer r.world.Unlock()
		r.reopen(i, a)
	default:
		r.fail(i, "op %q", op.Kind)
	}
}

// corrupt reports whether err says the local file is damaged: never
// right, whatever the statement.
func corrupt(err error) bool {
	if err == nil {
		return false
	}
	msg := strings.ToLower(err.Error())
	return strings.Contains(msg, "malformed") || strings.Contains(msg, "corrupt") || strings.Contains(msg, "not a database")
}

// checked reports whether an answer of a to sql must equal its shadow's:
// any, for an exact actor; else those on its own tables alone, which
// only it writes.
func (a *diffActor) checked(sql string) bool {
	return a.exact() || a.ownOnly(sql)
}

// ownOnly reports whether sql's outcome depends on the actor's own
// objects alone: it names no shared table, and it is no ALTER TABLE,
// which checks every view and trigger of the schema, the other actors'
// among them.
func (a *diffActor) ownOnly(sql string) bool {
	return !touchesNS(sql, sharedNS) && !strings.EqualFold(sqlscan.FirstKeyword(sql), "ALTER")
}

// taintFrom follows a statement about to run: one whose outcome depends
// on other actors' objects, or on a tainted one of the actor's, makes its
// transaction wide, and an autocommit one taints the objects it names;
// a transaction's names taint at its commit, if it is wide. The objects a
// statement names include the views and triggers that name them, as the
// shadow's schema (q) has them: a trigger writes what its table's writes
// do not name. It reports whether the statement names an object that was
// tainted already.
func (a *diffActor) taintFrom(ctx context.Context, q execer, sql string) (tainted bool) {
	names := a.ownNames(sql)
	wide := !a.ownOnly(sql)
	if wide || len(a.tainted) > 0 {
		names = a.dependents(ctx, q, names)
	}
	for _, n := range names {
		tainted = tainted || a.tainted[n]
	}
	wide = wide || tainted
	if a.tx != nil {
		a.txWide = a.txWide || wide
		a.txNames = append(a.txNames, names...)
		return tainted
	}
	if wide {
		a.taint(names)
	}
	return tainted
}

func (a *diffActor) taint(names []string) {
	if a.tainted == nil {
		a.tainted = map[string]bool{}
	}
	for _, n := range names {
		a.tainted[n] = true
	}
}

// dependents returns names and the actor's own objects linked to them by
// a view's or a trigger's definition, transitively.
func (a *diffActor) dependents(ctx context.Context, q execer, names []string) []string {
	rows, err := q.QueryContext(ctx, "SELECT sql FROM sqlite_schema WHERE type IN ('view', 'trigger') AND sql IS NOT NULL")
	if err != nil {
		return names
	}
	var defs [][]string
	for rows.Next() {
		var def string
		if rows.Scan(&def) == nil {
			defs = append(defs, a.ownNames(def))
		}
	}
	rows.Close()
	set := map[string]bool{}
	for _, n := range names {
		set[n] = true
	}
	for grew := true; grew; {
		grew = false
		for _, d := range defs {
			if !slices.ContainsFunc(d, func(n string) bool { return set[n] }) {
				continue
			}
			for _, n := range d {
				if !set[n] {
					set[n], grew = true, true
					names = append(names, n)
				}
			}
		}
	}
	return names
}

// ownNames returns the actor's own objects sql names, but its audit
// table: each transaction's audit row is its own, whatever else was
// refused.
func (a *diffActor) ownNames(sql string) []string {
	var names []string
	s := sqlscan.NewScanner(sql)
	for t := s.Next(); t.Kind != sqlscan.EOF; t = s.Next() {
		if w := sql[t.Start:t.End]; t.Kind == sqlscan.Word && strings.HasPrefix(w, a.ns) && w != a.auditTable() {
			names = append(names, w)
		}
	}
	return names
}

// touchesNS reports whether sql names an object of namespace ns.
func touchesNS(sql, ns string) bool {
	s := sqlscan.NewScanner(sql)
	for t := s.Next(); t.Kind != sqlscan.EOF; t = s.Next() {
		if t.Kind == sqlscan.Word && strings.HasPrefix(sql[t.Start:t.End], ns) {
			return true
		}
	}
	return false
}

// countsRows reports whether a statement's rows changed are its own
// (sqld's is_iud): an INSERT, UPDATE, DELETE or REPLACE.
func countsRows(sql string) bool {
	switch strings.ToUpper(sqlscan.FirstKeyword(sql)) {
	case "INSERT", "UPDATE", "DELETE", "REPLACE":
		return true
	}
	return false
}

type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

func (r *diffRun) statementOp(i int, a *diffActor, op difftest.Op) {
	var local, shadow execer = a.db, a.shadow
	if a.tx != nil {
		local, shadow = a.tx, a.stx
	}
	if op.Expect == difftest.ExpectRefused {
		if _, err := local.ExecContext(r.ctx, op.SQL, op.Args...); !errors.Is(err, embedded.ErrOfflineSQL) {
			r.fail(i, "%s: %s: %v, want ErrOfflineSQL", a.spec.Name, op.SQL, err)
		}
		return
	}
	// With background syncs, a tainted object may be back at the
	// primary's state at any moment: a background sync pulls it once the
	// primary has refused the write that tainted it.
	tainted := a.taintFrom(r.ctx, shadow, op.SQL)
	check := a.checked(op.SQL) && !a.unsure && (a.exact() || !tainted)
	if op.Kind == difftest.OpQuery {
		got, err := difftest.Query(r.ctx, local, op.SQL, op.Args...)
		if r.environment(a, err) {
			return
		}
		want, werr := difftest.Query(r.ctx, shadow, op.SQL, op.Args...)
		switch {
		case corrupt(err):
			r.fail(i, "%s: %s: %v%s", a.spec.Name, op.SQL, err, r.diagnose(a))
		case !check:
		case (err == nil) != (werr == nil):
			r.fail(i, "%s: %s: local error %v, shadow error %v", a.spec.Name, op.SQL, err, werr)
		case !slices.Equal(got, want):
			r.fail(i, "%s: %s: local %q, shadow %q", a.spec.Name, op.SQL, got, want)
		default:
			r.compared++
		}
		return
	}
	res, err := local.ExecContext(r.ctx, op.SQL, op.Args...)
	if r.environment(a, err) {
		return
	}
	sres, serr := shadow.ExecContext(r.ctx, op.SQL, op.Args...)
	if err != nil && a.spec.Kind == "replica" {
		// The primary's SQLite is not the shadow's: what a failed
		// statement leaves behind may differ (sqld keeps the rows an
		// INSERT OR IGNORE wrote before a datatype mismatch).
		defer func() { a.unsure = true }()
	}
	switch {
	case corrupt(err):
		r.fail(i, "%s: %s: %v%s", a.spec.Name, op.SQL, err, r.diagnose(a))
		return
	case errors.Is(err, embedded.ErrOfflineSQL):
		r.fail(i, "%s: %s: the generator wrote SQL that offline writes refuse: %v", a.spec.Name, op.SQL, err)
		return
	case (err == nil) != (serr == nil) && !check:
		// On a table another actor writes, the replica and its shadow
		// may differ; the outcome went its own way.
		a.unsure = true
	case (err == nil) != (serr == nil):
		r.fail(i, "%s: %s: local error %v, shadow error %v", a.spec.Name, op.SQL, err, serr)
		return
	case err == nil && check:
		n, _ := res.RowsAffected()
		sn, _ := sres.RowsAffected()
		if !countsRows(op.SQL) {
			sn = 0 // SQLite's changes() of the last INSERT, UPDATE or DELETE; sqld says 0
		}
		if n != sn {
			r.fail(i, "%s: %s: %d rows changed locally, %d in the shadow", a.spec.Name, op.SQL, n, sn)
			return
		}
		r.compared++
	}
	if err == nil && strings.HasPrefix(op.SQL, "INSERT INTO "+a.auditTable()+" ") && len(op.Args) == 1 {
		seq, _ := op.Args[0].(int64)
		a.seq = max(a.seq, seq)
		if a.tx != nil {
			a.txSeq = seq
		} else {
			a.committed[seq] = true // a transaction of its own
		}
	}
}

// environment reports whether err is the primary's, not the
// statement's: busy, a transaction lost or timed out, unreachable, a
// read that waited too long for a sync. The op is then as if not run:
// its transaction is rolled back (on the primary it is, or will be when
// it times out), and a write outside one may have run, so the shadow is
// no longer sure.
func (r *diffRun) environment(a *diffActor, err error) bool {
	var pe *embedded.PrimaryError
	var le *libsql.Error
	if err == nil || a.spec.Kind == "offline" && !errors.As(err, &pe) {
		return false
	}
	switch {
	case errors.Is(err, libsql.ErrBusy), errors.Is(err, libsql.ErrTxLost), errors.Is(err, embedded.ErrNotReplicated),
		errors.As(err, &pe), errors.Is(err, context.DeadlineExceeded),
		errors.As(err, &le) && (le.Code == "TRANSACTION_TIMEOUT" || le.HTTPStatus != 0 || le.Err != nil):
	default:
		return false
	}
	if a.tx != nil {
		a.tx.Rollback()
		a.stx.Rollback()
		a.tx, a.stx = nil, nil
	} else {
		a.unsure = true
	}
	return true
}

func (r *diffRun) endTx(i int, a *diffActor, commit bool) {
	if a.tx == nil {
		return
	}
	tx, stx := a.tx, a.stx
	a.tx, a.stx = nil, nil
	if !commit {
		if err := tx.Rollback(); err != nil && !errors.Is(err, embedded.ErrTxRolledBack) && !r.environment(a, err) {
			r.fail(i, "%s: rollback: %v", a.spec.Name, err)
		}
		stx.Rollback()
		return
	}
	err := tx.Commit()
	if err != nil && r.environment(a, err) {
		stx.Rollback()
		a.unsure = true // the commit's outcome may be unknown
		return
	}
	serr := stx.Commit()
	switch {
	case corrupt(err):
		r.fail(i, "%s: commit: %v", a.spec.Name, err)
	case (err == nil) != (serr == nil) && (a.checked(a.txNS) || a.exact()):
		r.fail(i, "%s: commit: local %v, shadow %v", a.spec.Name, err, serr)
	case err == nil && a.txSeq != 0:
		a.committed[a.txSeq] = true
		if a.txNS == sharedNS || a.txWide {
			a.shared[a.txSeq] = true
			a.taint(a.txNames)
		}
	}
}

// sync syncs a and, with the primary up, holds its file against the
// primary's; for the only writer of a primary, against its shadow too
// (the primary holds its transactions once each); then makes the
// shadow a copy of the file. The world is locked.
func (r *diffRun) sync(i int, a *diffActor) {
	if a.tx != nil {
		r.endTx(i, a, false)
	}
	_, err := a.c.Sync(r.ctx)
	switch {
	case r.down.Load():
		return // it may fail, and nothing is checked
	case err != nil:
		diag := ""
		if corrupt(err) {
			diag = r.diagnose(a)
		}
		r.fail(i, "%s: sync: %v%s", a.spec.Name, err, diag)
		return
	}
	clear(a.tainted) // the file is the primary's again
	r.checkSynced(i, a)
}

// file opens a connection of the checks' own to a's local file: the
// checks must not go through the replica's connections, whose reads
// would change what happens next (a read may wait for a sync).
func (r *diffRun) file(a *diffActor) (*sql.DB, error) {
	if !a.spec.Encrypted {
		return sql.Open("sqlite", "file:"+a.path+"?mode=ro&_pragma=writable_schema(1)")
	}
	if a.key == nil {
		k, err := encrypt.Load(a.path, encryptionKey(a), true)
		if err != nil {
			return nil, err
		}
		a.key = k
	}
	return localdb.OpenReaders(a.path, 1, a.key)
}

func encryptionKey(a *diffActor) string { return "difftest " + a.spec.Name }

// dumpFile dumps a's local file through a connection of the checks' own.
func (r *diffRun) dumpFile(a *diffActor, rootpages bool) ([]string, error) {
	db, err := r.file(a)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	return difftest.Dump(r.ctx, db, rootpages)
}

// sameAs reports whether local, a dump of a's local file, is the dump of
// db (the name it has in a failure; rootpages as local was dumped). If it
// is not, or db cannot be dumped, it fails step i: differs says what the
// difference means.
func (r *diffRun) sameAs(i int, a *diffActor, local []string, name string, db difftest.Queryer, rootpages bool, differs string) bool {
	other, err := difftest.Dump(r.ctx, db, rootpages)
	if err != nil {
		r.fail(i, "%s: dump the %s: %v", a.spec.Name, name, err)
		return false
	}
	if d := difftest.Diff("local", local, name, other); d != "" {
		r.fail(i, "%s: %s:\n%s", a.spec.Name, differs, d)
		return false
	}
	return true
}

func (r *diffRun) checkSynced(i int, a *diffActor) {
	local, err := r.dumpFile(a, true)
	if err != nil {
		r.fail(i, "%s: dump the local file: %v", a.spec.Name, err)
		return
	}
	if !r.sameAs(i, a, local, "primary", r.prim, true, "after a sync the local file is not the primary's") {
		return
	}
	if got, err := r.quickCheck(a); err != nil || len(got) != 1 || got[0] != `t:"ok"` {
		r.fail(i, "%s: quick_check after a sync: %q, %v", a.spec.Name, got, err)
		return
	}
	if r.soleWriter(a) {
		local, _ := r.dumpFile(a, false)
		if !r.sameAs(i, a, local, "shadow", a.shadow, false, "the primary's state after the sync is not what the replica ran") {
			return
		}
	}
	r.syncs++
	if err := r.resetShadow(a); err != nil {
		r.fail(i, "%v", err)
	}
	a.unsure = false
}

func (r *diffRun) quickCheck(a *diffActor) ([]string, error) {
	db, err := r.file(a)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	return difftest.Query(r.ctx, db, "PRAGMA quick_check")
}

// diagnose tells a corruption error of a's apart: the file itself damaged
// (quick_check on a connection of the checks' own fails), or a connection
// of the replica's with a stale view of a sound file.
func (r *diffRun) diagnose(a *diffActor) string {
	got, err := r.quickCheck(a)
	if err != nil {
		return fmt.Sprintf(" (quick_check of the local file on a new connection: %v)", err)
	}
	return fmt.Sprintf(" (quick_check of the local file on a new connection: %q)", got)
}

// soleWriter reports whether a is an exact actor and nothing else writes
// to the primary: after a sync its file must be what its shadow ran.
func (r *diffRun) soleWriter(a *diffActor) bool {
	if !a.exact() || r.sc.writer {
		return false
	}
	for _, x := range r.actors {
		if x != a {
			return false
		}
	}
	a.cmu.Lock()
	defer a.cmu.Unlock()
	return len(a.conflicts) == 0
}

// reopen closes a's replica and opens it again: its local state must be
// where it was. The world is locked.
func (r *diffRun) reopen(i int, a *diffActor) {
	if err := a.closeReplica(); err != nil {
		r.fail(i, "%s: close: %v", a.spec.Name, err)
		return
	}
	if err := r.open(a); err != nil {
		r.fail(i, "%v", err)
		return
	}
	if a.spec.Kind == "replica" {
		// It opens where its last sync left it, without the writes it
		// made on the primary since, until it syncs again.
		a.unsure = true
	}
	if !a.exact() {
		return
	}
	local, err := r.dumpFile(a, false)
	if err != nil {
		r.fail(i, "%s: dump after reopening: %v", a.spec.Name, err)
		return
	}
	shadow, _ := difftest.Dump(r.ctx, a.shadow, false)
	if d := difftest.Diff("local", local, "shadow", shadow); d != "" {
		r.fail(i, "%s: reopened, the local file is not where it was:\n%s", a.spec.Name, d)
	}
}

// fault kills or restarts the primary.
func (r *diffRun) fault(i int, op difftest.Op) {
	r.world.Lock()
	defer r.world.Unlock()
	switch op.Kind {
	case difftest.OpKill:
		if !r.down.Load() {
			r.srv.Kill()
			r.down.Store(true)
			r.faults++
			// A transaction on the primary is lost with it.
			for _, a := range r.actors {
				if a.spec.Kind == "replica" && a.tx != nil {
					a.tx.Rollback()
					a.stx.Rollback()
					a.tx, a.stx = nil, nil
				}
			}
		}
	case difftest.OpRestart:
		if r.down.Load() {
			if err := r.srv.Restart(r.ctx); err != nil {
				r.fail(i, "restart the primary: %v", err)
				return
			}
			r.down.Store(false)
		}
	default:
		r.fail(i, "primary op %q", op.Kind)
	}
}

// startWriter starts the goroutine that writes to the shared tables.
// stopWriter stops it between two statements, never in one: a statement
// whose request a cancelled context cut off may still commit on the
// primary after the checks that follow have read it.
func (r *diffRun) startWriter() {
	ctx := r.ctx
	stop, done := make(chan struct{}), make(chan struct{})
	gen := difftest.NewGen(r.seed ^ 0x5bd1e995)
	go func() {
		defer close(done)
		var s difftest.Schema
		for n := 0; ctx.Err() == nil; n++ {
			select {
			case <-stop:
				return
			default:
			}
			r.world.RLock()
			if !r.down.Load() {
				if n%10 == 0 {
					if fresh, err := difftest.ReadSchema(ctx, r.prim, sharedNS); err == nil {
						s = fresh
					}
				}
				if st := gen.Statement(&s, sharedNS); !st.Read {
					r.record(difftest.Op{Actor: writerActor, Kind: difftest.OpExec, SQL: st.SQL, Args: st.Args})
					r.prim.ExecContext(ctx, st.SQL, st.Args...)
					if st.DDL {
						n = -1 // read the schema again
					}
				}
			}
			r.world.RUnlock()
			time.Sleep(time.Duration(2+gen.Intn(10)) * time.Millisecond)
		}
	}()
	r.stopWriter = func() {
		close(stop)
		<-done
		r.stopWriter = nil
	}
}

// finish brings the primary up, syncs every replica and checks it, and
// checks each replica's audit: its committed transactions are on the
// primary once each, but those reported as conflicts, which are not.
func (r *diffRun) finish() {
	if r.stopWriter != nil {
		r.stopWriter()
	}
	i := r.record(difftest.Op{Actor: difftest.ActorPrimary, Kind: difftest.OpRestart})
	r.fault(i, difftest.Op{Actor: difftest.ActorPrimary, Kind: difftest.OpRestart})
	r.world.Lock()
	defer r.world.Unlock()
	for _, a := range r.actors {
		if a.replica() && r.failure == nil {
			r.sync(r.record(difftest.Op{Actor: a.spec.Name, Kind: difftest.OpSync}), a)
		}
	}
	for _, a := range r.actors {
		if a.audited && r.failure == nil {
			r.audit(len(r.script.Ops), a)
		}
	}
}

func (r *diffRun) audit(i int, a *diffActor) {
	rows, err := difftest.Query(r.ctx, r.prim, "SELECT seq, count(*) FROM "+a.auditTable()+" GROUP BY seq")
	if err != nil {
		r.fail(i, "%s: the audit: %v", a.spec.Name, err)
		return
	}
	on := map[int64]bool{}
	for _, row := range rows {
		var seq, n int64
		fmt.Sscanf(row, "i:%d | i:%d", &seq, &n)
		if n != 1 {
			r.fail(i, "%s: transaction %d is on the primary %d times", a.spec.Name, seq, n)
			return
		}
		on[seq] = true
	}
	refused := map[int64]bool{}
	a.cmu.Lock()
	for _, c := range a.conflicts {
		for k, q := range c.SQL {
			if strings.HasPrefix(q, "INSERT INTO "+a.auditTable()+" ") && len(c.Args[k]) == 1 {
				seq, _ := c.Args[k][0].(int64)
				refused[seq] = true
				if !a.shared[seq] && r.generated {
					r.fail(i, "%s: transaction %d, on its own tables only, was refused: %v", a.spec.Name, seq, c.Err)
				}
			}
		}
	}
	a.cmu.Unlock()
	for seq := range a.committed {
		switch {
		case refused[seq] && on[seq]:
			r.fail(i, "%s: transaction %d was reported a conflict and is on the primary", a.spec.Name, seq)
		case !refused[seq] && !on[seq]:
			r.fail(i, "%s: transaction %d was committed, not reported a conflict, and is not on the primary", a.spec.Name, seq)
		}
	}
	for seq := range on {
		if !a.committed[seq] {
			r.fail(i, "%s: transaction %d is on the primary but was never committed", a.spec.Name, seq)
		}
	}
}

// report logs a failure and writes its reproduction to testdata/difftest,
// shrunk if the scenario replays deterministically.
func (r *diffRun) report(t *testing.T, bin string, sc diffScenario, seed uint64) {
	s := *r.script
	if n := failedOp(r.failure); n >= 0 && n < len(s.Ops) {
		s.Ops = s.Ops[:n+1]
	}
	s.Comments = append(s.Comments, "failure: "+strings.ReplaceAll(r.failure.Error(), "\n", " "))
	if sc.deterministic() {
		// A shrunk script must fail as this run did, not otherwise.
		want := failureText(r.failure)
		fails := func(c *difftest.Script) bool {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			err := replayScript(ctx, t, bin, c)
			return err != nil && failureText(err) == want
		}
		if fails(&s) {
			s = *difftest.Shrink(&s, fails, time.Now().Add(*diffShrink))
			s.Comments = append(s.Comments, fmt.Sprintf("shrunk to %d ops", len(s.Ops)))
		} else {
			s.Comments = append(s.Comments, "the failure did not replay in order: not shrunk")
		}
	} else {
		s.Comments = append(s.Comments, "background syncs or a writer goroutine: the order is not replayed exactly; not shrunk")
		s.Comments = append(s.Comments, r.conflictNotes()...)
	}
	path := filepath.Join("testdata", "difftest", fmt.Sprintf("fail-%s-%d.txt", sc.name, seed))
	os.MkdirAll(filepath.Dir(path), 0o755)
	if err := os.WriteFile(path, []byte(s.String()), 0o644); err != nil {
		t.Logf("writing %s: %v", path, err)
	}
	t.Fatalf("seed %d, scenario %s: %v\nreproduction (%d ops) in %s", seed, sc.name, r.failure, len(s.Ops), path)
}

// failureText returns a failure's text without the op number.
func failureText(err error) string {
	_, text, _ := strings.Cut(err.Error(), ": ")
	return text
}

// failedOp returns the op number a failure names ("op N: ..."), or -1.
func failedOp(err error) int {
	n := -1
	fmt.Sscanf(err.Error(), "op %d:", &n)
	return n
}
