package asynciohttp_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"

	"github.com/go-asyncio/asyncio"
	"github.com/go-asyncio/asyncio/debug/asynciohttp"
)

// Mount the handler like net/http/pprof, then ask it what the loop's
// tasks are doing while the loop runs (here from the HTTP server's own
// goroutine, served by httptest).
func ExampleHandler() {
	loop := asyncio.NewTestLoop() // virtual time: the figures below are exact
	mux := http.NewServeMux()
	mux.Handle("/debug/asyncio/", asynciohttp.Handler(loop))
	srv := httptest.NewServer(mux)
	defer srv.Close()

	main := asyncio.CreateTask(loop, func(t *asyncio.T) (string, error) {
		worker := asyncio.CreateTask(t, func(t *asyncio.T) (int, error) {
			return asyncio.NewQueue[int](0).Get(t)
		}, asyncio.WithName("worker"))
		// Ask from another goroutine, as a curl would, and wait for the
		// answer without blocking the loop.
		answer := asyncio.RunInExecutor(t, func(ctx context.Context) (string, error) {
			resp, err := http.Get(srv.URL + "/debug/asyncio/pstree")
			if err != nil {
				return "", err
			}
			defer resp.Body.Close()
			b, err := io.ReadAll(resp.Body)
			return string(b), err
		})
		tree, err := answer.Await(t)
		worker.Cancel()
		return tree, err
	}, asyncio.WithName("main"))
	if err := loop.RunUntilComplete(main); err != nil {
		fmt.Println(err)
	}
	tree, _ := main.Result()
	fmt.Print(tree)
	_ = loop.Close()
	// Output:
	// └── (T) main [waiting 0s on executor]
	// └── (T) worker [waiting 0s on Queue.Get]
	// note: 2 tasks started before stacks were recorded (WithTaskStacks or debug mode): no stack, no creator
}
