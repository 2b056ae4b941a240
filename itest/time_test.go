package itest

import (
	"database/sql"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gohrana/libsql"
	"github.com/gohrana/libsql/internal/testmatrix"
)

// TestTimeRoundTrip stores time.Time arguments in DATE, DATETIME and
// TIMESTAMP columns: they come back as time.Time in UTC, equal to the
// original, and are stored as libsql.TimeFormat text.
func TestTimeRoundTrip(t *testing.T) {
	zone := time.FixedZone("UTC-06:30", -(6*3600 + 30*60))
	cases := []struct {
		name string
		col  string
		v    time.Time
	}{
		{"utc_nanoseconds", "d", time.Date(2024, 2, 29, 13, 14, 15, 123456789, time.UTC)},
		{"other_zone", "d", time.Date(2024, 12, 31, 22, 30, 0, 5000, zone)},
		{"whole_seconds", "d", time.Date(2001, 9, 9, 1, 46, 40, 0, time.UTC)},
		{"before_epoch", "d", time.Date(1969, 7, 20, 20, 17, 40, 0, time.UTC)},
		{"zero_time", "d", time.Time{}},
		{"far_future", "d", time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC)},
		{"now_with_monotonic", "d", time.Now()},
		{"date_column", "dd", time.Date(2020, 1, 2, 3, 4, 5, 0, zone)},
		{"timestamp_column", "ts", time.Date(2030, 6, 7, 8, 9, 10, 110000000, time.UTC)},
	}
	forEachVariant(t, func(t *testing.T, db *sql.DB, _ testmatrix.Variant) {
		table := freshTable(t, db, "time_rt", "(id INTEGER PRIMARY KEY, d DATETIME, dd DATE, ts TIMESTAMP)")
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				var typed time.Time
				got, typ := roundTrip(t, db, table, tc.col, tc.v, &typed)
				require.Equal(t, "text", typ, "time.Time is stored as text")
				require.True(t, typed.Equal(tc.v), "typed Scan: want %v, got %v", tc.v, typed)
				require.Equal(t, time.UTC, typed.Location(), "typed Scan must give UTC")
				gt, ok := got.(time.Time)
				require.True(t, ok, "Scan into any must give time.Time, got %T", got)
				require.True(t, gt.Equal(tc.v), "Scan into any: want %v, got %v", tc.v, gt)
				require.Equal(t, time.UTC, gt.Location(), "Scan into any must give UTC")

				var stored string
				require.NoError(t, db.QueryRowContext(t.Context(),
					"SELECT CAST("+tc.col+" AS TEXT) FROM "+table+" WHERE "+tc.col+" = ?", tc.v).Scan(&stored))
				require.Equal(t, tc.v.UTC().Format(libsql.TimeFormat), stored, "stored text")
			})
		}
	})
}

