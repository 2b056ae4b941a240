package embedded_test

import (
	"database/sql/driver"
	"fmt"
	"testing"

	"github.com/gohrana/libsql/embedded"
)

// TestPreparedStatement: a prepared statement is routed each time it
// runs, as its text is: its writes go to the primary, its reads are
// answered locally (they still are with the primary stopped). The
// driver's own Stmt, whose Exec and Query take positional values, runs
// the same way.
func TestPreparedStatement(t *testing.T) {
	p, prim := startPrimary(t)
	mustExec(t, prim, "CREATE TABLE kv (k INTEGER PRIMARY KEY, v TEXT)")
	r := openReplica(t, "", p.URL(), embedded.WithSyncInterval(0))
	ins, err := r.db.Prepare("INSERT INTO kv VALUES (?, ?)")
	if err != nil {
		t.Fatal(err)
	}
	for k := range 3 {
		if _, err := ins.Exec(k, fmt.Sprint("v", k)); err != nil {
			t.Fatal(err)
		}
	}
	if err := ins.Close(); err != nil {
		t.Fatal(err)
	}
	if n := one[int](t, prim, "SELECT count(*) FROM kv"); n != 3 {
		t.Fatalf("the primary has %d rows, want 3", n)
	}

	conn, err := r.db.Conn(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	err = conn.Raw(func(dc any) error {
		ins, err := dc.(driver.Conn).Prepare("INSERT INTO kv VALUES (?, ?)")
		if err != nil {
			return err
		}
		defer ins.Close()
		if n := ins.NumInput(); n != -1 {
			t.Errorf("NumInput %d, want -1 (not checked)", n)
		}
		//lint:ignore SA1019 the legacy entry point is part of the driver
		if _, err := ins.Exec([]driver.Value{int64(3), "v3"}); err != nil {
			return err
		}
		sel, err := dc.(driver.Conn).Prepare("SELECT v FROM kv WHERE k = ?")
		if err != nil {
			return err
		}
		defer sel.Close()
		//lint:ignore SA1019 the legacy entry point is part of the driver
		rows, err := sel.Query([]driver.Value{int64(3)})
		if err != nil {
			return err
		}
		defer rows.Close()
		dest := make([]driver.Value, 1)
		if err := rows.Next(dest); err != nil {
			return fmt.Errorf("the driver's Stmt read no row: %w", err)
		}
		if got := fmt.Sprintf("%s", dest[0]); got != "v3" {
			t.Errorf("the driver's Stmt read %q, want v3", got)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

	r.sync(t)
	sel, err := r.db.Prepare("SELECT v FROM kv WHERE k = ?")
	if err != nil {
		t.Fatal(err)
	}
	defer sel.Close()
	p.Kill() // local answers only
	for k := range 4 {
		var v string
		if err := sel.QueryRow(k).Scan(&v); err != nil || v != fmt.Sprint("v", k) {
			t.Errorf("k %d: %q, %v", k, v, err)
		}
	}
}
