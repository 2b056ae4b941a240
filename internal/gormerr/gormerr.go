// Package gormerr emulates how gorm.io/driver/sqlite v1.6's Translate
// (GORM's TranslateError) reads an error, so that the driver's tests (root
// and itest) check that *libsql.Error gets GORM's ErrDuplicatedKey and
// ErrForeignKeyViolated without linking GORM:
//
//	if got := gormerr.Translate(err); got != "ErrDuplicatedKey" { ... }
package gormerr

import "encoding/json"

// Message is the shape Translate decodes an error into (v1.6's
// ErrMessage, after mattn/go-sqlite3's sqlite3.Error).
type Message struct {
	Code         int `json:"Code"`
	ExtendedCode int `json:"ExtendedCode"`
	SystemErrno  int `json:"SystemErrno"`
}

// codes is v1.6's errCodes, with GORM's errors by name.
var codes = map[int]string{1555: "ErrDuplicatedKey", 2067: "ErrDuplicatedKey", 787: "ErrForeignKeyViolated"}

// Decode does v1.6's first step: it json.Marshals err and unmarshals that
// into a Message. ok is false where that fails (then Translate returns
// err unchanged).
func Decode(err error) (m Message, ok bool) {
	b, merr := json.Marshal(err)
	if merr != nil {
		return Message{}, false
	}
	if json.Unmarshal(b, &m) != nil {
		return Message{}, false
	}
	return m, true
}

// Translate does what v1.6's Translate does with err, as database/sql
// returned it: the name of the GORM error it returns, or "" when it
// returns err unchanged.
func Translate(err error) string {
	m, ok := Decode(err)
	if !ok {
		return ""
	}
	return codes[m.ExtendedCode]
}
