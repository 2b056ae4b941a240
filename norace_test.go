//go:build !race

package libsql

const raceEnabled = false
