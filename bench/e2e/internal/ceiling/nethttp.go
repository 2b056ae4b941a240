package ceiling

import (
	"context"
	"database/sql"
	"net/http"

	"github.com/gohrana/libsql"
	"github.com/gohrana/libsql/bench/e2e/internal/workload"
)

// The driver with net/http's Transport in place of its own HTTP/1.1
// client (internal/http1), through WithRoundTripper: what a user who
// passes a RoundTripper gets, and what the driver would be on net/http
// alone (docs/dev/PERF.md "The HTTP/1.1 client").

// netHTTP opens a DB on dsn whose requests go through net/http.
func netHTTP(dsn string) (*sql.DB, error) {
	cfg, err := libsql.ParseDSN(dsn)
	if err != nil {
		return nil, err
	}
	rt := http.DefaultTransport.(*http.Transport).Clone()
	rt.MaxIdleConnsPerHost = 64
	cn, err := libsql.NewConnector(cfg, libsql.WithRoundTripper(rt))
	if err != nil {
		return nil, err
	}
	return sql.OpenDB(cn), nil
}

// NetHTTP returns workload w run on the driver over net/http.
func NetHTTP(name string, w func(context.Context, *sql.DB, workload.Options) (workload.Result, error)) func(context.Context, string, workload.Options) (workload.Result, error) {
	return func(ctx context.Context, dsn string, o workload.Options) (workload.Result, error) {
		db, err := netHTTP(dsn)
		if err != nil {
			return workload.Result{}, err
		}
		defer db.Close()
		r, err := w(ctx, db, o)
		r.Workload = name
		return r, err
	}
}
