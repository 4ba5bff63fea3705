package blockingcall

import (
	"os"
	"time"

	"github.com/go-asyncio/asyncio"
	"github.com/go-asyncio/asyncio/aio"
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
