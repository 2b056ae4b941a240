//go:build race

package codectest

// raceEnabled is set when the race detector is on: it makes sync.Pool drop
// items and instruments memory, so allocation counts mean nothing.
const raceEnabled = true
