//go:build !unix

package workload

func cpuTime() int64 { return 0 }

func maxRSSKB() int64 { return 0 }
