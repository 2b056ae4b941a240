package libsql

import (
	"fmt"
	"slices"
	"strconv"
	"time"
)

// dsnParam is one DSN query parameter: its names (the first is the one
// FormatDSN writes, the others aliases), how ParseDSN sets it into a
// Config from one value, and the values FormatDSN writes for a Config
// (none when the field holds its default). The table is the one list of
// parameters: ParseDSN, FormatDSN and the spelling suggestions read it,
// and the README's table is held to it (TestDSNParamsInREADME).
type dsnParam struct {
	names  []string
	repeat bool // may be given several times (each value parsed in turn)
	parse  func(c *Config, name, v string) error
	format func(c *Config) []string
}

// dsnParamTable lists every parameter. tls and transport are read by
// ParseDSN itself too, since they decide the URL's scheme with it.
var dsnParamTable = []dsnParam{
	{names: []string{"authToken", "auth_token"},
		parse: func(c *Config, _, v string) error {
			if c.AuthToken != "" {
				return &DSNError{Msg: "authToken given twice"}
			}
			c.AuthToken = v
			return nil
		},
		format: func(c *Config) []string { return nonZero(c.AuthToken) }},
	{names: []string{"codec"},
		parse: func(c *Config, _, v string) error {
			if v != "" { // "codec=" means the default
				c.Codec = v
			}
			return nil
		},
		format: func(c *Config) []string {
			if c.Codec == DefaultCodec {
				return nil
			}
			return nonZero(c.Codec)
		}},
	{names: []string{"transport"}, // FormatDSN writes it, or a ws:// scheme
		parse: choiceParam(func(c *Config) *string { return &c.Transport }, "transport: want http or ws", "", TransportHTTP, TransportWS)},
	{names: []string{"tls"}}, // libsql:// only: ParseDSN's scheme
	{names: []string{"timeout"},
		parse:  durationParam(func(c *Config) *time.Duration { return &c.Timeout }, parseTimeout),
		format: func(c *Config) []string { return nonZeroDuration(c.Timeout, 0) }},
	{names: []string{"compression"},
		parse: func(c *Config, _, v string) error {
			if v != "" && v != "gzip" && v != "none" && v != "auto" {
				return &DSNError{Msg: "compression: want gzip, none or auto"}
			}
			if v != "auto" {
				c.Compression = v
			}
			return nil
		},
		format: func(c *Config) []string { return nonZero(c.Compression) }},
	{names: []string{"busyTimeout", "_busy_timeout"},
		parse:  durationParam(func(c *Config) *time.Duration { return &c.BusyTimeout }, parseBusyTimeout),
		format: func(c *Config) []string { return nonZeroDuration(c.BusyTimeout, DefaultBusyTimeout) }},
	{names: []string{"_txlock"},
		parse: choiceParam(func(c *Config) *string { return &c.TxLock }, "_txlock: want deferred, immediate or exclusive",
			TxLockDeferred, TxLockImmediate, TxLockExclusive),
		format: func(c *Config) []string { return nonZero(c.TxLock) }},
	{names: []string{"maxWriters"},
		parse: func(c *Config, _, v string) error {
			n, err := strconv.Atoi(v)
			switch {
			case v == "auto":
				n = MaxWritersAuto
			case err != nil || n < 0:
				return &DSNError{Msg: "maxWriters: want auto or a whole number (0: no bound)"}
			}
			c.MaxWriters = n
			return nil
		},
		format: func(c *Config) []string {
			if c.MaxWriters == MaxWritersAuto {
				return nil
			}
			return []string{strconv.Itoa(c.MaxWriters)}
		}},
	{names: []string{"sockets"},
		parse: func(c *Config, _, v string) error {
			if v == "conn" {
				c.Sockets = SocketPerConn
				return nil
			}
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 || n > maxSockets {
				return &DSNError{Msg: fmt.Sprintf("sockets: want conn or a whole number up to %d (0: the default, %d)", maxSockets, DefaultSockets)}
			}
			c.Sockets = n
			return nil
		},
		format: func(c *Config) []string {
			switch c.Sockets {
			case 0:
				return nil
			case SocketPerConn:
				return []string{"conn"}
			}
			return []string{strconv.Itoa(c.Sockets)}
		}},
	{names: []string{"proxy"},
		parse: func(c *Config, _, v string) error {
			if err := checkProxy(v); err != nil {
				return err
			}
			c.Proxy = v
			return nil
		},
		format: func(c *Config) []string { return nonZero(c.Proxy) }},
	{names: []string{"_pragma"}, repeat: true,
		parse: func(c *Config, _, v string) error {
			if _, err := pragmaSQL(v); err != nil {
				return &DSNError{Msg: "_pragma: " + err.Error()}
			}
			c.Pragmas = append(c.Pragmas, v)
			return nil
		},
		format: func(c *Config) []string { return c.Pragmas }},
	{names: []string{"namespace"},
		parse:  func(c *Config, _, v string) error { c.Namespace = v; return nil },
		format: func(c *Config) []string { return nonZero(c.Namespace) }},
	{names: []string{"readYourWrites"},
		parse:  disableParam(func(c *Config) *bool { return &c.DisableReadYourWrites }),
		format: func(c *Config) []string { return disabled(c.DisableReadYourWrites) }},
	{names: []string{"keepStreams"},
		parse:  disableParam(func(c *Config) *bool { return &c.DisableKeptStreams }),
		format: func(c *Config) []string { return disabled(c.DisableKeptStreams) }},
	{names: []string{"replicationWait"},
		parse:  durationParam(func(c *Config) *time.Duration { return &c.ReplicationWait }, parseTimeout),
		format: func(c *Config) []string { return nonZeroDuration(c.ReplicationWait, 0) }},
	{names: []string{"deferredExec", "deferred_exec"},
		parse: func(c *Config, name, v string) error {
			b, err := parseBoolParam(name, v)
			c.DeferredExec = b
			return err
		},
		format: func(c *Config) []string {
			if !c.DeferredExec {
				return nil
			}
			return []string{"true"}
		}},
}

