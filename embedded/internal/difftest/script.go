package difftest

import (
	"bufio"
	"encoding/hex"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/gohrana/libsql/sqlscan"
)

// A Script is a run of the tester: its actors and the ops they ran, in
// order. Its text form, which Format writes and Parse reads, is one line
// per actor and per op:
//
//	# seed 42, scenario offline (comments)
//	actor a offline interval=0 encrypted
//	actor p direct
//	a exec INSERT INTO a_t0 (c0) VALUES (?)
//	  args 7
//	a query SELECT c0 FROM a_t0 ORDER BY 1
//	a exec CREATE TEMP TABLE x (y)
//	  expect refused
//	a sync
//	p exec INSERT INTO s_t0 (c1) VALUES ('x')
type Script struct {
	Comments []string
	Actors   []ActorSpec
	Ops      []Op
}

// An ActorSpec says what an actor is.
type ActorSpec struct {
	Name string
	// Kind is "offline" (a replica with offline writes), "replica" (a
	// replica that writes on the primary) or "direct" (a client of the
	// primary).
	Kind      string
	Interval  time.Duration // the background sync's; 0: none
	Encrypted bool
}

// An Op is one step of an actor.
type Op struct {
	Actor string
	// Kind is exec, query, begin, commit, rollback, sync, push (offline
	// writes sent, nothing pulled), reopen (the replica closed and opened
	// again), kill or restart (the primary, for actor "primary").
	Kind string
	SQL  string
	Args []any
	// Expect is what the op must do other than what the shadow does:
	// "" (the same), or ExpectRefused.
	Expect string
}

// ExpectRefused: the replica refuses the statement at once, with
// embedded.ErrOfflineSQL (the shadow does not run it).
const ExpectRefused = "refused"

// Op kinds.
const (
	OpExec     = "exec"
	OpQuery    = "query"
	OpBegin    = "begin"
	OpCommit   = "commit"
	OpRollback = "rollback"
	OpSync     = "sync"
	OpPush     = "push"
	OpReopen   = "reopen"
	OpKill     = "kill"
	OpRestart  = "restart"
)

// ActorPrimary is the actor of the primary's faults (kill, restart).
const ActorPrimary = "primary"

// Format writes s in its text form.
func (s *Script) Format(w io.Writer) error {
	bw := bufio.NewWriter(w)
	for _, c := range s.Comments {
		fmt.Fprintf(bw, "# %s\n", c)
	}
	for _, a := range s.Actors {
		fmt.Fprintf(bw, "actor %s %s", a.Name, a.Kind)
		if a.Interval > 0 {
			fmt.Fprintf(bw, " interval=%v", a.Interval)
		}
		if a.Encrypted {
			bw.WriteString(" encrypted")
		}
		bw.WriteString("\n")
	}
	for _, op := range s.Ops {
		line := op.Actor + " " + op.Kind
		if op.SQL != "" {
			line += " " + strings.ReplaceAll(op.SQL, "\n", " ")
		}
		bw.WriteString(line + "\n")
		if len(op.Args) > 0 {
			lits := make([]string, len(op.Args))
			for i, a := range op.Args {
				lits[i] = Literal(a)
			}
			bw.WriteString("  args " + strings.Join(lits, ", ") + "\n")
		}
		if op.Expect != "" {
			bw.WriteString("  expect " + op.Expect + "\n")
		}
	}
	return bw.Flush()
}

// String returns s's text form.
func (s *Script) String() string {
	var b strings.Builder
	s.Format(&b)
	return b.String()
}

