// Package loopback hands out TCP ports on 127.0.0.1 to the servers the
// integration tests start, and proves that the server answering on such a
// port is the process that was started, not another test's server that
// happens to listen there.
//
// Picking a free port and passing it to a server races: between the pick
// and the server's bind, another server may take the port; the loser
// exits with "Address already in use" and a readiness probe may then get
// its answer from the winner. Port narrows the race and WaitHealthy closes
// it:
//
//   - Port never hands out the same port twice in a process, and takes its
//     ports from blocks that no other process using this package holds at
//     the same time (an flock per block), outside the kernel's ephemeral
//     range, so that neither bind(0) nor an outgoing connection takes them.
//   - WaitHealthy accepts GET /health only while the started process holds
//     the socket listening on each of its ports ([HeldBy]).
//
// Linux only: it reads /proc.
package loopback
