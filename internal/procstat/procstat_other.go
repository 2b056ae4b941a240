//go:build !unix

package procstat

// CPUTime is not measured on this platform.
func CPUTime() int64 { return 0 }

// MaxRSSKB is not measured on this platform.
func MaxRSSKB() int64 { return 0 }
