//go:build unix

// Command fanout is a fan-out HTTP client on one event loop, in two modes.
//
// The default, -mode client, is the supported way to call net/http from
// tasks: every request is an http.Client call inside asyncio.Go, so the
// client keeps its pooling, keep-alive, redirects, TLS and HTTP/2, and a
// timeout or a lost race cancels the request's context and really stops it.
// The servers are ordinary net/http servers on their own goroutines:
//
//  1. fan-out: -n GETs (1,000), at most -limit (100) in flight (a
//     Semaphore), each under a per-request -timeout (WaitForFunc); every
//     fifth path is never answered, so exactly those time out, and the
//     server sees each of them go;
//  2. first success: the same GET sent to three replicas (one refuses
//     connections, one never answers, one answers at once); the first
//     answer wins and the other attempts are cancelled.
//
// -mode adapter runs the same two parts with everything on the loop: a
// loop server (asyncio streams) and net/http's Request.Write and
// http.ReadResponse over the loop's net.Conn adapter (aio.DialConn).
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime/trace"
	"time"
)

func main() {
	mode := flag.String("mode", "client", "client: http.Client through asyncio.Go; adapter: HTTP over aio.DialConn on the loop")
	n := flag.Int("n", 1000, "number of requests")
	limit := flag.Int("limit", 100, "maximum requests in flight")
	timeout := flag.Duration("timeout", 200*time.Millisecond, "per-request timeout")
	traceFile := flag.String("trace", "", "write a runtime/trace of the run to this file (view it with go tool trace)")
	flag.Parse()
	stop := func() {}
	if *traceFile != "" {
		var err error
		if stop, err = startTrace(*traceFile); err != nil {
			fmt.Fprintln(os.Stderr, "error:", err)
			os.Exit(1)
		}
	}
	var err error
	switch *mode {
	case "client":
		err = runClient(os.Stdout, *n, *limit, *timeout)
	case "adapter":
		err = runAdapter(os.Stdout, *n, *limit, *timeout)
	default:
		err = fmt.Errorf("unknown -mode %q (client or adapter)", *mode)
	}
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

// startTrace starts runtime/trace into path: every asyncio task becomes a
// trace task ("asyncio.Task") with a region per step, so `go tool trace`
// shows the tasks (docs/trace-fanout.png is drawn from such a trace).
func startTrace(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := trace.Start(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		trace.Stop()
		f.Close()
	}, nil
}
