package codec

// This file holds the Hrana 3 messages that the driver sends and receives
// over HTTP (see the Hrana 3 spec and sqld's proto.rs). They are plain Go
// values with no JSON tags: each codec owns its wire mapping.
//
// Optional wire fields that the driver needs to tell apart from a zero value
// carry a Has* flag; a JSON null and an absent field both decode as "not
// present".

// RequestType tags a StreamRequest and the StreamResponse it produces.
// The values are the member numbers of the Protobuf oneofs StreamRequest
// and StreamResponse.
type RequestType uint8

// The stream request types used over HTTP.
const (
	RequestUnknown RequestType = iota
	RequestClose
	RequestExecute
	RequestBatch
	RequestSequence
	RequestDescribe
	RequestStoreSQL
	RequestCloseSQL
	RequestGetAutocommit
)

var requestTypeNames = [...]string{
	RequestUnknown:       "",
	RequestClose:         "close",
	RequestExecute:       "execute",
	RequestBatch:         "batch",
	RequestSequence:      "sequence",
	RequestDescribe:      "describe",
	RequestStoreSQL:      "store_sql",
	RequestCloseSQL:      "close_sql",
	RequestGetAutocommit: "get_autocommit",
}

// String returns the wire name of the request type.
func (t RequestType) String() string { return wireName(requestTypeNames[:], t) }

// ParseRequestType maps a wire name to its RequestType; unknown names give
// RequestUnknown.
func ParseRequestType(name []byte) RequestType {
	return parseWireName[RequestType](requestTypeNames[:], name)
}

// wireName is the String method of the enums whose values index a table of
// wire names: names[t], or "" for a value past the table.
func wireName[T ~uint8](names []string, t T) string {
	if int(t) < len(names) {
		return names[t]
	}
	return ""
}

// parseWireName is the inverse of wireName: the value whose name is name,
// or 0 (each enum's unknown value, whose empty name never matches) if none
// is.
func parseWireName[T ~uint8, S ~string | ~[]byte](names []string, name S) T {
	for i := 1; i < len(names); i++ {
		if names[i] == string(name) {
			return T(i)
		}
	}
	return 0
}

// socketTypes[t] is the WebSocket request type that does what t does.
var socketTypes = [...]SocketRequestType{
	RequestUnknown:       SocketUnknown,
	RequestClose:         SocketCloseStream,
	RequestExecute:       SocketExecute,
	RequestBatch:         SocketBatch,
	RequestSequence:      SocketSequence,
	RequestDescribe:      SocketDescribe,
	RequestStoreSQL:      SocketStoreSQL,
	RequestCloseSQL:      SocketCloseSQL,
	RequestGetAutocommit: SocketGetAutocommit,
}

// SocketType returns the request type over WebSocket that does what t does
// over HTTP: the one of the same name, SocketCloseStream for RequestClose,
// SocketUnknown for RequestUnknown and unknown values. The responses of the
// two carry the same members, so that a codec can decode stream and socket
// responses alike, by the SocketRequestType.
func (t RequestType) SocketType() SocketRequestType {
	if int(t) < len(socketTypes) {
		return socketTypes[t]
	}
	return SocketUnknown
}

// HasResult reports whether a response of type t carries a result
// (execute, batch and describe; the result is optional). Decoders ignore
// the result of the other types.
func (t RequestType) HasResult() bool { return t.SocketType().HasResult() }

// StreamType is SocketType's inverse: the request type over HTTP that does
// what t does over WebSocket, RequestUnknown for the requests that have none
// (open_stream and the cursor's).
func (t SocketRequestType) StreamType() RequestType {
	for rt, st := range socketTypes {
		if st == t && t != SocketUnknown {
			return RequestType(rt)
		}
	}
	return RequestUnknown
}

// PipelineRequest is the body of POST /v3/pipeline (and /v2/pipeline).
type PipelineRequest struct {
	Baton    string // "" starts a new stream (sent as null)
	Requests []StreamRequest
}

// StreamRequest is one request inside a pipeline.
type StreamRequest struct {
	Type  RequestType
	Stmt  Stmt   // RequestExecute
	Batch Batch  // RequestBatch
	SQL   string // RequestSequence, RequestDescribe, RequestStoreSQL
	SQLID int32  // RequestStoreSQL, RequestCloseSQL
	// ReplicationIndex (RequestSequence, RequestDescribe), if not 0, makes
	// a replica wait until it has applied that frame of its primary's log
	// before it runs the request (sqld's replication_index extension).
	ReplicationIndex uint64
}

// Stmt is one SQL statement with its arguments.
type Stmt struct {
	SQL       string
	SQLID     int32 // used instead of SQL when HasSQLID
	HasSQLID  bool
	Args      []Value    // positional; omitted from the wire when empty
	NamedArgs []NamedArg // named; omitted from the wire when empty
	WantRows  bool
	// ReplicationIndex, if not 0, makes a replica wait until it has
	// applied that frame before it runs the statement; omitted when 0.
	// Only an execute's statement carries it: a batch has its own.
	ReplicationIndex uint64
}

// NamedArg is a named statement argument. Name includes its prefix
// character (":a", "@a", "$a").
type NamedArg struct {
	Name  string
	Value Value
}

// Batch is a list of statements with optional conditions.
type Batch struct {
	Steps []BatchStep
	// ReplicationIndex, if not 0, makes a replica wait until it has
	// applied that frame before it runs the batch; omitted when 0.
	ReplicationIndex uint64
}

