// Package child holds what the benchmark commands set on the processes
// they start (sqld, workers, busy loops), so that none outlives them.
package child
