//go:build unix

package procstat

import "syscall"

// CPUTime returns the CPU time (user and system) the process has used, in
// nanoseconds.
func CPUTime() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// MaxRSSKB returns the peak resident set size of the process in KiB (Linux
// reports ru_maxrss in KiB).
func MaxRSSKB() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return int64(ru.Maxrss)
}
