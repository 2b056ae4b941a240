//go:build !unix

package main

// cpuTime is not measured on this platform.
func cpuTime() int64 { return 0 }
