package grpcweb

import "fmt"

// Code is a gRPC status code.
type Code uint8

// The gRPC status codes this package's users tell apart; any other is
// still reported with its number.
const (
	OK                 Code = 0
	Canceled           Code = 1
	Unknown            Code = 2
	InvalidArgument    Code = 3
	DeadlineExceeded   Code = 4
	NotFound           Code = 5
	PermissionDenied   Code = 7
	ResourceExhausted  Code = 8
	FailedPrecondition Code = 9
	Aborted            Code = 10
	Unimplemented      Code = 12
	Internal           Code = 13
	Unavailable        Code = 14
	Unauthenticated    Code = 16
	maxCode            Code = 16
)

var codeNames = [...]string{
	"OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND",
	"ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION",
	"ABORTED", "OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS",
	"UNAUTHENTICATED",
}

// String returns the code's name as gRPC spells it.
func (c Code) String() string {
	if int(c) < len(codeNames) {
		return codeNames[c]
	}
	return fmt.Sprintf("Code(%d)", uint8(c))
}

// StatusError is a call that the server answered with a status other than
// OK.
type StatusError struct {
	Code    Code
	Message string
}

func (e *StatusError) Error() string {
	if e.Message == "" {
		return "grpc status " + e.Code.String()
	}
	return "grpc status " + e.Code.String() + ": " + e.Message
}
