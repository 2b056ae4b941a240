package embedded

import (
	"context"
	"errors"
	"fmt"
	"net"

	"github.com/gohrana/libsql"
)

// ErrPragma is the error of a PRAGMA that would change the local
// replica's state (its journal mode, a connection setting, a checkpoint):
// the local file belongs to the replication, and connection settings would
// not reach the primary. Run such statements through a connector of the
// driver on the primary.
var ErrPragma = errors.New("embedded: this PRAGMA would change the local replica and is refused")

// ErrNotReplicated matches (errors.Is) the error of a local read that
// waited for a write to be applied longer than the read-your-writes bound
// (WithReadYourWritesWait): the primary may be unreachable, or the sync
// behind.
var ErrNotReplicated = errors.New("embedded: a write made through the connector is not in the local file yet")

// ErrClosed is returned by a Connector after Close.
var ErrClosed = errors.New("embedded: connector closed")

// PrimaryError is a statement that could not reach the primary or had no
// answer from it. Writes and transactions need the primary; local reads
// go on without it.
type PrimaryError struct {
	// MayHaveRun is false when the statement certainly never reached the
	// primary (a refused connection), true when it may have run there.
	MayHaveRun bool
	Err        error
}

func (e *PrimaryError) Error() string {
	ran := "it did not run"
	if e.MayHaveRun {
		ran = "it may have run"
	}
	return fmt.Sprintf("embedded: the primary is unreachable (%s): %v", ran, e.Err)
}

// Unwrap returns the driver's error.
func (e *PrimaryError) Unwrap() error { return e.Err }

// NotReplicatedError is the error of a read that waited for a write in
// vain; it matches ErrNotReplicated.
type NotReplicatedError struct {
	Want    uint64 // the write's replication index
	Applied uint64 // the last frame the local file has
	Err     error  // why the wait ended: the bound or the context
}

func (e *NotReplicatedError) Error() string {
	return fmt.Sprintf("embedded: waited for replication index %d, the local file has %d: %v", e.Want, e.Applied, e.Err)
}

// Is matches ErrNotReplicated.
func (e *NotReplicatedError) Is(target error) bool { return target == ErrNotReplicated }

// Unwrap returns why the wait ended.
func (e *NotReplicatedError) Unwrap() error { return e.Err }

// primaryErr wraps an error of the driver that says the primary was not
// reached or did not answer; others (SQL errors, constraint violations)
// are returned as they are.
func primaryErr(err error) error {
	if err == nil {
		return nil
	}
	var le *libsql.Error
	if errors.As(err, &le) {
		if le.Code != "" || le.HTTPStatus != 0 {
			return err
		}
		return &PrimaryError{MayHaveRun: !le.SafeToRetry(), Err: err}
	}
	var ne net.Error
	if errors.As(err, &ne) || errors.Is(err, context.DeadlineExceeded) {
		return &PrimaryError{MayHaveRun: true, Err: err}
	}
	return err
}
