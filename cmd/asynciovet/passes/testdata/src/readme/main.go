package readme

import (
	"context"
	"net/http"
	"os"
	"time"

	"github.com/go-asyncio/asyncio"
)

// The snippets of the repository's own README.md ("Lint"), one function
// per before and after.

func mainBlockingBefore(t *asyncio.T, results chan int) (int, error) {
	time.Sleep(time.Second) // want `blockingcall: time.Sleep inside a task`
	v := <-results          // want `blockingcall: channel receive inside a task`
	return v, nil
}

func mainBlockingAfter(t *asyncio.T, results chan int, client *http.Client, req *http.Request) (int, error) {
	if err := asyncio.Sleep(t, time.Second); err != nil {
		return 0, err
	}
	v, _, err := asyncio.Recv(t, results)
	if err != nil {
		return 0, err
	}
	resp, err := asyncio.Go(t, func(ctx context.Context) (*http.Response, error) {
		return client.Do(req.WithContext(ctx))
	})
	if err != nil {
		return 0, err
	}
	return v, resp.Body.Close()
}

func mainWrongHandleBefore(t *asyncio.T, d time.Duration) (int, error) {
	tk := asyncio.CreateTask(t, func(child *asyncio.T) (int, error) {
		return 0, asyncio.Sleep(t, d) // want `wronghandle: asyncio.Sleep awaits with t`
	})
	return tk.Await(t)
}

func mainWrongHandleAfter(t *asyncio.T, d time.Duration) (int, error) {
	tk := asyncio.CreateTask(t, func(child *asyncio.T) (int, error) {
		return 0, asyncio.Sleep(child, d)
	})
	return tk.Await(t)
}

func mainDroppedBefore(t *asyncio.T, lock *asyncio.Lock, d time.Duration) {
	asyncio.Sleep(t, d) // want `droppedcancel: the error of asyncio.Sleep is discarded`
	_ = lock.Acquire(t) // want `droppedcancel: the error of asyncio.Lock.Acquire is assigned to _`
}

func mainDroppedAfter(t *asyncio.T, d time.Duration) error {
	if err := asyncio.Sleep(t, d); err != nil {
		return err
	}
	return nil
}

func mainForeignBefore(t *asyncio.T, sigs chan os.Signal) error {
	ev := asyncio.NewEvent()
	go func() { <-sigs; ev.Set() }() // want `foreigngoroutine: asyncio.Event.Set is called on ev`
	return ev.Wait(t)
}

func mainForeignAfter(t *asyncio.T, sigs chan os.Signal) error {
	ev := asyncio.NewEvent()
	l := t.Loop()
	go func() { <-sigs; l.CallSoonThreadsafe(ev.Set) }()
	return ev.Wait(t)
}

func mainUnawaitedBefore(t *asyncio.T, notify func(*asyncio.T) (int, error)) {
	asyncio.CreateTask(t, notify) // want `unawaitedtask: the task started by CreateTask is never awaited`
}

func mainUnawaitedAfter(t *asyncio.T, notify func(*asyncio.T) (int, error)) error {
	tk := asyncio.CreateTask(t, notify)
	if _, err := tk.Await(t); err != nil {
		return err
	}
	return nil
}
