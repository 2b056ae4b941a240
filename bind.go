package libsql

import (
	"database/sql/driver"
	"fmt"
	"strings"

	"github.com/gohrana/libsql/codec"
)

// bindArgs puts the arguments into st the way the statement's parameters
// need them: sqld binds :name/@name/$name only from named_args and ?/?NNN
// only from args. The arguments sent must match the parameters exactly
// (PROTOCOL.md §8.1): too few or too many is an ErrArgs error before
// anything is sent. A script of several statements without arguments is
// left to the server (it runs as a sequence, which binds nothing).
func bindArgs(st *codec.Stmt, p sqlText, args []driver.NamedValue) error {
	named := 0
	for i := range args {
		if args[i].Name != "" {
			named++
		}
	}
	switch {
	case len(args) == 0:
		if len(p.Names) > 0 && !p.Multi {
			return argsError(fmt.Sprintf("the statement has %s but no arguments were given", plural(len(p.Names), "parameter")))
		}
	case named > 0 && named < len(args):
		return argsError("arguments mix positional and named (sql.Named) values; use one style per statement")
	case p.Named && p.Numeric:
		return argsError("the statement mixes ? and named parameters, which the server cannot bind")
	case named > 0 && p.Numeric:
		return argsError("the statement's parameters are ? or ?NNN, which take positional arguments, not sql.Named ones")
	case named > 0:
		// Named arguments the statement does not use are ignored, as in
		// mattn/go-sqlite3; each of its parameters needs one.
		for i := range args {
			if p.uses(args[i].Name) {
				st.NamedArgs = append(st.NamedArgs, codec.NamedArg{Name: args[i].Name, Value: toValue(args[i].Value)})
			}
		}
		if missing := p.unbound(st.NamedArgs); len(missing) > 0 {
			st.NamedArgs = nil
			return argsError("no argument for the parameter(s) " + strings.Join(missing, ", "))
		}
	case len(args) != len(p.Names):
		return argsError(fmt.Sprintf("the statement has %s but %s were given", plural(len(p.Names), "parameter"), plural(len(args), "argument")))
	case p.Named:
		// Positional values for :name parameters, bound by index as SQLite
		// numbers them.
		for i := range args {
			st.NamedArgs = append(st.NamedArgs, codec.NamedArg{Name: p.Names[i], Value: toValue(args[i].Value)})
		}
	default:
		st.Args = make([]codec.Value, len(args))
		for i := range args {
			st.Args[i] = toValue(args[i].Value)
		}
	}
	return nil
}

// argsError is the ErrArgs error of arguments that do not fit the
// statement, found before sending it.
func argsError(msg string) *Error {
	return &Error{Code: codeArgsInvalid, Message: msg, safe: true}
}

// plural is "1 parameter" or "2 parameters".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
