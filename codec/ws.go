package codec

// This file holds the messages of Hrana over WebSocket (the "hrana2",
// "hrana3" and "hrana3-protobuf" subprotocols; libsql-server's
// hrana/ws/proto.rs). A socket carries many streams: the client names them
// (stream_id), names its requests (request_id) and its cursors (cursor_id),
// and the server answers each request by its id, in any order.
//
// The statements, batches and results inside are the types of proto.go.

// SocketRequestType tags a SocketRequest and the SocketResponse it
// produces. The values are in the order of the Protobuf oneof: the field
// number of a type in RequestMsg and ResponseOkMsg is its value plus one.
type SocketRequestType uint8

// The request types over WebSocket.
const (
	SocketUnknown SocketRequestType = iota
	SocketOpenStream
	SocketCloseStream
	SocketExecute
	SocketBatch
	SocketOpenCursor
	SocketCloseCursor
	SocketFetchCursor
	SocketSequence
	SocketDescribe
	SocketStoreSQL
	SocketCloseSQL
	SocketGetAutocommit
)

var socketRequestTypeNames = [...]string{
	SocketUnknown:       "",
	SocketOpenStream:    "open_stream",
	SocketCloseStream:   "close_stream",
	SocketExecute:       "execute",
	SocketBatch:         "batch",
	SocketOpenCursor:    "open_cursor",
	SocketCloseCursor:   "close_cursor",
	SocketFetchCursor:   "fetch_cursor",
	SocketSequence:      "sequence",
	SocketDescribe:      "describe",
	SocketStoreSQL:      "store_sql",
	SocketCloseSQL:      "close_sql",
	SocketGetAutocommit: "get_autocommit",
}

// String returns the wire name of the request type.
func (t SocketRequestType) String() string { return wireName(socketRequestTypeNames[:], t) }

// ParseSocketRequestType returns the type with the given wire name, or
// SocketUnknown.
func ParseSocketRequestType[S ~string | ~[]byte](name S) SocketRequestType {
	return parseWireName[SocketRequestType](socketRequestTypeNames[:], name)
}

// HasResult reports whether a response of type t carries a result
// (execute, batch and describe; the result is optional): a StmtResult, a
// BatchResult or a DescribeResult. Decoders ignore the result of the other
// types. This is the one definition the codecs use, for stream responses
// too (RequestType.SocketType).
func (t SocketRequestType) HasResult() bool {
	return t == SocketExecute || t == SocketBatch || t == SocketDescribe
}

// SocketRequest is the "request" client message: one request and the id
// its response will carry. Which fields go on the wire depends on Type:
//
//	open_stream, close_stream, get_autocommit: StreamID
//	execute:        StreamID, Stmt, ReplicationIndex
//	batch:          StreamID, Batch
//	open_cursor:    StreamID, CursorID, Batch
//	close_cursor:   CursorID
//	fetch_cursor:   CursorID, MaxCount
//	sequence, describe: StreamID, SQL (or SQLID when HasSQLID), ReplicationIndex
//	store_sql:      SQLID, SQL
//	close_sql:      SQLID
//
// ReplicationIndex 0 means absent (sqld's indexes start at 1). Over
// WebSocket sqld reads an execute's index from the request, not from its
// Stmt.
type SocketRequest struct {
	RequestID        int32
	Type             SocketRequestType
	StreamID         int32
	CursorID         int32
	MaxCount         uint32
	Stmt             Stmt
	Batch            Batch
	SQL              string
	SQLID            int32
	HasSQLID         bool // sequence and describe name stored SQL by SQLID
	ReplicationIndex uint64
}

// ServerMsgType tags a ServerMsg.
type ServerMsgType uint8

// The server message types.
const (
	ServerMsgUnknown ServerMsgType = iota
	ServerHelloOK
	ServerHelloError
	ServerResponseOK
	ServerResponseError
)

var serverMsgTypeNames = [...]string{
	ServerMsgUnknown:    "",
	ServerHelloOK:       "hello_ok",
	ServerHelloError:    "hello_error",
	ServerResponseOK:    "response_ok",
	ServerResponseError: "response_error",
}

// String returns the wire name of the message type.
func (t ServerMsgType) String() string { return wireName(serverMsgTypeNames[:], t) }

// ParseServerMsgType returns the type with the given wire name, or
// ServerMsgUnknown.
func ParseServerMsgType[S ~string | ~[]byte](name S) ServerMsgType {
	return parseWireName[ServerMsgType](serverMsgTypeNames[:], name)
}

// ServerMsg is a message from the server: the answer to the hello, or the
// response to one request.
type ServerMsg struct {
	Type      ServerMsgType
	RequestID int32          // ServerResponseOK, ServerResponseError
	Error     Error          // ServerHelloError, ServerResponseError
	Response  SocketResponse // ServerResponseOK
}

// Reset empties m for reuse, keeping the capacity of its slices.
func (m *ServerMsg) Reset() {
	r := m.Response
	m.Type, m.RequestID, m.Error = ServerMsgUnknown, 0, Error{}
	m.Response = SocketResponse{
		Result:   StmtResult{Cols: r.Result.Cols[:0], Values: r.Result.Values[:0]},
		Batch:    BatchResult{Steps: r.Batch.Steps[:0]},
		Describe: DescribeResult{Params: r.Describe.Params[:0], Cols: r.Describe.Cols[:0]},
		Entries:  r.Entries[:0],
	}
}

// SocketResponse is the response of a response_ok message. The members set
// depend on Type; the other types carry nothing.
type SocketResponse struct {
	Type         SocketRequestType
	Result       StmtResult     // SocketExecute
	Batch        BatchResult    // SocketBatch
	Describe     DescribeResult // SocketDescribe
	IsAutocommit bool           // SocketGetAutocommit
	Entries      []CursorEntry  // SocketFetchCursor
	Done         bool           // SocketFetchCursor: the cursor has no more entries
}

// SocketCodec encodes Hrana-over-WebSocket client messages and decodes
// server messages. Every registered codec implements it; JSON codecs speak
// "hrana3" and "hrana2" (text frames), the Protobuf codec "hrana3-protobuf"
// (binary frames).
//
// The decoding rules are in docs/CODECS.md: a decoder rejects what the
// other codecs reject and decodes the rest to the same values. Decoders may
// keep references into the input in Value.Bytes, as DecodePipelineResponse
// does.
type SocketCodec interface {
	Codec
	// AppendHello appends a hello message carrying jwt ("" sends none).
	AppendHello(dst []byte, jwt string) ([]byte, error)
	// AppendSocketRequest appends a request message.
	AppendSocketRequest(dst []byte, req *SocketRequest) ([]byte, error)
	// DecodeServerMsg decodes one server message into m, resetting it first
	// and reusing its slices' capacity.
	DecodeServerMsg(data []byte, m *ServerMsg) error
}
