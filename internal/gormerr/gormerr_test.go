package gormerr

import (
	"errors"
	"testing"
)

// sqliteErr has the exported fields of mattn/go-sqlite3's sqlite3.Error
// that v1.6 reads.
type sqliteErr struct {
	Code, ExtendedCode, SystemErrno int
}

func (e sqliteErr) Error() string { return "sqlite" }

// unmarshalable cannot be json.Marshaled.
type unmarshalable struct{ C chan int }

func (unmarshalable) Error() string { return "no JSON" }

func TestTranslate(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{sqliteErr{Code: 19, ExtendedCode: 2067}, "ErrDuplicatedKey"},     // UNIQUE
		{sqliteErr{Code: 19, ExtendedCode: 1555}, "ErrDuplicatedKey"},     // PRIMARY KEY
		{sqliteErr{Code: 19, ExtendedCode: 787}, "ErrForeignKeyViolated"}, // FOREIGN KEY
		{sqliteErr{Code: 19, ExtendedCode: 1299}, ""},                     // NOT NULL
		{errors.New("plain"), ""},
		{unmarshalable{C: make(chan int)}, ""},
	} {
		if got := Translate(tc.err); got != tc.want {
			t.Errorf("Translate(%#v) = %q, want %q", tc.err, got, tc.want)
		}
	}
	if m, ok := Decode(sqliteErr{Code: 19, ExtendedCode: 2067, SystemErrno: 2}); !ok || m != (Message{19, 2067, 2}) {
		t.Errorf("Decode = %+v, %t", m, ok)
	}
}
