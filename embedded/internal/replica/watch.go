package replica

import "sync"

// watch is a value that goroutines can wait on.
type watch struct {
	mu      sync.Mutex
	v       uint64
	changed chan struct{}
}

func (w *watch) get() (uint64, <-chan struct{}) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.changed == nil {
		w.changed = make(chan struct{})
	}
	return w.v, w.changed
}

func (w *watch) set(v uint64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if v == w.v && w.changed != nil {
		return
	}
	w.v = v
	if w.changed != nil {
		close(w.changed)
	}
	w.changed = make(chan struct{})
}
