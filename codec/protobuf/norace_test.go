//go:build !race

package protobuf_test

const raceEnabled = false
