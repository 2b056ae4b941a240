package difftest

import (
	"context"
	"database/sql"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	_ "modernc.org/sqlite"
)

func TestScriptRoundTrip(t *testing.T) {
	s := &Script{
		Comments: []string{"seed 1", "scenario x"},
		Actors: []ActorSpec{{Name: "a", Kind: "offline"}, {Name: "b", Kind: "replica", Interval: 25 * time.Millisecond, Encrypted: true},
			{Name: "p", Kind: "direct"}},
		Ops: []Op{
			{Actor: "a", Kind: OpSync},
			{Actor: "a", Kind: OpExec, SQL: "INSERT INTO a_t0 (c0, c1) VALUES (?, ?), (?, ?), (?, ?)",
				Args: []any{int64(-3), -1.25, "it's", []byte("\x00\xff"), nil, []byte{}}},
			{Actor: "a", Kind: OpQuery, SQL: "SELECT c0 FROM a_t0 ORDER BY 1"},
			{Actor: "b", Kind: OpBegin},
			{Actor: "b", Kind: OpExec, SQL: "CREATE TEMP TABLE x (y)", Expect: ExpectRefused},
			{Actor: "b", Kind: OpCommit},
			{Actor: ActorPrimary, Kind: OpKill},
			{Actor: ActorPrimary, Kind: OpRestart},
			{Actor: "a", Kind: OpReopen},
			{Actor: "p", Kind: OpExec, SQL: "DELETE FROM s_t0 WHERE c0 = 1.0"},
		},
	}
	text := s.String()
	got, err := Parse(strings.NewReader(text))
	if err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	if !reflect.DeepEqual(got, s) {
		t.Fatalf("round trip:\n%s\n%+v\nwant\n%+v", text, got, s)
	}
}

func TestParseRefuses(t *testing.T) {
	for _, text := range []string{
		"a exec",
		"a jump",
		"  args 1",
		"actor a plane",
		"actor a offline interval=soon",
		"a exec SELECT ?\n  args 1,",
		"a exec SELECT ?\n  args 1 2",
		"a exec SELECT ?\n  args -'x'",
		"a exec SELECT ?\n  args TRUE",
		"a exec SELECT 1\n  expect success",
	} {
		if s, err := Parse(strings.NewReader(text)); err == nil {
			t.Errorf("Parse(%q) = %+v, want an error", text, s)
		}
	}
}

// TestShrink: the shrinker finds the two ops whose presence together
// fails, in order, out of many.
func TestShrink(t *testing.T) {
	s := &Script{Actors: []ActorSpec{{Name: "a", Kind: "offline"}}}
	for i := range 200 {
		s.Ops = append(s.Ops, Op{Actor: "a", Kind: OpExec, SQL: strings.Repeat("x", i)})
	}
	fails := func(c *Script) bool {
		i := slices.IndexFunc(c.Ops, func(op Op) bool { return len(op.SQL) == 37 })
		j := slices.IndexFunc(c.Ops, func(op Op) bool { return len(op.SQL) == 150 })
		return i >= 0 && j > i
	}
	got := Shrink(s, fails, time.Now().Add(time.Minute))
	if len(got.Ops) != 2 || len(got.Ops[0].SQL) != 37 || len(got.Ops[1].SQL) != 150 {
		t.Fatalf("shrunk to %d ops: %+v", len(got.Ops), got.Ops)
	}
	if len(s.Ops) != 200 {
		t.Fatal("the script itself was changed")
	}
}

func openDB(t *testing.T, name string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(t.TempDir(), name)+"?_pragma=journal_mode(WAL)")
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	return db
}

