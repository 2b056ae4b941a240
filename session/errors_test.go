package session_test

import (
	"context"
	"database/sql/driver"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/gohrana/libsql/codec"
	"github.com/gohrana/libsql/session"
)

func TestErrorClasses(t *testing.T) {
	tests := []struct {
		err  *session.Error
		is   []error
		text string
	}{
		{&session.Error{Code: "SQLITE_CONSTRAINT", Message: "UNIQUE constraint failed: t.a"}, []error{session.ErrConstraint}, "libsql: UNIQUE constraint failed: t.a (SQLITE_CONSTRAINT)"},
		{&session.Error{Code: "SQLITE_BUSY"}, []error{session.ErrBusy}, ""},
		{&session.Error{Code: "SQLITE_LOCKED"}, []error{session.ErrBusy}, ""},
		{&session.Error{Code: "TRANSACTION_BUSY"}, []error{session.ErrBusy}, ""},
		{&session.Error{HTTPStatus: 401, Message: "bad token"}, []error{session.ErrAuth}, "libsql: HTTP Unauthorized: bad token"},
		{&session.Error{HTTPStatus: 403}, []error{session.ErrPermission}, ""},
		{&session.Error{Code: "SQLITE_AUTH"}, []error{session.ErrPermission}, ""},
		{&session.Error{Code: "SQLITE_PERM"}, []error{session.ErrPermission}, ""},
		{&session.Error{Code: "SQL_PARSE_ERROR"}, []error{session.ErrSyntax}, ""},
		{&session.Error{Code: "SQL_INPUT_ERROR"}, []error{session.ErrSyntax}, ""},
		{&session.Error{Code: "SQL_NO_STATEMENT"}, []error{session.ErrSyntax}, ""},
		{&session.Error{Code: "SQL_MANY_STATEMENTS"}, []error{session.ErrSyntax}, ""},
		{&session.Error{HTTPStatus: 429}, []error{session.ErrTooManyRequests}, ""},
		{&session.Error{HTTPStatus: 503}, []error{session.ErrTooManyRequests}, ""},
		{&session.Error{HTTPStatus: 404}, []error{session.ErrNotFound}, ""},
		{&session.Error{Code: "SQLITE_READONLY"}, []error{session.ErrReadOnly}, ""},
		{&session.Error{Code: session.CodeReadOnlyTx}, []error{session.ErrReadOnly}, ""},
		{&session.Error{TxLost: true, Message: "gone", Err: io.EOF}, []error{session.ErrTxLost, io.EOF}, "libsql: transaction lost: gone: EOF"},
		{&session.Error{BadConn: true, Safe: true, Message: "request failed"}, []error{driver.ErrBadConn}, ""},
	}
	all := []error{session.ErrConstraint, session.ErrBusy, session.ErrAuth, session.ErrPermission, session.ErrSyntax,
		session.ErrTooManyRequests, session.ErrNotFound, session.ErrReadOnly, session.ErrTxLost, driver.ErrBadConn}
	for _, tt := range tests {
		for _, class := range all {
			want := false
			for _, c := range tt.is {
				want = want || c == class
			}
			if got := errors.Is(tt.err, class); got != want {
				t.Errorf("errors.Is(%+v, %v) = %v", tt.err, class, got)
			}
		}
		if tt.text != "" && tt.err.Error() != tt.text {
			t.Errorf("text %q, want %q", tt.err.Error(), tt.text)
		}
		if tt.err.SafeToRetry() != tt.err.Safe {
			t.Error("SafeToRetry")
		}
	}
}

func TestLost(t *testing.T) {
	e := session.Lost(&session.Error{Code: "SQLITE_BUSY", BadConn: true})
	if !e.TxLost || e.BadConn || e.Code != "SQLITE_BUSY" {
		t.Fatalf("%+v", e)
	}
	if e := session.Lost(context.Canceled); !e.TxLost || !errors.Is(e, context.Canceled) || !strings.Contains(e.Error(), "interrupted") {
		t.Fatalf("%v", e)
	}
	if e := session.Lost(io.ErrUnexpectedEOF); !e.TxLost || !errors.Is(e, io.ErrUnexpectedEOF) {
		t.Fatalf("%v", e)
	}
}

func TestStatementErrors(t *testing.T) {
	e := session.StmtError(&codec.Error{Code: "SQLITE_CONSTRAINT", Message: "m"})
	if !e.FromStatement() || !session.IsStatementError(e) || !session.HasCode(e, "SQLITE_CONSTRAINT") {
		t.Fatal("StmtError")
	}
	other := &session.Error{Code: "STREAM_EXPIRED", HTTPStatus: 400}
	if other.FromStatement() || session.IsStatementError(other) || session.HasCode(io.EOF, "x") || session.IsSafe(io.EOF) {
		t.Fatal("not from a statement")
	}
}