// TestTimeParsing checks how text in time columns is read: text in the
// layouts SQLite and TimeFormat use becomes time.Time in UTC; anything else
// stays what it is.
func TestTimeParsing(t *testing.T) {
	type want struct {
		time  time.Time // compared when isTime
		other any       // the value when it is not a time
	}
	at := func(y int, mo time.Month, d, h, mi, s, ns int) want {
		return want{time: time.Date(y, mo, d, h, mi, s, ns, time.UTC)}
	}
	cases := []struct {
		name string
		col  string // d DATETIME, dd DATE, ts TIMESTAMP, tx TEXT
		expr string // SQL expression stored in col
		want want
	}{
		{"sqlite_datetime_format", "d", "'2024-01-02 03:04:05'", at(2024, 1, 2, 3, 4, 5, 0)},
		{"iso_t_separator", "d", "'2024-01-02T03:04:05'", at(2024, 1, 2, 3, 4, 5, 0)},
		{"fractional_seconds", "ts", "'2024-01-02 03:04:05.5'", at(2024, 1, 2, 3, 4, 5, 500000000)},
		{"zone_offset", "ts", "'2024-01-02T03:04:05.123456789+02:00'", at(2024, 1, 2, 1, 4, 5, 123456789)},
		{"zulu", "d", "'2024-01-02 03:04:05Z'", at(2024, 1, 2, 3, 4, 5, 0)},
		{"minutes_only", "d", "'2024-01-02 03:04'", at(2024, 1, 2, 3, 4, 0, 0)},
		{"date_only", "dd", "'2024-01-02'", at(2024, 1, 2, 0, 0, 0, 0)},
		{"not_a_time_in_date", "dd", "'hello'", want{other: "hello"}},
		{"invalid_date_in_date", "dd", "'2024-13-45'", want{other: "2024-13-45"}},
		{"time_of_day_only", "d", "'12:30:00'", want{other: "12:30:00"}},
		{"empty_text_in_datetime", "d", "''", want{other: ""}},
		{"unix_integer_in_datetime", "d", "1700000000", want{other: int64(1700000000)}},
		{"julian_real_in_datetime", "d", "2460000.5", want{other: 2460000.5}},
		{"time_text_in_text_column", "tx", "'2024-01-02 03:04:05'", want{other: "2024-01-02 03:04:05"}},
	}
	forEachVariant(t, func(t *testing.T, db *sql.DB, _ testmatrix.Variant) {
		table := freshTable(t, db, "time_parse", "(id INTEGER PRIMARY KEY, d DATETIME, dd DATE, ts TIMESTAMP, tx TEXT)")
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				res, err := db.ExecContext(t.Context(), "INSERT INTO "+table+" ("+tc.col+") VALUES ("+tc.expr+")")
				require.NoError(t, err)
				id, err := res.LastInsertId()
				require.NoError(t, err)
				var got any
				require.NoError(t, db.QueryRowContext(t.Context(),
					"SELECT "+tc.col+" FROM "+table+" WHERE id = ?", id).Scan(&got))
				if tc.want.other != nil {
					require.Equal(t, tc.want.other, got, "value of %s stored in column %s", tc.expr, tc.col)
					if _, isString := tc.want.other.(string); isString {
						var tm time.Time
						err := db.QueryRowContext(t.Context(),
							"SELECT "+tc.col+" FROM "+table+" WHERE id = ?", id).Scan(&tm)
						require.Error(t, err, "a non-time string must not scan into time.Time")
					}
					return
				}
				gt, ok := got.(time.Time)
				require.True(t, ok, "%s in column %s must scan as time.Time, got %T(%v)", tc.expr, tc.col, got, got)
				require.True(t, gt.Equal(tc.want.time), "want %v, got %v", tc.want.time, gt)
				require.Equal(t, time.UTC, gt.Location())
			})
		}
	})
}

// TestTimeFromSQLite reads times written by SQLite's own date functions.
func TestTimeFromSQLite(t *testing.T) {
	cases := []struct {
		name   string
		col    string
		expr   string
		layout string // how the stored text parses
	}{
		{"datetime_now", "d", "datetime('now')", "2006-01-02 15:04:05"},
		{"date_now", "dd", "date('now')", "2006-01-02"},
		{"strftime_millis", "ts", "strftime('%Y-%m-%d %H:%M:%f', 'now')", "2006-01-02 15:04:05.000"},
		{"current_timestamp_default", "c", "", "2006-01-02 15:04:05"},
	}
	forEachVariant(t, func(t *testing.T, db *sql.DB, _ testmatrix.Variant) {
		table := freshTable(t, db, "time_sqlite",
			"(id INTEGER PRIMARY KEY, d DATETIME, dd DATE, ts TIMESTAMP, c DATETIME DEFAULT CURRENT_TIMESTAMP)")
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				q := "INSERT INTO " + table + " (" + tc.col + ") VALUES (" + tc.expr + ")"
				if tc.expr == "" {
					q = "INSERT INTO " + table + " DEFAULT VALUES"
				}
				res, err := db.ExecContext(t.Context(), q)
				require.NoError(t, err)
				id, err := res.LastInsertId()
				require.NoError(t, err)
				var got time.Time
				var text string
				require.NoError(t, db.QueryRowContext(t.Context(),
					"SELECT "+tc.col+", CAST("+tc.col+" AS TEXT) FROM "+table+" WHERE id = ?", id).Scan(&got, &text))
				want, err := time.Parse(tc.layout, text)
				require.NoError(t, err, "SQLite wrote %q", text)
				require.True(t, got.Equal(want), "want %v (from %q), got %v", want, text, got)
				require.Equal(t, time.UTC, got.Location())
				require.Greater(t, got.Year(), 2000, "a plausible current time")
			})
		}
	})
}

