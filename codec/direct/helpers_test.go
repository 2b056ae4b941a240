package direct

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/gohrana/libsql/codec"
)

// This file renders decoded messages as short, complete text, so that
// tests can state expectations compactly and compare two decodes.

func dumpValues(vs []codec.Value) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = v.String()
	}
	return strings.Join(parts, ",")
}

func dumpCols(cs []codec.Col) string {
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = c.Name
		if c.Decltype != "" {
			parts[i] += ":" + c.Decltype
		}
	}
	return "[" + strings.Join(parts, ",") + "]"
}

func dumpStmt(r *codec.StmtResult) string {
	var b strings.Builder
	b.WriteString("cols=" + dumpCols(r.Cols) + " rows=[")
	n := len(r.Cols)
	if r.NumRows*n != len(r.Values) {
		fmt.Fprintf(&b, "BAD %d rows for %d values", r.NumRows, len(r.Values))
	} else {
		for i := 0; i < r.NumRows; i++ {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString("[" + dumpValues(r.Row(i)) + "]")
		}
	}
	b.WriteByte(']')
	if r.AffectedRowCount != 0 {
		fmt.Fprintf(&b, " arc=%d", r.AffectedRowCount)
	}
	if r.HasLastInsertRowID || r.LastInsertRowID != 0 {
		fmt.Fprintf(&b, " lid=%d/%v", r.LastInsertRowID, r.HasLastInsertRowID)
	}
	if r.HasReplicationIndex || r.ReplicationIndex != 0 {
		fmt.Fprintf(&b, " ri=%d/%v", r.ReplicationIndex, r.HasReplicationIndex)
	}
	if r.RowsRead != 0 {
		fmt.Fprintf(&b, " rr=%d", r.RowsRead)
	}
	if r.RowsWritten != 0 {
		fmt.Fprintf(&b, " rw=%d", r.RowsWritten)
	}
	if r.QueryDurationMS != 0 {
		fmt.Fprintf(&b, " ms=%s", strconv.FormatFloat(r.QueryDurationMS, 'g', -1, 64))
	}
	return b.String()
}

func dumpErr(e *codec.Error) string {
	return fmt.Sprintf("%q/%q", e.Message, e.Code)
}

func dumpBatch(r *codec.BatchResult) string {
	var b strings.Builder
	b.WriteString("steps=[")
	for i := range r.Steps {
		st := &r.Steps[i]
		if i > 0 {
			b.WriteByte(' ')
		}
		switch st.Status {
		case codec.StepOK:
			b.WriteString("ok{" + dumpStmt(&st.Result) + "}")
		case codec.StepFailed:
			b.WriteString("failed{" + dumpErr(&st.Error) + "}")
		case codec.StepSkipped:
			b.WriteString("skipped")
		default:
			fmt.Fprintf(&b, "status%d", st.Status)
		}
	}
	b.WriteByte(']')
	if r.HasReplicationIndex || r.ReplicationIndex != 0 {
		fmt.Fprintf(&b, " ri=%d/%v", r.ReplicationIndex, r.HasReplicationIndex)
	}
	return b.String()
}

func dumpResult(r *codec.StreamResult) string {
	if !r.OK {
		return "error " + dumpErr(&r.Error)
	}
	resp := &r.Response
	s := "ok " + resp.Type.String()
	switch resp.Type {
	case codec.RequestExecute:
		s += " " + dumpStmt(&resp.Result)
	case codec.RequestBatch:
		s += " " + dumpBatch(&resp.Batch)
	case codec.RequestDescribe:
		d := &resp.Describe
		ps := make([]string, len(d.Params))
		for i, p := range d.Params {
			ps[i] = strconv.Quote(p.Name)
		}
		s += fmt.Sprintf(" params=[%s] cols=%s explain=%v readonly=%v", strings.Join(ps, ","), dumpCols(d.Cols), d.IsExplain, d.IsReadonly)
	case codec.RequestGetAutocommit:
		s += fmt.Sprint(" ", resp.IsAutocommit)
	}
	return s
}

// dumpPipeline renders a pipeline response; results are separated by "; ".
func dumpPipeline(r *codec.PipelineResponse) string {
	parts := []string{fmt.Sprintf("baton=%q url=%q", r.Baton, r.BaseURL)}
	for i := range r.Results {
		parts = append(parts, dumpResult(&r.Results[i]))
	}
	return strings.Join(parts, "; ")
}

func dumpEntry(e *codec.CursorEntry) string {
	var b strings.Builder
	names := [...]string{"unknown", "step_begin", "step_end", "step_error", "row", "error", "replication_index"}
	if int(e.Type) < len(names) {
		b.WriteString(names[e.Type])
	} else {
		fmt.Fprintf(&b, "type%d", e.Type)
	}
	if e.Step != 0 {
		fmt.Fprintf(&b, " step=%d", e.Step)
	}
	if len(e.Cols) > 0 {
		b.WriteString(" cols=" + dumpCols(e.Cols))
	}
	if len(e.Row) > 0 {
		b.WriteString(" row=[" + dumpValues(e.Row) + "]")
	}
	if e.AffectedRowCount != 0 {
		fmt.Fprintf(&b, " arc=%d", e.AffectedRowCount)
	}
	if e.HasLastInsertRowID || e.LastInsertRowID != 0 {
		fmt.Fprintf(&b, " lid=%d/%v", e.LastInsertRowID, e.HasLastInsertRowID)
	}
	if e.Error != (codec.Error{}) {
		b.WriteString(" error=" + dumpErr(&e.Error))
	}
	if e.HasReplicationIndex || e.ReplicationIndex != 0 {
		fmt.Fprintf(&b, " ri=%d/%v", e.ReplicationIndex, e.HasReplicationIndex)
	}
	return b.String()
}

// full renders every field of v, for comparisons that must miss nothing
// (Values print through their String method, which tells text from blobs
// and -0 from 0).
func full(v any) string { return fmt.Sprintf("%+v", v) }
