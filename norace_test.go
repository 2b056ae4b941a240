//go:build !race

package libsql

// raceEnabled without the race detector; race_test.go sets it with. A build
// tag takes a file of its own.

const raceEnabled = false