// TestTimeInSQL checks that the stored TimeFormat text works with SQLite's
// date functions, and how time values look without a declared type.
func TestTimeInSQL(t *testing.T) {
	when := time.Date(2024, 3, 10, 11, 12, 13, 987654321, time.FixedZone("X", 3600))
	forEachVariant(t, func(t *testing.T, db *sql.DB, _ testmatrix.Variant) {
		table := freshTable(t, db, "time_sql", "(id INTEGER PRIMARY KEY, d DATETIME)")
		mustExec(t, db, "INSERT INTO "+table+" (d) VALUES (?)", when)

		t.Run("sqlite_date_functions_understand_stored_text", func(t *testing.T) {
			var s string
			var jd float64
			require.NoError(t, db.QueryRowContext(t.Context(),
				"SELECT strftime('%Y-%m-%d %H:%M:%S', d), julianday(d) FROM "+table).Scan(&s, &jd))
			require.Equal(t, "2024-03-10 10:12:13", s, "strftime of the stored time (UTC)")
			require.InDelta(t, 2460379.9251, jd, 0.001, "julianday of the stored time")
		})
		t.Run("compare_with_time_argument", func(t *testing.T) {
			var n int64
			require.NoError(t, db.QueryRowContext(t.Context(),
				"SELECT count(*) FROM "+table+" WHERE d > ? AND d < ?",
				when.Add(-time.Second), when.Add(time.Second)).Scan(&n))
			require.EqualValues(t, 1, n, "range query with time.Time arguments")
		})
		t.Run("untyped_expression_is_text", func(t *testing.T) {
			var got any
			require.NoError(t, db.QueryRowContext(t.Context(), "SELECT ?", when).Scan(&got))
			require.Equal(t, when.UTC().Format(libsql.TimeFormat), got,
				"a time.Time argument read back without a declared type is its TimeFormat text")
		})
		t.Run("datetime_now_expression_is_text", func(t *testing.T) {
			var got any
			require.NoError(t, db.QueryRowContext(t.Context(), "SELECT datetime('now')").Scan(&got))
			require.IsType(t, "", got, "an expression has no declared type")
			var tm time.Time
			require.Error(t, db.QueryRowContext(t.Context(), "SELECT datetime('now')").Scan(&tm),
				"without a declared type the value stays text, which database/sql cannot scan into time.Time")
		})
	})
}

