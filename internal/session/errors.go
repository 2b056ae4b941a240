package session

import (
	"context"
	"errors"

	"github.com/gohrana/libsql/transport"
)

// Lost returns err marked as having ended the caller's transaction: a copy
// of a *transport.Error with TxLost set (and Resend cleared: the request is
// no longer another connection's to run), or a *transport.Error wrapping
// anything else (a context's end reads "interrupted").
func Lost(err error) *transport.Error {
	var e *transport.Error
	if errors.As(err, &e) {
		cp := *e
		cp.TxLost, cp.Resend = true, false
		return &cp
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return &transport.Error{TxLost: true, Message: "interrupted", Err: err}
	}
	return &transport.Error{TxLost: true, Err: err}
}

// isSafe reports whether err is a *transport.Error for a request that
// certainly had no effect.
func isSafe(err error) bool {
	var e *transport.Error
	return errors.As(err, &e) && e.Safe
}
