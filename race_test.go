//go:build race

package libsql

// raceEnabled is set when the race detector is on: it makes sync.Pool drop
// items at random, so allocation counts are meaningless.
const raceEnabled = true
