// Command abandoned measures the debug handler under abandoned requests: N parked tasks, a
// ticker task sleeping 1 ms in a loop, a 1.5 s block in a callback during
// which R requests of /json?timeout=1ms&max=-1 all time out; then the
// longest gap between two ticks, and how much of it came after the block
// (docs/diagnostics-cost.md, "Debug handler under abandoned requests"):
//
//	go run ./tests/abandoned -tasks 10000 -reqs 300 -block 1.5s
package main

import (
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"sync"
	"time"

	"github.com/go-asyncio/asyncio"
	"github.com/go-asyncio/asyncio/debug/asynciohttp"
)

func main() {
	tasks := flag.Int("tasks", 10000, "parked tasks")
	reqs := flag.Int("reqs", 300, "abandoned requests")
	block := flag.Duration("block", 1500*time.Millisecond, "block")
	flag.Parse()
	l := asyncio.NewLoop()
	l.SetBlockedThreshold(-1)
	var ticks []time.Time // written on the loop, read once it has returned
	var blockEnd time.Time
	stop := false
	ticker := asyncio.CreateTask(l, func(t *asyncio.T) (int, error) {
		never := asyncio.NewFuture[int](l)
		for i := 0; i < *tasks; i++ {
			//asynciovet:ignore unawaitedtask parked tasks for the snapshot to describe; cancelled at the end
			asyncio.CreateTask(t, func(t *asyncio.T) (int, error) { return never.Await(t) })
		}
		for !stop {
			if err := asyncio.Sleep(t, time.Millisecond); err != nil {
				return 0, err
			}
			ticks = append(ticks, time.Now())
		}
		never.Cancel()
		return 0, nil
	})
	done := make(chan error, 1)
	go func() { done <- l.RunUntilComplete(ticker) }()
	srv := httptest.NewServer(asynciohttp.Handler(l))
	defer srv.Close()
	time.Sleep(500 * time.Millisecond) // tasks created, ticker running
	blocked, unblock := make(chan struct{}), make(chan struct{})
	//asynciovet:ignore blockingcall the block under measure: the requests must find the loop blocked
	l.CallSoonThreadsafe(func() { close(blocked); <-unblock; blockEnd = time.Now() })
	<-blocked
	start := time.Now()
	var wg sync.WaitGroup
	codes := map[int]int{}
	var cmu sync.Mutex
	for i := 0; i < *reqs; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := http.Get(srv.URL + "/json?timeout=1ms&max=-1")
			if err != nil {
				panic(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			cmu.Lock()
			codes[resp.StatusCode]++
			cmu.Unlock()
		}()
	}
	wg.Wait()
	answered := time.Since(start)
	time.Sleep(*block - time.Since(start))
	close(unblock)
	time.Sleep(8 * time.Second) // let the loop work off what it was left
	l.CallSoonThreadsafe(func() { stop = true })
	if err := <-done; err != nil {
		panic(err)
	}
	var maxGap, after time.Duration
	var gaps []time.Duration
	for i := 1; i < len(ticks); i++ {
		g := ticks[i].Sub(ticks[i-1])
		gaps = append(gaps, g)
		if g > maxGap {
			maxGap = g
			if ticks[i].After(blockEnd) {
				after = ticks[i].Sub(blockEnd)
			}
		}
	}
	sort.Slice(gaps, func(i, j int) bool { return gaps[i] > gaps[j] })
	fmt.Printf("tasks=%d requests=%d block=%v codes=%v all answered in %v\n", *tasks, *reqs, *block, codes, answered.Round(time.Millisecond))
	fmt.Printf("longest gap between 1 ms ticks: %v, of which after the block ended: %v; next gaps: %v\n",
		maxGap.Round(time.Millisecond), after.Round(time.Millisecond), roundAll(gaps[1:4]))
}

func roundAll(ds []time.Duration) []time.Duration {
	for i := range ds {
		ds[i] = ds[i].Round(time.Millisecond)
	}
	return ds
}