// TestTimeOrder stores times a nanosecond, a microsecond, a millisecond or
// a second apart (in shuffled order and in several zones) and checks that
// SQLite's text comparison of the stored values is time order: ORDER BY, >,
// <= and BETWEEN with time.Time arguments return exactly the rows Go's
// time comparison picks. With the earlier "…Z" form, a time with a fraction
// sorted before the whole second it belongs to, and ".55" before ".5".
func TestTimeOrder(t *testing.T) {
	base := time.Date(2024, 3, 10, 12, 0, 0, 0, time.UTC)
	east := time.FixedZone("UTC+05:30", 5*3600+30*60)
	west := time.FixedZone("UTC-08:00", -8*3600)
	// spaced returns base+k*step for each k, in the order given.
	spaced := func(step time.Duration, ks ...int) []time.Time {
		out := make([]time.Time, len(ks))
		for i, k := range ks {
			out[i] = base.Add(time.Duration(k) * step)
		}
		return out
	}
	cases := []struct {
		name  string
		times []time.Time
	}{
		{"nanoseconds", spaced(time.Nanosecond, 3, 0, 10, 1, 100, 2, 999999999, 11)},
		{"microseconds", spaced(time.Microsecond, 5, 1, 0, 10, 2, 999999, 100)},
		{"milliseconds", spaced(time.Millisecond, 550, 5, 500, 0, 1, 55, 999, 100)},
		{"whole_seconds", spaced(time.Second, 3, -1, 0, 59, 1, 2)},
		{"across_a_second_boundary", []time.Time{
			base.Add(-time.Nanosecond), base.Add(time.Nanosecond), base, base.Add(-500 * time.Millisecond),
			base.Add(500 * time.Millisecond), base.Add(-time.Second), base.Add(time.Second - 1), base.Add(time.Second),
		}},
		{"across_day_and_year", []time.Time{
			time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2023, 12, 31, 23, 59, 59, 999999999, time.UTC),
			time.Date(2024, 1, 1, 0, 0, 0, 1, time.UTC), time.Date(2023, 12, 31, 23, 59, 59, 5e8, time.UTC),
		}},
		{"zones_of_one_second", []time.Time{
			base.Add(500 * time.Millisecond).In(east), base.In(west), base.Add(250 * time.Millisecond).In(east),
			base.Add(750 * time.Millisecond).In(west), base.Add(time.Second).In(east),
		}},
	}
	forEachVariant(t, func(t *testing.T, db *sql.DB, _ testmatrix.Variant) {
		table := freshTable(t, db, "time_order", "(id INTEGER PRIMARY KEY, grp TEXT, label TEXT, d DATETIME)")
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				label := func(i int) string { return fmt.Sprintf("t%02d", i) }
				for i, tm := range tc.times {
					mustExec(t, db, "INSERT INTO "+table+" (grp, label, d) VALUES (?, ?, ?)", tc.name, label(i), tm)
				}
				// want returns the labels of the times keep accepts, in
				// time order.
				want := func(keep func(time.Time) bool) []string {
					idx := []int{}
					for i, tm := range tc.times {
						if keep(tm) {
							idx = append(idx, i)
						}
					}
					sort.SliceStable(idx, func(a, b int) bool { return tc.times[idx[a]].Before(tc.times[idx[b]]) })
					out := []string{}
					for _, i := range idx {
						out = append(out, label(i))
					}
					return out
				}
				sel := "SELECT label FROM " + table + " WHERE grp = ? "
				require.Equal(t, want(func(time.Time) bool { return true }),
					queryColumn[string](t, db, sel+"ORDER BY d", tc.name), "ORDER BY d")
				require.Equal(t, want(func(time.Time) bool { return true }),
					queryColumn[string](t, db, sel+"ORDER BY julianday(d), d", tc.name), "ORDER BY agrees with julianday")
				for _, p := range tc.times {
					require.Equal(t, want(p.Before), queryColumn[string](t, db, sel+"AND d > ? ORDER BY d", tc.name, p), "d > %v", p)
					require.Equal(t, want(func(x time.Time) bool { return !x.After(p) }),
						queryColumn[string](t, db, sel+"AND d <= ? ORDER BY d", tc.name, p), "d <= %v", p)
				}
				for _, lo := range tc.times {
					for _, hi := range tc.times {
						require.Equal(t, want(func(x time.Time) bool { return !x.Before(lo) && !x.After(hi) }),
							queryColumn[string](t, db, sel+"AND d BETWEEN ? AND ? ORDER BY d", tc.name, lo, hi),
							"d BETWEEN %v AND %v", lo, hi)
					}
				}
			})
		}
	})
}

