// Package aio is the networking half of go-asyncio: everything that runs
// on file descriptors registered with an asyncio.Loop. It holds asyncio's
// low-level socket coroutines (SockRecv, SockSendall, SockConnect,
// SockAccept), transports and protocols (CreateConnection, CreateServer,
// CreateDatagramEndpoint, StartTLS), streams (OpenConnection,
// StartServer, StreamReader, StreamWriter), and Conn, a net.Conn whose
// calls suspend only the calling task, so that crypto/tls, bufio and
// net/http run unchanged on a loop.
//
// aio is built on the core package's exported API only (AddReader,
// AddWriter, futures, tasks, timers), as Trio builds its networking on
// its _core.
//
// aio is for Unix only (Linux, macOS, the BSDs, Solaris, illumos, AIX):
// it speaks to sockets through golang.org/x/sys/unix. On Windows the
// package is absent at compile time (every file but this one is built
// for Unix only), so a program that imports it fails to build there
// instead of failing at run time.
package aio
