package blockingcall

import (
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/go-asyncio/asyncio"
	"github.com/go-asyncio/asyncio/aio"
	"golang.org/x/sync/semaphore"
)

// Cases of the hostile probe h31 (2026-12-06).

// aio.WithServer runs its function inside the calling task (async with
// server: body), as WithLock does.
func serveWith(t *asyncio.T, srv *aio.Server) error {
	return aio.WithServer(t, srv, func() error {
		time.Sleep(time.Second) // want `time.Sleep inside a task's WithServer body blocks the whole event loop`
		return srv.ServeForever(t)
	})
}

// The loop calls its exception handler and its poll hooks itself, as it
// calls a callback.
func handlers(t *asyncio.T) {
	t.Loop().SetExceptionHandler(func(l *asyncio.Loop, c asyncio.ExceptionContext) {
		os.WriteFile("/var/log/app.err", []byte(c.Message), 0o644) // want `os.WriteFile inside a loop callback blocks the whole event loop`
	})
	t.Loop().SetBeforePoll(func() {
		time.Sleep(time.Millisecond) // want `time.Sleep inside a loop callback blocks the whole event loop`
	})
	t.Loop().SetAfterPoll(flushSlowly) // want `blockingcall.flushSlowly, given to asyncio.Loop.SetAfterPoll, blocks the whole event loop`
}

func flushSlowly() { time.Sleep(time.Millisecond) } // want flushSlowly:`blocks: calls time.Sleep`

// A protocol's methods are callbacks of the loop (the transport calls
// them when data arrives): a port of asyncio.Protocol that blocks in
// DataReceived freezes every connection of the loop.
type recorder struct {
	aio.BaseProtocol
	tr   aio.Transport
	path string
}

func (r *recorder) ConnectionMade(tr aio.Transport) { r.tr = tr }

func (r *recorder) DataReceived(data []byte) { // want DataReceived:`blocks: calls os.WriteFile`
	os.WriteFile(r.path, data, 0o644) // want `os.WriteFile inside a protocol callback \(the loop calls it\) blocks the whole event loop`
	r.tr.Write(data)
}

// Not a protocol method: not a callback (a helper that blocks, reported
// where a task calls it).
func (r *recorder) save(data []byte) { os.WriteFile(r.path, data, 0o644) } // want save:`blocks: calls os.WriteFile`

// A type that does not implement the protocol: its methods are plain.
type notAProtocol struct{ path string }

func (p *notAProtocol) DataReceived(data []byte) { os.WriteFile(p.path, data, 0o644) } // want DataReceived:`blocks: calls os.WriteFile`

func serveRecorder(t *asyncio.T) (*aio.Server, error) {
	return aio.CreateServer(t, func() aio.Protocol { return &recorder{path: "/tmp/rec"} }, "127.0.0.1", 0)
}

// sync.Once.Do runs its function on the spot, on the task's goroutine.
var (
	settingsOnce sync.Once
	settingsData []byte
)

func lazySettings(t *asyncio.T) []byte {
	settingsOnce.Do(func() {
		settingsData, _ = os.ReadFile("/etc/app.conf") // want `os.ReadFile inside a task blocks the whole event loop`
	})
	return settingsData
}

// A weighted semaphore's Acquire and an HTTP server's Shutdown wait for
// other goroutines.
func limits(t *asyncio.T, sem *semaphore.Weighted, srv *http.Server) error {
	if err := sem.Acquire(t.Context(), 1); err != nil { // want `semaphore.Weighted.Acquire inside a task blocks the whole event loop`
		return err
	}
	defer sem.Release(1)
	if sem.TryAcquire(1) { // never waits
		sem.Release(1)
	}
	return srv.Shutdown(t.Context()) // want `http.Server.Shutdown inside a task blocks the whole event loop`
}