// TestTimeOrderWithSQLite mixes the driver's time.Time values with times
// SQLite writes itself (datetime(), strftime('%f'), CURRENT_TIMESTAMP) in
// one column: a whole second is the same text as SQLite's, so = finds it,
// and ORDER BY, > and BETWEEN interleave the two kinds in time order.
func TestTimeOrderWithSQLite(t *testing.T) {
	base := time.Date(2024, 3, 10, 12, 0, 0, 0, time.UTC)
	epoch := base.Unix()
	forEachVariant(t, func(t *testing.T, db *sql.DB, _ testmatrix.Variant) {
		t.Run("whole_second_equals_sqlite_text", func(t *testing.T) {
			var same, sameFn, sameSec int64
			var sqliteText string
			require.NoError(t, db.QueryRowContext(t.Context(),
				"SELECT ? = datetime(?, 'unixepoch'), ? = datetime(?), ? = strftime('%Y-%m-%d %H:%M:%S', ?), datetime(?, 'unixepoch')",
				base, epoch, base, base, base.Add(2*time.Second).In(time.FixedZone("", 3600)), base.Add(2*time.Second), epoch,
			).Scan(&same, &sameFn, &sameSec, &sqliteText))
			require.Equal(t, base.Format("2006-01-02 15:04:05"), sqliteText)
			require.EqualValues(t, 1, same, "a whole-second time.Time is the text SQLite writes for it")
			require.EqualValues(t, 1, sameFn, "datetime() of the stored text is the text itself")
			require.EqualValues(t, 1, sameSec, "a time.Time in another zone is stored in UTC")
		})
		t.Run("interleaved", func(t *testing.T) {
			table := freshTable(t, db, "time_mixed", "(id INTEGER PRIMARY KEY, label TEXT, d DATETIME)")
			// Each row: a label, and either a time.Time argument or an SQL
			// expression by which SQLite writes the time itself.
			rows := []struct {
				label string
				arg   any    // a time.Time, or nil when expr is set
				expr  string // SQL with %d for base's Unix seconds
			}{
				{"go_+1s", base.Add(time.Second), ""},
				{"sqlite_+0.5s_%f", nil, "strftime('%%Y-%%m-%%d %%H:%%M:%%f', %d.5, 'unixepoch')"},
				{"go_-1ms", base.Add(-time.Millisecond), ""},
				{"sqlite_+0s_datetime", nil, "datetime(%d, 'unixepoch')"},
				{"go_+1ns", base.Add(time.Nanosecond), ""},
				{"go_+499ms", base.Add(499 * time.Millisecond), ""},
				{"sqlite_-1s_datetime", nil, "datetime(%d - 1, 'unixepoch')"},
				{"go_+501ms", base.Add(501 * time.Millisecond), ""},
				{"sqlite_+2s_%f", nil, "strftime('%%Y-%%m-%%d %%H:%%M:%%f', %d + 2, 'unixepoch')"},
				{"go_+1.999999999s", base.Add(2*time.Second - 1), ""},
			}
			for _, r := range rows {
				if r.arg != nil {
					mustExec(t, db, "INSERT INTO "+table+" (label, d) VALUES (?, ?)", r.label, r.arg)
				} else {
					mustExec(t, db, "INSERT INTO "+table+" (label, d) VALUES (?, "+fmt.Sprintf(r.expr, epoch)+")", r.label)
				}
			}
			require.Equal(t, []string{
				"sqlite_-1s_datetime", "go_-1ms", "sqlite_+0s_datetime", "go_+1ns", "go_+499ms", "sqlite_+0.5s_%f",
				"go_+501ms", "go_+1s", "go_+1.999999999s", "sqlite_+2s_%f",
			}, queryColumn[string](t, db, "SELECT label FROM "+table+" ORDER BY d"), "ORDER BY d")
			require.Equal(t, []string{"go_+1ns", "go_+499ms", "sqlite_+0.5s_%f", "go_+501ms"},
				queryColumn[string](t, db, "SELECT label FROM "+table+" WHERE d > ? AND d < ? ORDER BY d", base, base.Add(time.Second)),
				"strictly inside the second after base")
			require.Equal(t, []string{"sqlite_+0s_datetime", "go_+1ns", "go_+499ms", "sqlite_+0.5s_%f", "go_+501ms", "go_+1s"},
				queryColumn[string](t, db, "SELECT label FROM "+table+" WHERE d BETWEEN ? AND ? ORDER BY d", base, base.Add(time.Second)),
				"BETWEEN takes both whole seconds, SQLite's and the driver's")
			require.Equal(t, []string{"sqlite_-1s_datetime", "go_-1ms", "sqlite_+0s_datetime"},
				queryColumn[string](t, db, "SELECT label FROM "+table+" WHERE d <= datetime(?) ORDER BY d", base),
				"compared with SQLite's datetime() of a time.Time argument")
			require.Equal(t, []string{"go_+1.999999999s", "sqlite_+2s_%f"},
				queryColumn[string](t, db, "SELECT label FROM "+table+" WHERE d > datetime(?, '+1 second') ORDER BY d", base),
				"compared with SQLite's date arithmetic")
		})
		t.Run("now", func(t *testing.T) {
			// The server shares this machine's clock; 5 s covers a slow
			// request and datetime('now') truncating to the second.
			table := freshTable(t, db, "time_now",
				"(id INTEGER PRIMARY KEY, label TEXT, d DATETIME DEFAULT CURRENT_TIMESTAMP)")
			before, after := time.Now().Add(-5*time.Second), time.Now().Add(5*time.Second)
			mustExec(t, db, "INSERT INTO "+table+" (label, d) VALUES ('go_before', ?), ('go_after', ?)", before, after)
			mustExec(t, db, "INSERT INTO "+table+" (label) VALUES ('current_timestamp')")
			mustExec(t, db, "INSERT INTO "+table+" (label, d) VALUES ('datetime_now', datetime('now'))")
			mustExec(t, db, "INSERT INTO "+table+" (label, d) VALUES ('strftime_now', strftime('%Y-%m-%d %H:%M:%f', 'now'))")
			sqliteRows := []string{"current_timestamp", "datetime_now", "strftime_now"}
			require.ElementsMatch(t, sqliteRows,
				queryColumn[string](t, db, "SELECT label FROM "+table+" WHERE d > ? AND d < ?", before, after), "> and <")
			require.ElementsMatch(t, sqliteRows,
				queryColumn[string](t, db, "SELECT label FROM "+table+" WHERE d BETWEEN ? AND ?", before.Add(time.Nanosecond), after.Add(-time.Nanosecond)), "BETWEEN")
			got := queryColumn[string](t, db, "SELECT label FROM "+table+" ORDER BY d")
			require.Equal(t, "go_before", got[0], "ORDER BY d: %v", got)
			require.Equal(t, "go_after", got[len(got)-1], "ORDER BY d: %v", got)
			require.ElementsMatch(t, []string{"go_before"},
				queryColumn[string](t, db, "SELECT label FROM "+table+" WHERE d < datetime('now', '-1 second')"), "against datetime('now')")
			require.ElementsMatch(t, []string{"go_after"},
				queryColumn[string](t, db, "SELECT label FROM "+table+" WHERE d > datetime('now', '+1 second')"), "against datetime('now')")
		})
	})
}

