// Package replog is the client of a libSQL primary's replication log: sqld's
// wal_log.ReplicationLog service, which sqld serves as gRPC-Web on its
// ordinary HTTP port (package grpcweb carries the messages).
//
// A Client (client.go) makes the three calls an embedded replica needs, each
// a POST to /wal_log.ReplicationLog/<method>:
//
//   - Hello starts a session. The answer names the log (LogID, the generation)
//     and the primary's last committed frame, and carries a session token
//     that the Client sends (x-session-token) with every later call.
//   - BatchLogEntries returns one Frames message with the frames from a
//     given frame number on.
//   - Snapshot streams, one Frame message at a time, the frames of the
//     snapshot that holds a frame the log no longer has.
//
// Every request carries the auth token (x-authorization), the namespace
// (x-namespace-bin) and any extra headers of Config. A failed call is an
// *Error: the server's gRPC status, an HTTP status or the exchange itself,
// never with the token in its text. errors.Is matches ErrNoHello when the
// primary asks for a new hello (it restarted, or the token is stale) and
// ErrNeedSnapshot when the frames asked for were compacted into a snapshot.
//
// The Protobuf messages (proto.go) are encoded and decoded by hand, with no
// Protobuf library: two tiny requests (HelloRequest, LogOffset) and three
// responses (HelloResponse, Frames, Frame), reading only the fields a
// replica needs and skipping the rest; a malformed one is a *DecodeError.
// Decoded frame data aliases the message it came from.
//
// A frame (frame.go) is a 24-byte header, little-endian (frame number,
// checksum, page number, the database's size in pages after the commit the
// frame ends, or 0), then a 4 KiB page; DecodeFrame rejects one of the wrong
// size, with a page number or size out of bounds, or numbered 2^64-1 (a
// *FrameError).
// NextChecksum (checksum.go) computes the CRC-64 chain sqld keeps over the
// pages of its log, by which a replica checks each frame against the one
// before it.
//
// Applying the frames to the local file is package replica's work; this
// package only fetches and decodes them. testdata/ holds answers recorded
// from a real sqld (record_test.go says how to record them again).
package replog
