package fakesqld

import (
	"context"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/coder/websocket"
)

// WSSocket is the server's side of one Hrana WebSocket (hrana.md §12) in a
// fake: the upgrade, the client's messages as they come, and the answers,
// written one at a time. It is the one server-side WebSocket of the
// project's fakes: NewWS's scripted server, transport/ws's fake world and
// bench/e2e's floor tests each put their own answers behind it.
//
// Read is for one goroutine; Write, OK, Fail and the closes are safe from
// any number.
type WSSocket struct {
	ws     *websocket.Conn
	header http.Header
	wmu    sync.Mutex // one frame at a time
}

// AcceptWS upgrades r to a WebSocket, offering subprotocols (the client
// picks; none is a socket without one, which a caller may refuse), with no
// limit on a message's size.
func AcceptWS(w http.ResponseWriter, r *http.Request, subprotocols ...string) (*WSSocket, error) {
	c, err := websocket.Accept(w, r, &websocket.AcceptOptions{Subprotocols: subprotocols})
	if err != nil {
		return nil, err
	}
	c.SetReadLimit(-1)
	return &WSSocket{ws: c, header: r.Header.Clone()}, nil
}

// Header is the upgrade request's header.
func (s *WSSocket) Header() http.Header { return s.header }

// Subprotocol is the subprotocol the client and the fake agreed on, or "".
func (s *WSSocket) Subprotocol() string { return s.ws.Subprotocol() }

// Read returns the client's next message; an error once the socket is
// closed, by either side.
func (s *WSSocket) Read(ctx context.Context) ([]byte, error) {
	_, data, err := s.ws.Read(ctx)
	return data, err
}

// wsWriteTimeout bounds the write of one frame (the clients always read).
const wsWriteTimeout = 5 * time.Second

// Write sends frame as a text message.
func (s *WSSocket) Write(frame []byte) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), wsWriteTimeout)
	defer cancel()
	return s.ws.Write(ctx, websocket.MessageText, frame)
}

// OK answers request id with response (a JSON StreamResponse).
func (s *WSSocket) OK(id int32, response string) error { return s.Write(OKFrame(id, response)) }

// Fail answers request id with an error of code and message.
func (s *WSSocket) Fail(id int32, code, message string) error {
	return s.Write(ErrorFrame(id, code, message))
}

// Close closes the socket with a close frame of code and reason.
func (s *WSSocket) Close(code websocket.StatusCode, reason string) error {
	return s.ws.Close(code, reason)
}

// Drop closes the socket without a close frame, as a server that goes away
// does.
func (s *WSSocket) Drop() { _ = s.ws.CloseNow() }

// HelloOK is the answer to a hello that is accepted.
var HelloOK = []byte(`{"type":"hello_ok"}`)

// HelloErrorFrame is the answer to a hello that is refused.
func HelloErrorFrame(code, message string) []byte {
	return append(appendError([]byte(`{"type":"hello_error","error":`), code, message), '}')
}

// OKFrame is the response_ok of request id carrying response (a JSON
// StreamResponse, e.g. {"type":"open_stream"}).
func OKFrame(id int32, response string) []byte {
	return []byte(`{"type":"response_ok","request_id":` + strconv.Itoa(int(id)) + `,"response":` + response + `}`)
}

// ErrorFrame is the response_error of request id with code and message.
func ErrorFrame(id int32, code, message string) []byte {
	return append(appendError([]byte(`{"type":"response_error","request_id":`+strconv.Itoa(int(id))+`,"error":`), code, message), '}')
}
