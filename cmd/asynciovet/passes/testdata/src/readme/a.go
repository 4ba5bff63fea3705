// Package readme holds the before/after snippets of README.md: each
// "before" is reported, each "after" is not.
package readme

import (
	"context"
	"log"
	"net/http"
	"os"
	"time"

	"github.com/go-asyncio/asyncio"
)

func pollBefore(t *asyncio.T, c *http.Client, url string) (int, error) {
	time.Sleep(time.Second) // want `blockingcall: time.Sleep inside a task`
	resp, err := c.Get(url) // want `blockingcall: http.Client.Get inside a task`
	if err != nil {
		return 0, err
	}
	return resp.StatusCode, resp.Body.Close()
}

func pollAfter(t *asyncio.T, c *http.Client, url string) (int, error) {
	if err := asyncio.Sleep(t, time.Second); err != nil {
		return 0, err
	}
	resp, err := asyncio.Go(t, func(ctx context.Context) (*http.Response, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return nil, err
		}
		return c.Do(req)
	})
	if err != nil {
		return 0, err
	}
	return resp.StatusCode, resp.Body.Close()
}

func get(t *asyncio.T, url string) (string, error) { return url, asyncio.Sleep(t, 0) }

func handleBefore(t *asyncio.T, url string) *asyncio.Task[string] {
	return asyncio.CreateTask(t, func(child *asyncio.T) (string, error) {
		return get(t, url) // want `wronghandle: readme.get awaits with t`
	})
}

func handleAfter(t *asyncio.T, url string) *asyncio.Task[string] {
	return asyncio.CreateTask(t, func(child *asyncio.T) (string, error) {
		return get(child, url)
	})
}

func produceBefore(t *asyncio.T, q *asyncio.Queue[int], job int) error {
	for {
		if err := q.Put(t, job); err != nil { // want `droppedcancel: the error of asyncio.Queue.Put is checked but`
			log.Print(err)
		}
		asyncio.Sleep(t, time.Second) // want `droppedcancel: the error of asyncio.Sleep is discarded`
	}
}

func produceAfter(t *asyncio.T, q *asyncio.Queue[int], job int) error {
	for {
		if err := q.Put(t, job); err != nil {
			return err
		}
		if err := asyncio.Sleep(t, time.Second); asyncio.IsCancelled(err) {
			t.Uncancel() // deliberately ignore this cancellation
		} else if err != nil {
			return err
		}
	}
}

func signalBefore(t *asyncio.T, sigs chan os.Signal) error {
	ev := asyncio.NewEvent()
	go func() {
		<-sigs
		ev.Set() // want `foreigngoroutine: asyncio.Event.Set is called on ev from a goroutine`
	}()
	return ev.Wait(t)
}

func signalAfter(t *asyncio.T, sigs chan os.Signal) error {
	l, ev := t.Loop(), asyncio.NewEvent()
	go func() {
		<-sigs
		l.CallSoonThreadsafe(ev.Set)
	}()
	return ev.Wait(t)
}

func notify(t *asyncio.T) (int, error) { return 0, asyncio.Sleep(t, 0) }

func notifyBefore(t *asyncio.T) error {
	asyncio.CreateTask(t, notify) // want `unawaitedtask: the task started by CreateTask is never awaited`
	return nil
}

func notifyAfter(t *asyncio.T) error {
	return asyncio.TaskGroup(t, func(g *asyncio.Group) error {
		_, err := asyncio.Spawn(g, notify)
		return err
	})
}

func settings() ([]byte, error) { return os.ReadFile("/etc/app.conf") } // want settings:"blocks: calls os.ReadFile"

func startBefore(t *asyncio.T) error {
	b, err := settings() // want `blockingcall: readme.settings inside a task blocks the whole event loop until it returns: it calls os.ReadFile`
	_ = b
	return err
}

func startAfter(t *asyncio.T) error {
	b, err := asyncio.Go(t, func(ctx context.Context) ([]byte, error) { return settings() })
	_ = b
	return err
}
