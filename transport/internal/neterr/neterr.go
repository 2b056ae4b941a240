// Package neterr reduces the errors of the network libraries under the
// transports to what a user can act on: a dial that failed, and the cause at
// the bottom of a chain of wrappers (websocket: "failed to get reader: failed
// to read frame header: EOF" is the server closing the connection).
package neterr

import (
	"errors"
	"net"
	"net/http"
	"strings"
)

// Dial returns the *net.OpError of a failed dial (connection refused, no
// route, a name that does not resolve, a dial timeout) in err's chain, or nil.
func Dial(err error) *net.OpError {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return op
	}
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return &net.OpError{Op: "dial", Net: "tcp", Err: dns}
	}
	return nil
}

// Root returns the innermost error of err's chain (following the first of
// several joined errors).
func Root(err error) error {
	for {
		var next error
		switch u := err.(type) {
		case interface{ Unwrap() error }:
			next = u.Unwrap()
		case interface{ Unwrap() []error }:
			if errs := u.Unwrap(); len(errs) > 0 {
				next = errs[0]
			}
		}
		if next == nil {
			return err
		}
		err = next
	}
}

// StatusMessage is the message of a plain-text error body that came with an
// HTTP status. sqld starts it with the status text and quotes the reason in
// backticks ("Unauthorized: `The JWT is invalid`"); the status is the
// error's own, so only the reason is kept.
func StatusMessage(body string, status int) string {
	msg := strings.TrimSpace(body)
	msg = strings.TrimPrefix(msg, http.StatusText(status)+": ")
	if len(msg) >= 2 && msg[0] == '`' && msg[len(msg)-1] == '`' && !strings.Contains(msg[1:len(msg)-1], "`") {
		msg = msg[1 : len(msg)-1]
	}
	return msg
}
