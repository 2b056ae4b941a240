package libsql

import (
	"database/sql/driver"
	"errors"
	"fmt"

	"github.com/gohrana/libsql/codec"
)

// bindArgs puts the arguments into st the way the statement's parameters
// need them: sqld binds :name/@name/$name only from named_args and ?/?NNN
// only from args.
func bindArgs(st *codec.Stmt, p sqlText, args []driver.NamedValue) error {
	if len(args) == 0 {
		return nil
	}
	named := 0
	for i := range args {
		if args[i].Name != "" {
			named++
		}
	}
	switch {
	case named > 0 && named < len(args):
		return errors.New("libsql: arguments mix positional and named (sql.Named) values; use one style per statement")
	case named > 0:
		// Named arguments the statement does not use are ignored, as in
		// mattn/go-sqlite3.
		for i := range args {
			if p.uses(args[i].Name) {
				st.NamedArgs = append(st.NamedArgs, codec.NamedArg{Name: args[i].Name, Value: toValue(args[i].Value)})
			}
		}
	case p.Named && p.Numeric:
		return errors.New("libsql: the statement mixes ? and named parameters, which the server cannot bind")
	case p.Named:
		// Positional values for :name parameters, bound by index as SQLite
		// numbers them.
		if len(args) != len(p.Names) {
			return fmt.Errorf("libsql: the statement has %d parameters but %d arguments were given", len(p.Names), len(args))
		}
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
