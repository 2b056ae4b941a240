//go:build linux

package loopback

import (
	"net"
	"strconv"
	"sync"
	"testing"
)

// Port, the process-wide allocator, never repeats itself, not even under
// concurrent callers and across its blocks, and stays out of the
// ephemeral range; every port it returns was free.
func TestPortDistinct(t *testing.T) {
	t.Parallel()
	const callers, each = 4, blockSize / 2 // more than a block in all
	lo, hi := ephemeralRange()
	var mu sync.Mutex
	seen := map[int]bool{}
	var wg sync.WaitGroup
	for range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				p, err := Port()
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				if seen[p] {
					t.Errorf("port %d handed out twice", p)
				}
				seen[p] = true
				mu.Unlock()
				if p >= lo && p <= hi {
					t.Errorf("port %d is in the ephemeral range %d-%d", p, lo, hi)
				}
			}
		}()
	}
	wg.Wait()
	if len(seen) != callers*each {
		t.Fatalf("%d ports, want %d", len(seen), callers*each)
	}
}

// An allocator skips the ports that are taken and goes on to another
// block when its own is used up.
func TestAllocatorSkipsBusyPorts(t *testing.T) {
	t.Parallel()
	a := testAllocator(t.TempDir(), 20000, 20005, map[int]bool{20001: true, 20002: true, 20003: true})
	var got []int
	for {
		p, err := a.port()
		if err != nil {
			break
		}
		got = append(got, p)
	}
	// The block a starts with depends on the pid; the rest follow round.
	want := map[int]bool{20000: true, 20004: true, 20005: true}
	if len(got) != len(want) {
		t.Fatalf("ports %v, want those of %v", got, want)
	}
	for _, p := range got {
		if !want[p] {
			t.Fatalf("ports %v, want those of %v", got, want)
		}
	}
}

// Two allocators sharing a lock directory (two test binaries) never
// claim the same block, and a block is free again once its holder is
// gone, even killed.
func TestAllocatorBlocksAcrossProcesses(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	const first, last = 30000, 30003 // two blocks: 30000 and 30002
	other := startHelper(t, "claim "+dir+" "+strconv.Itoa(first)+" "+strconv.Itoa(last))
	otherBlock := other.port(t)

	a := testAllocator(dir, first, last, nil)
	if err := a.claim(); err != nil {
		t.Fatal(err)
	}
	if a.next == otherBlock {
		t.Fatalf("both processes claimed block %d", a.next)
	}
	if err := a.claim(); err == nil {
		t.Fatalf("claimed block %d as well, though the other process holds it", a.next)
	}

	other.Kill()
	b := testAllocator(dir, first, last, nil) // a's blocks are a's for good
	if err := b.claim(); err != nil {
		t.Fatalf("the killed process's block: %v", err)
	}
	if b.next != otherBlock {
		t.Fatalf("claimed block %d, want the killed process's %d", b.next, otherBlock)
	}
}

// Blocks that overlap the ephemeral range are left out.
func TestAllocatorAvoidsEphemeralRange(t *testing.T) {
	t.Parallel()
	a := testAllocator(t.TempDir(), 40000, 40005, nil)
	a.ephemeral = func() (int, int) { return 40001, 40003 } // overlaps 40000 and 40002
	p, err := a.port()
	if err != nil {
		t.Fatal(err)
	}
	if p != 40004 {
		t.Fatalf("port %d, want 40004, the first outside the ephemeral range", p)
	}
	if err := a.claim(); err == nil {
		t.Fatalf("claimed block %d, which overlaps the ephemeral range", a.next)
	}
}

// free tells a port something listens on from one nothing does.
func TestFree(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if free(l.Addr().(*net.TCPAddr).Port) {
		t.Error("a port with a listener is free")
	}
	p, err := Port()
	if err != nil {
		t.Fatal(err)
	}
	if !free(p) {
		t.Errorf("port %d from Port is not free", p)
	}
}