// TestGenerateCopyDump: the generator's statements run on SQLite (most
// succeed; every read has rows in one order), and a database built by
// them and its Copy dump the same, through every kind of object.
func TestGenerateCopyDump(t *testing.T) {
	ctx := context.Background()
	for seed := range uint64(3) {
		src := openDB(t, "src.db")
		g := NewGen(seed)
		ok, failed := 0, 0
		kinds := map[string]bool{}
		for range 1500 {
			s, err := ReadSchema(ctx, src, "a_")
			if err != nil {
				t.Fatal(err)
			}
			st := g.Statement(&s, "a_")
			kinds[strings.Fields(st.SQL)[0]] = true
			var err2 error
			if st.Read {
				var first, second []string
				first, err2 = Query(ctx, src, st.SQL, st.Args...)
				if err2 == nil {
					second, _ = Query(ctx, src, st.SQL, st.Args...)
					if !slices.Equal(first, second) {
						t.Fatalf("%s: two answers", st.SQL)
					}
				}
			} else {
				_, err2 = src.ExecContext(ctx, st.SQL, st.Args...)
			}
			if err2 != nil {
				failed++
				if strings.Contains(err2.Error(), "syntax error") {
					t.Errorf("%s %v: %v", st.SQL, st.Args, err2)
				}
			} else {
				ok++
			}
		}
		if ok < 3*failed {
			t.Errorf("seed %d: %d statements ran, %d failed", seed, ok, failed)
		}
		for _, k := range []string{"CREATE", "INSERT", "UPDATE", "DELETE", "SELECT", "ALTER", "DROP", "REPLACE"} {
			if !kinds[k] {
				t.Errorf("seed %d: no %s generated", seed, k)
			}
		}
		dst := openDB(t, "dst.db")
		if err := Copy(ctx, src, dst); err != nil {
			t.Fatal(err)
		}
		a, err := Dump(ctx, src, false)
		if err != nil {
			t.Fatal(err)
		}
		b, err := Dump(ctx, dst, false)
		if err != nil {
			t.Fatal(err)
		}
		if d := Diff("source", a, "copy", b); d != "" {
			t.Fatalf("seed %d: %s", seed, d)
		}
		if len(a) < 20 {
			t.Errorf("seed %d: the database holds only %d lines", seed, len(a))
		}
	}
}

func TestDiff(t *testing.T) {
	if d := Diff("a", []string{"1", "2"}, "b", []string{"1", "2"}); d != "" {
		t.Errorf("equal: %q", d)
	}
	d := Diff("a", []string{"1", "2", "4"}, "b", []string{"1", "3", "4", "5"})
	if !strings.Contains(d, "only in a (1):\n  2") || !strings.Contains(d, "only in b (2):\n  3\n  5") {
		t.Errorf("%q", d)
	}
}

// TestCopyKeepsTriggerOrder: a copy fires a table's triggers in the
// order the source does (the order of their creation, not of their
// names): two BEFORE UPDATE triggers, one that deletes what the other
// inserts.
func TestCopyKeepsTriggerOrder(t *testing.T) {
	ctx := context.Background()
	src := openDB(t, "src.db")
	for _, q := range []string{
		"CREATE TABLE t (x)",
		"CREATE TABLE log (v)",
		"CREATE TRIGGER z_ins BEFORE UPDATE ON t BEGIN INSERT INTO log VALUES (new.x); END",
		"CREATE TRIGGER a_del BEFORE UPDATE ON t BEGIN DELETE FROM log; END",
		"INSERT INTO t VALUES (1)",
	} {
		if _, err := src.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	dst := openDB(t, "dst.db")
	if err := Copy(ctx, src, dst); err != nil {
		t.Fatal(err)
	}
	for _, db := range []*sql.DB{src, dst} {
		if _, err := db.Exec("UPDATE t SET x = 2"); err != nil {
			t.Fatal(err)
		}
	}
	a, _ := Query(ctx, src, "SELECT count(*) FROM log")
	b, _ := Query(ctx, dst, "SELECT count(*) FROM log")
	if !slices.Equal(a, b) {
		t.Fatalf("the source's update leaves %v log rows, the copy's %v", a, b)
	}
}
