// Package procstat reads what the performance programs measure of their
// own process: its CPU time and its peak resident set size. The bench
// modules share it (bench/cmd/libsql-perf, bench/e2e). Where the platform
// has no getrusage both read 0: not measured.
package procstat
