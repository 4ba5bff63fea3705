// Command bridges is a port of an asyncio program that mixes the loop with
// ordinary Go: a producer goroutine feeding a channel (asyncio.Recv), an
// HTTP health check and a checksum run off the loop (asyncio.Go,
// RunInExecutorOn on a bounded pool), eager tasks raced with the generic
// Wait and AsCompleted, a subprocess through aio, and a watcher goroutine
// that waits for a task with Threadsafe. It uses the API added after the
// analyzer's first version and must produce no finding.
package main

import (
	"context"
	"crypto/sha256"
	"fmt"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/go-asyncio/asyncio"
	"github.com/go-asyncio/asyncio/aio"
)

// pool is a bounded executor for RunInExecutorOn.
type pool struct{ sem chan struct{} }

func (p pool) Submit(job func()) error {
	go func() {
		p.sem <- struct{}{}
		defer func() { <-p.sem }()
		job()
	}()
	return nil
}

func healthy(t *asyncio.T, url string) (bool, error) {
	return asyncio.Go(t, func(ctx context.Context) (bool, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return false, err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return false, nil
		}
		defer resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	})
}

func checksum(t *asyncio.T, p pool, data []byte) ([32]byte, error) {
	f := asyncio.RunInExecutorOn(t, p, func(ctx context.Context) ([32]byte, error) {
		return sha256.Sum256(data), nil
	})
	return f.Await(t)
}

func consume(t *asyncio.T, lines <-chan string, p pool) (int, error) {
	n := 0
	for {
		line, ok, err := asyncio.Recv(t, lines)
		if err != nil {
			return n, err
		}
		if !ok {
			return n, nil
		}
		sum, err := checksum(t, p, []byte(line))
		if err != nil {
			return n, err
		}
		fmt.Printf("%x %s\n", sum[:4], line)
		n++
	}
}

func race(t *asyncio.T, urls []string) (string, error) {
	tasks := make([]*asyncio.Task[string], len(urls))
	for i, u := range urls {
		tasks[i] = asyncio.CreateTask(t, func(t *asyncio.T) (string, error) {
			ok, err := healthy(t, u)
			if err != nil || !ok {
				return "", err
			}
			return u, nil
		}, asyncio.WithEagerStart())
	}
	done, pending, err := asyncio.Wait(t, tasks, 5*time.Second, asyncio.FirstCompleted)
	for _, tk := range pending {
		tk.Cancel()
	}
	if err != nil {
		return "", err
	}
	for _, tk := range pending {
		if _, err := tk.Await(t); err != nil && !asyncio.IsCancelled(err) {
			return "", err
		}
	}
	if len(done) == 0 {
		return "", nil
	}
	return done[0].Result()
}

func all(t *asyncio.T, urls []string) (int, error) {
	tasks := make([]*asyncio.Task[bool], len(urls))
	for i, u := range urls {
		tasks[i] = asyncio.CreateTask(t, func(t *asyncio.T) (bool, error) { return healthy(t, u) })
	}
	up := 0
	for tk, err := range asyncio.AsCompleted(t, tasks, 0) {
		if err != nil {
			return up, err
		}
		if ok, _ := tk.Result(); ok { // the task is done: Result does not wait
			up++
		}
	}
	return up, nil
}

func uname(t *asyncio.T) (string, error) {
	p, err := aio.CreateSubprocessExec(t, "uname", []string{"-a"})
	if err != nil {
		return "", err
	}
	out, _, err := p.Communicate(t, nil)
	return string(out), err
}

func main() {
	_, err := asyncio.Run(func(t *asyncio.T) (struct{}, error) {
		lines := make(chan string)
		var wg sync.WaitGroup
		wg.Go(func() {
			defer close(lines)
			for _, s := range []string{"alpha", "beta", "gamma"} {
				lines <- s
			}
		})
		p := pool{sem: make(chan struct{}, 2)}
		counter := asyncio.CreateTaskErr(t, func(t *asyncio.T) error {
			n, err := consume(t, lines, p)
			fmt.Println("lines:", n)
			return err
		}, asyncio.WithEagerStart())
		// A watcher off the loop waits for the counter without touching
		// loop state.
		watched := asyncio.Threadsafe[struct{}](counter)
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if err := watched.Wait(ctx); err == nil {
				fmt.Println("watcher: counter finished")
			}
		})
		if _, err := counter.Await(t); err != nil {
			return struct{}{}, err
		}
		urls := []string{"http://127.0.0.1:1/", "http://127.0.0.1:2/"}
		first, err := race(t, urls)
		if err != nil {
			return struct{}{}, err
		}
		up, err := all(t, urls)
		if err != nil {
			return struct{}{}, err
		}
		fmt.Println("first healthy:", first, "up:", up)
		u, err := uname(t)
		if err != nil {
			return struct{}{}, err
		}
		fmt.Print(u)
		_, err = asyncio.Go(t, func(context.Context) (struct{}, error) {
			wg.Wait() // off the loop
			return struct{}{}, nil
		})
		return struct{}{}, err
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