// TestTimeLegacyForm: databases written by earlier versions hold times in
// the form "2006-01-02 15:04:05.999999999Z"; they still read back as the
// same time.Time, and the one-statement migration docs/GUIDE.md gives turns
// them into the current form, after which they order and compare with new
// values.
func TestTimeLegacyForm(t *testing.T) {
	base := time.Date(2024, 3, 10, 12, 0, 0, 0, time.UTC)
	legacy := []struct {
		text string
		want time.Time
	}{
		{"2024-03-10 12:00:00Z", base},
		{"2024-03-10 12:00:00.5Z", base.Add(500 * time.Millisecond)},
		{"2024-03-10 12:00:00.55Z", base.Add(550 * time.Millisecond)},
		{"2024-03-10 12:00:00.000000001Z", base.Add(time.Nanosecond)},
		{"0001-01-01 00:00:00Z", time.Time{}},
	}
	forEachVariant(t, func(t *testing.T, db *sql.DB, _ testmatrix.Variant) {
		table := freshTable(t, db, "time_legacy", "(id INTEGER PRIMARY KEY, d DATETIME)")
		for _, l := range legacy {
			mustExec(t, db, "INSERT INTO "+table+" (d) VALUES (?)", l.text) // text, as the old driver stored it
		}
		readAll := func(t *testing.T) ([]time.Time, []string) {
			t.Helper()
			rows, err := db.QueryContext(t.Context(), "SELECT d, CAST(d AS TEXT) FROM "+table+" ORDER BY id")
			require.NoError(t, err)
			defer rows.Close()
			var times []time.Time
			var texts []string
			for rows.Next() {
				var tm time.Time
				var s string
				require.NoError(t, rows.Scan(&tm, &s))
				times, texts = append(times, tm), append(texts, s)
			}
			require.NoError(t, rows.Err())
			return times, texts
		}
		times, _ := readAll(t)
		require.Len(t, times, len(legacy))
		for i, l := range legacy {
			require.True(t, times[i].Equal(l.want), "%q read as %v, want %v", l.text, times[i], l.want)
			require.Equal(t, time.UTC, times[i].Location())
		}
		// The old form is not the new one's text: equality with a
		// time.Time argument misses it until the rows are migrated.
		require.Zero(t, countWhere(t, db, table, "d = ?", base), "a legacy row before migration")
		mustExec(t, db, "UPDATE "+table+" SET d = substr(d, 1, length(d) - 1) WHERE d GLOB '*Z'")
		after, texts := readAll(t)
		for i, l := range legacy {
			require.True(t, after[i].Equal(l.want), "%q after migration read as %v", l.text, after[i])
			require.Equal(t, l.want.UTC().Format(libsql.TimeFormat), texts[i], "migrated text")
		}
		require.EqualValues(t, 1, countWhere(t, db, table, "d = ?", base), "= after migration")
		require.EqualValues(t, 3, countWhere(t, db, table, "d > ? AND d < ?", base, base.Add(time.Second)), "a range after migration")
		mustExec(t, db, "INSERT INTO "+table+" (d) VALUES (?)", base.Add(520*time.Millisecond))
		require.Equal(t, []int64{5, 1, 4, 2, 6, 3}, queryColumn[int64](t, db, "SELECT id FROM "+table+" ORDER BY d"),
			"migrated and new rows in time order")
	})
}
