// Command crawler is a port of a classic asyncio fan-out crawler: fetch
// URLs concurrently with a limit, each under a timeout, report results as
// they complete, and let another goroutine (a signal handler) stop the
// crawl through the thread-safe entry points. HTTP requests run through
// the blocking-call bridge. It must produce no finding.
package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"time"

	"github.com/go-asyncio/asyncio"
)

type page struct {
	url  string
	size int
}

// fetch is asyncio's "async with session.get(url) as resp: await resp.read()",
// with the blocking client bridged off the loop.
func fetch(t *asyncio.T, c *http.Client, url string) (page, error) {
	return asyncio.Go(t, func(ctx context.Context) (page, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return page{}, err
		}
		resp, err := c.Do(req)
		if err != nil {
			return page{}, err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return page{url: url, size: len(b)}, err
	})
}

type stats struct {
	mu      sync.Mutex // shared with the signal goroutine
	fetched int
}

func crawl(t *asyncio.T, urls []string, limit int, st *stats) error {
	c := &http.Client{}
	sem := asyncio.NewSemaphore(limit)
	lk := asyncio.NewLock()
	var aws []asyncio.Awaitable
	for _, u := range urls {
		aws = append(aws, asyncio.CreateTask(t, func(t *asyncio.T) (page, error) {
			if err := sem.Acquire(t); err != nil {
				return page{}, err
			}
			defer sem.Release()
			return asyncio.WaitForFunc(t, 2*time.Second, func(t *asyncio.T) (page, error) {
				return fetch(t, c, u)
			})
		}))
	}
	for aw, err := range asyncio.AsCompleted(t, aws, asyncio.Never) {
		if asyncio.IsCancelled(err) {
			return err
		}
		if err != nil {
			fmt.Println("failed:", err)
			continue
		}
		if err := lk.Acquire(t); err != nil {
			return err
		}
		if tk, ok := aw.(*asyncio.Task[page]); ok {
			p, _ := tk.Result()
			fmt.Printf("%s: %d bytes\n", p.url, p.size)
		}
		lk.Release()
	}
	return nil
}

func main() {
	urls := os.Args[1:]
	st := &stats{}
	loop := asyncio.NewLoop()
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt)
	main := asyncio.CreateTask(loop, func(t *asyncio.T) (struct{}, error) {
		l := t.Loop()
		self := t
		go func() {
			<-sig
			// Back onto the loop: the only safe way in from here.
			l.CallSoonThreadsafe(func() { self.Cancel("interrupted") })
		}()
		return struct{}{}, crawl(t, urls, 4, st)
	})
	// A progress reporter on its own goroutine, through the thread-safe API.
	go func() {
		for range time.Tick(time.Second) {
			cf := asyncio.RunCoroutineThreadsafe(loop, func(t *asyncio.T) (int, error) {
				//asynciovet:ignore blockingcall the progress goroutine holds st.mu only to read one int
				st.mu.Lock()
				defer st.mu.Unlock()
				return st.fetched, nil
			})
			if n, err := cf.Result(); err == nil {
				fmt.Println("fetched so far:", n)
			}
		}
	}()
	if err := loop.RunUntilComplete(main); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	if err := loop.Close(); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
}
