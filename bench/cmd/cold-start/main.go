// Command cold-start times what a serverless function does: a new process
// opens the database, runs one query and exits. It runs that process again
// and again, through a proxy that adds a round-trip time and counts the
// connections and HTTP requests each one made, against a sqld of its own,
// over HTTP and over WebSocket. The floor is the round trips the protocol
// needs: one over HTTP (the query's request), two over WebSocket (the
// upgrade, then the hello with the query).
//
//	go run ./cmd/cold-start                   # 20 ms, 7 processes each
//	go run ./cmd/cold-start -rtt 0 -n 21
//
// docs/dev/PERF.md has a run.
package main

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"strings"
	"time"

	_ "github.com/gohrana/libsql"
	"github.com/gohrana/libsql/bench/internal/delayproxy"
	"github.com/gohrana/libsql/bench/internal/harness"
	"github.com/gohrana/libsql/internal/sqldproc"
)

// childEnv carries a child's DSN; a process started with it is a child.
const childEnv = "LIBSQL_COLD_START_DSN"

func main() {
	if dsn := os.Getenv(childEnv); dsn != "" {
		child(dsn)
		return
	}
	rtt := flag.Duration("rtt", 20*time.Millisecond, "round-trip time to add")
	n := flag.Int("n", 7, "processes per transport (the median is reported)")
	flag.Parse()
	bin, err := sqldproc.Find(context.Background(), "LIBSQL_SQLD")
	if err != nil {
		log.Fatal("cold-start: ", err)
	}
	dir, err := os.MkdirTemp("", "cold-start-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	srv, err := sqldproc.Start(context.Background(), sqldproc.Config{Bin: bin, Dir: dir})
	if err != nil {
		log.Fatal("cold-start: ", err)
	}
	defer srv.Stop()
	proxy, err := delayproxy.New(srv.Addr(), *rtt)
	if err != nil {
		log.Fatal(err)
	}
	defer proxy.Close()
	self, err := os.Executable()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s, %v of round trip, %d processes each; medians\n\n", sqldproc.Version(context.Background(), bin), *rtt, *n)
	fmt.Println("| transport | process start to exit | open to answer | connections | HTTP requests | floor (round trips) |")
	fmt.Println("|---|---|---|---|---|---|")
	for _, tp := range []struct {
		name, scheme string
		floor        int
	}{{"http", "http", 1}, {"ws", "ws", 2}} {
		var total, query []time.Duration
		var counts delayproxy.Counts
		for range *n {
			before := proxy.Counts()
			start := time.Now()
			cmd := exec.Command(self)
			cmd.Env = append(os.Environ(), childEnv+"="+tp.scheme+"://"+strings.TrimPrefix(proxy.URL(), "http://"))
			out, err := cmd.Output()
			if err != nil {
				log.Fatalf("cold-start: child over %s: %v\n%s", tp.name, err, out)
			}
			total = append(total, time.Since(start))
			d, err := time.ParseDuration(strings.TrimSpace(string(out)))
			if err != nil {
				log.Fatalf("cold-start: child said %q", out)
			}
			query = append(query, d)
			counts = proxy.Counts().Minus(before)
		}
		fmt.Printf("| %s | %v | %v | %d | %d | %d: %v |\n", tp.name, harness.Median(total), harness.Median(query), counts.Conns, counts.Requests,
			tp.floor, time.Duration(tp.floor)**rtt)
	}
}

// child opens the database, runs one query, and prints how long that took.
func child(dsn string) {
	start := time.Now()
	db, err := sql.Open("libsql", dsn)
	if err != nil {
		log.Fatal(err)
	}
	var one int
	if err := db.QueryRow("SELECT 1").Scan(&one); err != nil || one != 1 {
		log.Fatalf("SELECT 1: %d, %v", one, err)
	}
	fmt.Println(time.Since(start))
	db.Close()
}