// dsnParamByName finds a parameter by any of its names.
func dsnParamByName(name string) *dsnParam {
	for i := range dsnParamTable {
		for _, n := range dsnParamTable[i].names {
			if n == name {
				return &dsnParamTable[i]
			}
		}
	}
	return nil
}

// dsnParamNames returns every name and alias, for suggestions.
func dsnParamNames() []string {
	var names []string
	for _, p := range dsnParamTable {
		names = append(names, p.names...)
	}
	return names
}

func nonZero(s string) []string {
	if s == "" {
		return nil
	}
	return []string{s}
}

func nonZeroDuration(d, def time.Duration) []string {
	if d == def {
		return nil
	}
	return []string{d.String()}
}

func disabled(b bool) []string {
	if !b {
		return nil
	}
	return []string{"0"}
}

// parseBoolParam reads 1/0, true/false (strconv.ParseBool).
func parseBoolParam(name, v string) (bool, error) {
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, &DSNError{Msg: name + " is not a boolean (1/0, true/false)"}
	}
	return b, nil
}

// disableParam parses a boolean parameter, on by default, into the
// Config's Disable field.
func disableParam(field func(*Config) *bool) func(*Config, string, string) error {
	return func(c *Config, name, v string) error {
		b, err := parseBoolParam(name, v)
		*field(c) = !b
		return err
	}
}

// choiceParam sets the field to a parameter's value, which must be one of
// choices; any other fails with msg.
func choiceParam(field func(*Config) *string, msg string, choices ...string) func(*Config, string, string) error {
	return func(c *Config, _, v string) error {
		if !slices.Contains(choices, v) {
			return &DSNError{Msg: msg}
		}
		*field(c) = v
		return nil
	}
}

// durationParam parses a duration parameter with parse into the field.
func durationParam(field func(*Config) *time.Duration, parse func(string) (time.Duration, error)) func(*Config, string, string) error {
	return func(c *Config, name, v string) error {
		d, err := parse(v)
		if err != nil {
			return &DSNError{Msg: name + ": " + err.Error()}
		}
		*field(c) = d
		return nil
	}
}
