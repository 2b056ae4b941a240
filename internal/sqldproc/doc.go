// Package sqldproc runs sqld (libsql-server) as a child process on
// 127.0.0.1, for the tests and tools of this repository's modules (itest,
// embedded, otel, bench/e2e): one starter instead of a copy in each. The
// driver itself never imports it.
//
// A server of one's own starts in well under a second, can be killed
// (SIGKILL) or stopped (SIGTERM) and started again on the same ports with
// the same data, and holds no write lock another test could want.
//
//   - Find locates the binary: $ENV (a name each caller picks, such as
//     LIBSQL_EMBEDDED_SQLD), else what the repository's scripts/sqld.sh
//     prints, looked for from the working directory upwards.
//   - Start runs it on ports from internal/loopback and counts it as
//     started only once loopback.WaitHealthy has seen GET /health answered
//     by that very process holding all its ports; a start that finds a
//     port taken ("Address already in use") starts again on fresh ports.
//   - The process gets SIGKILL should its parent die first (Linux's
//     Pdeathsig), so a killed test binary leaves no server behind.
//
// In a test (StartTest fails the test on error, kills the server when the
// test ends and shows the end of its log if the test failed):
//
//	bin := sqldproc.Binary(t, "LIBSQL_EMBEDDED_SQLD")
//	srv := sqldproc.StartTest(t, sqldproc.Config{
//		Bin:    bin,
//		Args:   []string{"--enable-namespaces"},
//		Listen: []string{sqldproc.AdminFlag},
//	})
//	db, err := sql.Open("libsql", srv.URL())
//	// ... admin API at srv.ListenAddr(sqldproc.AdminFlag)
//	srv.Kill()                   // a crash
//	err = srv.Restart(ctx)       // same ports, same data
//
// In a command:
//
//	bin, err := sqldproc.Find(ctx, "SQLD")
//	srv, err := sqldproc.Start(ctx, sqldproc.Config{Bin: bin})
//	defer srv.Close() // kills it and removes its temporary directory
package sqldproc