// BatchStep is one statement of a Batch.
type BatchStep struct {
	Condition *BatchCond // nil: always run
	Stmt      Stmt
}

// CondType tags a BatchCond.
type CondType uint8

// The batch condition types.
const (
	CondOK CondType = iota + 1
	CondError
	CondNot
	CondAnd
	CondOr
	CondIsAutocommit
)

// BatchCond is a condition on earlier steps of a batch.
type BatchCond struct {
	Type  CondType
	Step  uint32      // CondOK, CondError
	Cond  *BatchCond  // CondNot
	Conds []BatchCond // CondAnd, CondOr
}

// CursorRequest is the body of POST /v3/cursor.
type CursorRequest struct {
	Baton string
	Batch Batch
}

// PipelineResponse is the body of a successful pipeline response.
type PipelineResponse struct {
	Baton   string // "" when the server closed the stream (null)
	BaseURL string // "" when null
	Results []StreamResult
}

// Reset empties the response while keeping its allocated capacity, so that a
// decoder can reuse it.
func (r *PipelineResponse) Reset() {
	r.Baton = ""
	r.BaseURL = ""
	r.Results = r.Results[:0]
}

// StreamResult is the outcome of one StreamRequest: either OK with a
// Response, or an Error.
type StreamResult struct {
	OK       bool
	Response StreamResponse // when OK
	Error    Error          // when !OK
}

// StreamResponse is the payload of an OK StreamResult.
type StreamResponse struct {
	Type         RequestType
	Result       StmtResult     // RequestExecute
	Batch        BatchResult    // RequestBatch
	Describe     DescribeResult // RequestDescribe
	IsAutocommit bool           // RequestGetAutocommit
}

// Col describes one result column. Decltype is "" when the server sent null.
type Col struct {
	Name     string
	Decltype string
}

// StmtResult is the result of one statement.
type StmtResult struct {
	Cols []Col
	// Values holds the rows back to back: row i is
	// Values[i*len(Cols) : (i+1)*len(Cols)]. Decoders reject rows whose
	// length differs from len(Cols).
	Values              []Value
	NumRows             int
	AffectedRowCount    uint64
	LastInsertRowID     int64
	HasLastInsertRowID  bool
	ReplicationIndex    uint64
	HasReplicationIndex bool
	RowsRead            uint64
	RowsWritten         uint64
	QueryDurationMS     float64
}

// Row returns row i of the result.
func (r *StmtResult) Row(i int) []Value {
	n := len(r.Cols)
	return r.Values[i*n : (i+1)*n : (i+1)*n]
}

// StepStatus says what happened to one step of a batch.
type StepStatus uint8

// The step outcomes.
const (
	StepSkipped StepStatus = iota // neither result nor error: the condition was false
	StepOK
	StepFailed
)

// StepOutcome is one step of a BatchResult.
type StepOutcome struct {
	Status StepStatus
	Result StmtResult // StepOK
	Error  Error      // StepFailed
}

// BatchResult is the result of a batch. Steps has max(len(step_results),
// len(step_errors)) entries; a step with both a result and an error is a
// decoding error.
type BatchResult struct {
	Steps               []StepOutcome
	ReplicationIndex    uint64
	HasReplicationIndex bool
}

// DescribeResult is the result of a describe request.
type DescribeResult struct {
	Params     []DescribeParam
	Cols       []Col
	IsExplain  bool
	IsReadonly bool
}

// DescribeParam is one parameter of a described statement; Name is "" for
// anonymous parameters.
type DescribeParam struct {
	Name string
}

// Error is a Hrana error object.
type Error struct {
	Message string
	Code    string
}

// CursorHeader is the first line of a cursor response.
type CursorHeader struct {
	Baton   string
	BaseURL string
}

// EntryType tags a CursorEntry.
type EntryType uint8

// The cursor entry types. EntryUnknown covers types this package does not
// know; readers skip them.
const (
	EntryUnknown EntryType = iota
	EntryStepBegin
	EntryStepEnd
	EntryStepError
	EntryRow
	EntryError
	EntryReplicationIndex
)

// ParseEntryType maps a cursor entry's wire type to its EntryType; unknown
// names give EntryUnknown.
func ParseEntryType[S ~string | ~[]byte](name S) EntryType {
	switch string(name) {
	case "step_begin":
		return EntryStepBegin
	case "step_end":
		return EntryStepEnd
	case "step_error":
		return EntryStepError
	case "row":
		return EntryRow
	case "error":
		return EntryError
	case "replication_index":
		return EntryReplicationIndex
	}
	return EntryUnknown
}

// CursorEntry is one line of a cursor response after the header.
type CursorEntry struct {
	Type                EntryType
	Step                uint32 // EntryStepBegin, EntryStepError
	Cols                []Col  // EntryStepBegin
	Row                 []Value
	AffectedRowCount    uint64 // EntryStepEnd
	LastInsertRowID     int64  // EntryStepEnd
	HasLastInsertRowID  bool
	Error               Error  // EntryStepError, EntryError
	ReplicationIndex    uint64 // EntryReplicationIndex
	HasReplicationIndex bool
}

// Reset empties the entry while keeping its allocated capacity.
func (e *CursorEntry) Reset() {
	cols, row := e.Cols[:0], e.Row[:0]
	*e = CursorEntry{Cols: cols, Row: row}
}
