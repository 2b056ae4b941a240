//go:build race

package libsql

// raceEnabled with the race detector; norace_test.go sets it without. A
// build tag takes a file of its own.

// raceEnabled is set when the race detector is on: it makes sync.Pool drop
// items at random, so allocation counts are meaningless.
const raceEnabled = true
