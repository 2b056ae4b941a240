// Package readloop runs the readers of the tests that read a replica while
// it changes (commits applied, a file swapped in): one read, in several
// goroutines, over and over until stopped, counted.
package readloop

import (
	"sync"
	"sync/atomic"
	"testing"
)

// Start runs read in n goroutines, each over and over until the returned
// stop is called. A read that returns ok false is counted as bad; one that
// returns an error fails t and ends its goroutine. stop waits for the
// goroutines and reports how many reads there were and how many were bad.
func Start(t testing.TB, n int, read func() (ok bool, err error)) (stop func() (reads, bad int64)) {
	done := make(chan struct{})
	var reads, bad atomic.Int64
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			for {
				select {
				case <-done:
					return
				default:
				}
				ok, err := read()
				if err != nil {
					t.Error(err)
					return
				}
				reads.Add(1)
				if !ok {
					bad.Add(1)
				}
			}
		})
	}
	return func() (int64, int64) {
		close(done)
		wg.Wait()
		return reads.Load(), bad.Load()
	}
}
