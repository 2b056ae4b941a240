//go:build race

package protobuf_test

// raceEnabled is set when the race detector is on, which makes allocation
// counts meaningless.
const raceEnabled = true
