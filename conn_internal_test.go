package libsql

import (
	"context"
	"database/sql/driver"
	"errors"
	"testing"

	"github.com/gohrana/libsql/codec"
	"github.com/gohrana/libsql/transport"
)

// stateStream is a transport.Stream that only reports a state (Busy, Lost)
// and counts Resets.
type stateStream struct {
	busy, lost bool
	resets     int
}

func (s *stateStream) Send(context.Context, []codec.StreamRequest, bool, *transport.Response) error {
	return errors.New("not used")
}
func (s *stateStream) OpenCursor(context.Context, *codec.Batch, bool, []codec.StreamRequest) (transport.Cursor, error) {
	return nil, errors.New("not used")
}
func (s *stateStream) Isolated() transport.Stream           { return s }
func (s *stateStream) Shared() bool                         { return false }
func (s *stateStream) Open() bool                           { return !s.lost }
func (s *stateStream) Busy() bool                           { return s.busy }
func (s *stateStream) Lost() bool                           { return s.lost }
func (s *stateStream) Reset()                               { s.resets++; s.lost = false }
func (s *stateStream) Version(context.Context) (int, error) { return 3, nil }

// TestConnStreamStateAndThePool: a connection whose stream is Busy (a
// request whose context ended awaits its answers) goes back to no pool and
// is not reused; one whose server stream was Lost while pooled starts a
// new stream quietly; Close closes the stream.
func TestConnStreamStateAndThePool(t *testing.T) {
	tests := []struct {
		name       string
		busy, lost bool
		valid      bool
		resetErr   error
		resets     int
	}{
		{"idle", false, false, true, nil, 0},
		{"busy", true, false, false, driver.ErrBadConn, 0},
		{"lost", false, true, true, nil, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &stateStream{busy: tt.busy, lost: tt.lost}
			c := newConn(s, NewConfig(), nil, nil, false, nil)
			if got := c.IsValid(); got != tt.valid {
				t.Errorf("IsValid %t, want %t", got, tt.valid)
			}
			if err := c.ResetSession(context.Background()); !errors.Is(err, tt.resetErr) || err == nil && tt.resetErr != nil {
				t.Errorf("ResetSession: %v, want %v", err, tt.resetErr)
			}
			if s.resets != tt.resets {
				t.Errorf("%d Resets, want %d", s.resets, tt.resets)
			}
			_ = c.Close()
			if s.resets != tt.resets+1 {
				t.Errorf("Close did not Reset the stream")
			}
		})
	}
}