// Parse reads a script's text form.
func Parse(r io.Reader) (*Script, error) {
	s := &Script{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		switch {
		case trimmed == "":
		case strings.HasPrefix(trimmed, "#"):
			s.Comments = append(s.Comments, strings.TrimSpace(trimmed[1:]))
		case strings.HasPrefix(trimmed, "args "):
			if len(s.Ops) == 0 {
				return nil, fmt.Errorf("line %d: args without an op", n)
			}
			args, err := parseLiterals(trimmed[len("args "):])
			if err != nil {
				return nil, fmt.Errorf("line %d: %w", n, err)
			}
			s.Ops[len(s.Ops)-1].Args = args
		case strings.HasPrefix(trimmed, "expect "):
			if len(s.Ops) == 0 {
				return nil, fmt.Errorf("line %d: expect without an op", n)
			}
			switch e := strings.TrimSpace(trimmed[len("expect "):]); e {
			case ExpectRefused:
				s.Ops[len(s.Ops)-1].Expect = e
			default:
				return nil, fmt.Errorf("line %d: unknown expectation %q", n, e)
			}
		case strings.HasPrefix(trimmed, "actor "):
			a, err := parseActor(strings.Fields(trimmed)[1:])
			if err != nil {
				return nil, fmt.Errorf("line %d: %w", n, err)
			}
			s.Actors = append(s.Actors, a)
		default:
			actor, rest, _ := strings.Cut(trimmed, " ")
			kind, sql, _ := strings.Cut(rest, " ")
			switch kind {
			case OpExec, OpQuery:
				if sql == "" {
					return nil, fmt.Errorf("line %d: %s without SQL", n, kind)
				}
			case OpBegin, OpCommit, OpRollback, OpSync, OpPush, OpReopen, OpKill, OpRestart:
			default:
				return nil, fmt.Errorf("line %d: unknown op %q", n, kind)
			}
			s.Ops = append(s.Ops, Op{Actor: actor, Kind: kind, SQL: sql})
		}
	}
	return s, sc.Err()
}

func parseActor(f []string) (ActorSpec, error) {
	if len(f) < 2 {
		return ActorSpec{}, fmt.Errorf("actor needs a name and a kind")
	}
	a := ActorSpec{Name: f[0], Kind: f[1]}
	switch a.Kind {
	case "offline", "replica", "direct":
	default:
		return a, fmt.Errorf("unknown actor kind %q", a.Kind)
	}
	for _, opt := range f[2:] {
		switch k, v, _ := strings.Cut(opt, "="); k {
		case "interval":
			d, err := time.ParseDuration(v)
			if err != nil {
				return a, err
			}
			a.Interval = d
		case "encrypted":
			a.Encrypted = true
		default:
			return a, fmt.Errorf("unknown actor option %q", opt)
		}
	}
	return a, nil
}

// parseLiterals reads a comma-separated list of SQL literals: NULL,
// integers, reals, strings and blobs, numbers maybe negative.
func parseLiterals(text string) ([]any, error) {
	var out []any
	s := sqlscan.NewScanner(text)
	neg, want := false, true
	for t := s.Next(); t.Kind != sqlscan.EOF; t = s.Next() {
		lit := text[t.Start:t.End]
		switch {
		case t.Kind == sqlscan.Space:
			continue
		case t.Kind == sqlscan.Punct && lit == "," && !want:
			want = true
			continue
		case !want:
			return nil, fmt.Errorf("args: %q where a comma was expected", lit)
		case t.Kind == sqlscan.Punct && lit == "-" && !neg:
			neg = true
			continue
		}
		var v any
		switch t.Kind {
		case sqlscan.Number:
			if i, err := strconv.ParseInt(lit, 10, 64); err == nil {
				if neg {
					i = -i
				}
				v = i
			} else {
				f, err := strconv.ParseFloat(lit, 64)
				if err != nil {
					return nil, fmt.Errorf("args: %q", lit)
				}
				if neg {
					f = -f
				}
				v = f
			}
		case sqlscan.String:
			v = strings.ReplaceAll(lit[1:len(lit)-1], "''", "'")
		case sqlscan.Blob:
			b, err := hex.DecodeString(lit[2 : len(lit)-1])
			if err != nil {
				return nil, fmt.Errorf("args: %q", lit)
			}
			v = b
		case sqlscan.Word:
			if !strings.EqualFold(lit, "NULL") {
				return nil, fmt.Errorf("args: %q", lit)
			}
		default:
			return nil, fmt.Errorf("args: %q", lit)
		}
		if neg && t.Kind != sqlscan.Number {
			return nil, fmt.Errorf("args: - before %q", lit)
		}
		out = append(out, v)
		neg, want = false, false
	}
	if want && len(out) > 0 {
		return nil, fmt.Errorf("args: a trailing comma")
	}
	return out, nil
}
