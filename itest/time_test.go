package itest

import (
	"database/sql"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gohrana/libsql"
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
	forEachCodec(t, func(t *testing.T, db *sql.DB, _ string) {
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
	forEachCodec(t, func(t *testing.T, db *sql.DB, _ string) {
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
	forEachCodec(t, func(t *testing.T, db *sql.DB, _ string) {
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
	forEachCodec(t, func(t *testing.T, db *sql.DB, _ string) {
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
