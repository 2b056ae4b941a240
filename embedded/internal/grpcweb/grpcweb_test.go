package grpcweb

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"testing"
)

func TestReaderMessagesAndTrailers(t *testing.T) {
	var body []byte
	body = append(body, Frame([]byte("one"))...)
	body = append(body, Frame(nil)...)
	trailers := []byte("grpc-status: 9\r\ngrpc-message: NEED%20SNAPSHOT\r\n")
	body = append(body, 0x80, 0, 0, 0, byte(len(trailers)))
	body = append(body, trailers...)

	r := NewReader(bytes.NewReader(body), 0)
	for _, want := range []string{"one", ""} {
		msg, err := r.Next(nil)
		if err != nil || string(msg) != want {
			t.Fatalf("Next = %q, %v; want %q", msg, err, want)
		}
	}
	if _, err := r.Next(nil); err != ErrTrailers {
		t.Fatalf("Next at the trailers: %v", err)
	}
	var se *StatusError
	if err := r.Status().Err(); !errors.As(err, &se) || se.Code != FailedPrecondition || se.Message != "NEED SNAPSHOT" {
		t.Errorf("status %v", err)
	}
	if _, err := NewReader(bytes.NewReader(nil), 0).Next(nil); err != io.EOF {
		t.Errorf("empty body: %v", err)
	}
}

func TestReaderErrors(t *testing.T) {
	tests := []struct {
		name string
		body []byte
		want any // error value or *FormatError type
	}{
		{"cut prefix", []byte{0, 0, 0}, io.ErrUnexpectedEOF},
		{"cut message", []byte{0, 0, 0, 0, 4, 'a'}, io.ErrUnexpectedEOF},
		{"over the limit", []byte{0, 0, 0, 1, 0}, &FormatError{}},
		{"compressed", []byte{1, 0, 0, 0, 0}, &FormatError{}},
		{"trailers without status", append([]byte{0x80, 0, 0, 0, 3}, "a:b"...), &FormatError{}},
		{"trailers bad status", append([]byte{0x80, 0, 0, 0, 15}, "grpc-status: x\n"...), &FormatError{}},
		{"trailers no colon", append([]byte{0x80, 0, 0, 0, 3}, "abc"...), &FormatError{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewReader(bytes.NewReader(tt.body), 100).Next(nil)
			switch w := tt.want.(type) {
			case *FormatError:
				var fe *FormatError
				if !errors.As(err, &fe) {
					t.Fatalf("error %v, want a *FormatError", err)
				}
			case error:
				if err != w {
					t.Fatalf("error %v, want %v", err, w)
				}
			}
		})
	}
}

func TestStatusFromHeader(t *testing.T) {
	tests := []struct {
		h      http.Header
		ok     bool
		code   Code
		msg    string
		hasErr bool
	}{
		{http.Header{}, false, 0, "", false},
		{http.Header{"Grpc-Status": {"0"}}, true, OK, "", false},
		{http.Header{"Grpc-Status": {"9"}, "Grpc-Message": {"NO_HELLO"}}, true, FailedPrecondition, "NO_HELLO", false},
		{http.Header{"Grpc-Status": {"16"}, "Grpc-Message": {"bad%zztoken%"}}, true, Unauthenticated, "bad%zztoken%", false},
		{http.Header{"Grpc-Status": {"17"}}, false, 0, "", true},
		{http.Header{"Grpc-Status": {"-1"}}, false, 0, "", true},
	}
	for _, tt := range tests {
		st, ok, err := StatusFromHeader(tt.h)
		if (err != nil) != tt.hasErr || ok != tt.ok {
			t.Errorf("%v: ok %v err %v", tt.h, ok, err)
			continue
		}
		if ok && (st.Code != tt.code || st.Message != tt.msg) {
			t.Errorf("%v: %+v", tt.h, st)
		}
	}
	if (&Status{Code: OK}).Err() != nil || Code(200).String() != "Code(200)" || Unavailable.String() != "UNAVAILABLE" {
		t.Error("Status.Err or Code.String")
	}
}
