package embedded_test

import (
	"database/sql"
	"fmt"
	"strings"
	"testing"

	"github.com/gohrana/libsql/embedded"
)

func runScript(t *testing.T, r *replica, script []string) []string {
	var out []string
	for _, s := range script {
		if s == "Sync" {
			_, err := r.c.Sync(testCtx(t))
			out = append(out, fmt.Sprintf("Sync: %v", err))
			continue
		}
		if strings.HasPrefix(s, "SELECT") || strings.HasPrefix(s, "PRAGMA") {
			rows, err := r.db.QueryContext(testCtx(t), s)
			if err != nil {
				out = append(out, fmt.Sprintf("%s: ERR %v", s, err))
				continue
			}
			var vals []string
			for rows.Next() {
				var v any
				rows.Scan(&v)
				vals = append(vals, fmt.Sprint(v))
			}
			err = rows.Err()
			rows.Close()
			out = append(out, fmt.Sprintf("%s: %v %v", s, vals, err))
			continue
		}
		_, err := r.db.ExecContext(testCtx(t), s)
		out = append(out, fmt.Sprintf("%s: %v", s, err))
	}
	return out
}

func TestRepro32(t *testing.T) {
	cases := map[string][]string{
		"1": {"Sync", "CREATE TABLE t(x)", "Sync", "CREATE INDEX tx ON t(x)", "SELECT count(*) FROM t", "Sync", "INSERT INTO t VALUES(2)", "SELECT count(*) FROM t WHERE x > 1", "PRAGMA quick_check"},
		"2": {"Sync",
			"CREATE TABLE tab0(pk INTEGER PRIMARY KEY, col0 INTEGER, col1 FLOAT, col2 TEXT, col3 INTEGER, col4 FLOAT, col5 TEXT)",
			"CREATE TABLE tab2(pk INTEGER PRIMARY KEY, col0 INTEGER, col1 FLOAT, col2 TEXT, col3 INTEGER, col4 FLOAT, col5 TEXT)",
			"SELECT count(*) FROM tab0", "Sync",
			"INSERT INTO tab0 VALUES(8,42,66.41,'nksqa',93,58.54,'urtxt')",
			"CREATE INDEX idx_tab2_3 ON tab2 (col4)", "CREATE INDEX idx_tab2_5 ON tab2 (col1 DESC,col3)",
			"INSERT INTO tab2 SELECT * FROM tab0", "SELECT count(*) FROM tab0", "Sync",
			"DELETE FROM tab2 WHERE col4 >= 58.96",
			"SELECT pk FROM tab2 WHERE col4 >= 58.96"},
		"3": {"Sync", "CREATE TABLE t1(x)", "CREATE TEMP VIEW v2 AS SELECT x FROM t1", "Sync", "INSERT INTO t1 VALUES(1)", "Sync", "SELECT count(*) FROM t1"},
		"4": {"Sync", "CREATE TABLE t1(x)", "CREATE TRIGGER t1r1 UPDATE ON t1 BEGIN SELECT 1; END;", "Sync"},
	}
	srv := sqlds.Start(t)
	for name, script := range cases {
		t.Run(name, func(t *testing.T) {
			r := openReplica(t, "", srv.URL()+"/", embedded.WithOfflineWrites(), embedded.WithSyncInterval(0))
			r.db.SetMaxOpenConns(1)
			for _, l := range runScript(t, r, script) {
				t.Log(l)
			}
			_ = sql.ErrNoRows
		})
	}
}
