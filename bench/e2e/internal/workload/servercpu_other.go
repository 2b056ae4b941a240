//go:build !linux

package workload

func serverCPUTime(int) int64 { return -1 }
