package session

import "testing"

func TestReplicationObserve(t *testing.T) {
	tests := []struct {
		name            string
		kept, sent, got uint64
		track           bool
		want            uint64
	}{
		{"first index", 0, 0, 5, true, 5},
		{"higher replaces", 5, 5, 9, true, 9},
		{"lower after a request without index is lag, kept", 9, 0, 4, true, 9},
		{"lower than sent proves a reset", 3845, 3845, 24, true, 24},
		{"reset seen once: a later higher pre-reset kept index is replaced too", 4000, 3845, 24, true, 24},
		{"reset already noticed by another answer", 30, 3845, 24, true, 30},
		{"null index ignored", 9, 9, 0, true, 9},
		{"equal", 9, 9, 9, true, 9},
		{"tracking off keeps nothing", 0, 0, 5, false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := NewReplication(tt.track, 0)
			r.idx.Store(tt.kept)
			r.observe(tt.sent, tt.got)
			if got := r.Index(); got != tt.want {
				t.Fatalf("kept %d, sent %d, got %d: index %d, want %d", tt.kept, tt.sent, tt.got, got, tt.want)
			}
		})
	}
}

func TestReplicationDropAndAdvance(t *testing.T) {
	tests := []struct {
		name       string
		kept, sent uint64
		want       uint64
	}{
		{"the index waited for is dropped", 50, 50, 0},
		{"a higher one kept since is dropped too", 60, 50, 0},
		{"a lower one (a reset seen since) stays", 20, 50, 20},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := NewReplication(true, 0)
			r.idx.Store(tt.kept)
			r.drop(tt.sent)
			if got := r.Index(); got != tt.want {
				t.Fatalf("index %d, want %d", got, tt.want)
			}
		})
	}
	r := NewReplication(false, 0)
	r.Advance(7)
	r.Advance(3)
	if r.Index() != 7 {
		t.Fatalf("Advance: index %d, want 7", r.Index())
	}
	if r.Wait() != DefaultReplicationWait {
		t.Fatalf("wait %v", r.Wait())
	}
}
