package blockingcall

import (
	"context"
	"os"
	"time"

	"github.com/go-asyncio/asyncio"
)

// Cases of a hostile run of the check (2026-12-05).

// BoundedTaskGroup's body and WithLock's function run inside the calling
// task, like a TaskGroup body.
func boundedBody(t *asyncio.T, job func(*asyncio.T) (int, error)) error {
	return asyncio.BoundedTaskGroup(t, 2, func(g *asyncio.BoundedGroup) error {
		time.Sleep(time.Second) // want `time.Sleep inside a task's TaskGroup/Timeout body blocks the whole event loop`
		_, err := asyncio.SpawnBounded(g, job)
		return err
	})
}

func withLockBody(t *asyncio.T, lk *asyncio.Lock) error {
	return asyncio.WithLock(t, lk, func() error {
		_, err := os.ReadFile("/etc/app.conf") // want `os.ReadFile inside a task's WithLock body blocks the whole event loop`
		return err
	})
}

// CallFuncOn runs its function as a callback of the target loop.
func onOtherLoop(t *asyncio.T, other *asyncio.Loop) (int, error) {
	return asyncio.CallFuncOn(t, other, func() (int, error) {
		time.Sleep(time.Second) // want `time.Sleep inside a loop callback blocks the whole event loop`
		return 0, nil
	})
}

// A blocking function or method given by name as a callback or a body runs
// on the loop as a literal would.
type flusher struct{ path string }

func (f *flusher) flush() { _ = os.WriteFile(f.path, nil, 0o600) } // want flush:`blocks: calls os.WriteFile`

func (f *flusher) quick() {}

func groupBody(g *asyncio.Group) error { // want groupBody:`blocks: calls time.Sleep`
	time.Sleep(time.Second)
	return nil
}

func namedCallbacks(t *asyncio.T, f *flusher, l *asyncio.Loop) error {
	t.Loop().CallSoon(f.flush) // want `blockingcall.flusher.flush, given to asyncio.Loop.CallSoon, blocks the whole event loop when it runs: it calls os.WriteFile`
	l.CallLater(time.Second, f.quick)
	t.AddDoneCallback(f.flush)             // want `blockingcall.flusher.flush, given to asyncio.T.AddDoneCallback, blocks`
	return asyncio.TaskGroup(t, groupBody) // want `blockingcall.groupBody, given to asyncio.TaskGroup, blocks the whole event loop when it runs: it calls time.Sleep`
}

// Not reported: the same functions given to what runs them off the loop.
func namedOffLoop(t *asyncio.T, f *flusher) error {
	go f.flush()
	_, err := asyncio.ToThread(t, func(ctx context.Context) (struct{}, error) {
		f.flush()
		return struct{}{}, nil
	})
	return err
}
