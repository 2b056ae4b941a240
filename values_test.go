package libsql_test

import (
	"database/sql"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	fs "github.com/gohrana/libsql/internal/fakesqld"
)

// Values come back typed by SQLite type and declared column type;
// arguments go out as sqld binds them (named parameters by name, from
// sql.Named or by position).
func TestFakeConnValuesAndArgs(t *testing.T) {
	t.Parallel()
	forTransports(t, func(t *testing.T, tp string) {
		cols := []fs.Col{{Name: "i", Decltype: "INTEGER"}, {Name: "f", Decltype: "REAL"}, {Name: "s", Decltype: "TEXT"},
			{Name: "b", Decltype: "BLOB"}, {Name: "n"}, {Name: "d", Decltype: "date"}, {Name: "ts", Decltype: "TIMESTAMP"}, {Name: "inf"}}
		row := fs.Vals(fs.Int(-5), fs.Float(2.5), fs.Text("héllo"), fs.Blob([]byte{0, 1, 0xff}), fs.Null(),
			fs.Text("2024-01-02"), fs.Text("not a time"), fs.Float(math.Inf(1)))
		when := time.Date(2024, 1, 2, 3, 4, 5, 600, time.UTC)
		srv := newFake(t, tp, auto(fs.SQL("SELECT * FROM v WHERE i = ? AND s = ?", fs.Int(-5), fs.Text("héllo")), fs.Query(cols, row)),
			auto(fs.SQL("INSERT INTO t VALUES (:a, @b, $c)").Named(":a", fs.Int(1)).Named("@b", fs.Float(0.5)).Named("$c", fs.Null()), fs.Inserted(1, 9)),
			auto(fs.SQL("INSERT INTO t VALUES (:a, :b)").Named("a", fs.Blob([]byte("x"))).Named("b", fs.Text("2024-01-02 03:04:05.0000006")), fs.Inserted(1, 10)),
			auto(fs.SQL("UPDATE t SET a = ?2 WHERE b = ?1", fs.Int(1), fs.Int(1)), fs.Updated(3)),
		)
		db := openDB(t, srv, "")
		rows, err := db.Query("SELECT * FROM v WHERE i = ? AND s = ?", -5, "héllo")
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		cts, _ := rows.ColumnTypes()
		var scan []string
		for _, ct := range cts {
			scan = append(scan, fmt.Sprint(ct.ScanType()))
		}
		if got := strings.Join(scan, " "); got != "int64 float64 string []uint8 interface {} time.Time time.Time interface {}" {
			t.Errorf("scan types %s", got)
		}
		if !rows.Next() {
			t.Fatal(rows.Err())
		}
		var vals [8]any
		ptrs := make([]any, len(vals))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		want := []any{int64(-5), 2.5, "héllo", []byte{0, 1, 0xff}, nil, time.Date(2024, 1, 2, 0, 0, 0, 0, time.UTC), "not a time", math.NaN()} // JSON null float: PROTOCOL.md §8.2
		if fmt.Sprintf("%#v", vals[:]) != fmt.Sprintf("%#v", want) {
			t.Errorf("values\n got %#v\nwant %#v", vals[:], want)
		}
		if rows.Next() {
			t.Error("a second row")
		}
		rows.Close()
		if _, err := db.Exec("INSERT INTO t VALUES (:a, @b, $c)", 1, float32(0.5), nil); err != nil {
			t.Fatal(err)
		}
		if r, err := db.Exec("INSERT INTO t VALUES (:a, :b)", sql.Named("a", []byte("x")), sql.Named("b", when), sql.Named("unused", 1)); err != nil {
			t.Fatal(err)
		} else if id, _ := r.LastInsertId(); id != 10 {
			t.Errorf("LastInsertId %d", id)
		}
		if r, err := db.Exec("UPDATE t SET a = ?2 WHERE b = ?1", true, uint8(1)); err != nil {
			t.Fatal(err)
		} else if n, _ := r.RowsAffected(); n != 3 {
			t.Errorf("RowsAffected %d", n)
		}
		// Refused before anything is sent.
		n := srv.Count()
		for _, bad := range []struct {
			sql  string
			args []any
		}{
			{"SELECT ?, :a", []any{1, 2}},
			{"SELECT :a", []any{1, sql.Named("a", 2)}},
			{"SELECT :a, :b", []any{1}},
			{"SELECT ?", []any{math.Inf(1)}}, // JSON cannot carry it
			{"SELECT ?", []any{uint64(math.MaxUint64)}},
			{"SELECT ?", []any{"\xff"}},
		} {
			if _, err := db.Exec(bad.sql, bad.args...); err == nil {
				t.Errorf("Exec %s %v: no error", bad.sql, bad.args)
			}
			if _, err := db.Query(bad.sql, bad.args...); err == nil {
				t.Errorf("Query %s %v: no error", bad.sql, bad.args)
			}
		}
		if srv.Count() != n {
			t.Errorf("refused arguments sent %d requests", srv.Count()-n)
		}
	})
}
