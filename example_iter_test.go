package asyncio_test

import (
	"fmt"
	"time"

	"github.com/go-asyncio/asyncio"
)

// Items is a worker's `while True: item = await q.get()` loop that ends
// when the queue is shut down; WithLock is `async with lock:`.
func ExampleQueue_Items() {
	asyncio.Run(func(t *asyncio.T) (struct{}, error) {
		q := asyncio.NewQueue[string](0)
		lk := asyncio.NewLock()
		for _, s := range []string{"a", "b", "c"} {
			q.PutNowait(s)
		}
		q.Shutdown(false)
		for item, err := range q.Items(t) {
			if err != nil {
				return struct{}{}, err
			}
			err := asyncio.WithLock(t, lk, func() error {
				fmt.Println("item", item, "locked:", lk.Locked())
				return nil
			})
			if err != nil {
				return struct{}{}, err
			}
		}
		fmt.Println("shut down, locked:", lk.Locked())
		return struct{}{}, nil
	}, asyncio.WithVirtualTime())
	// Output:
	// item a locked: true
	// item b locked: true
	// item c locked: true
	// shut down, locked: false
}

// A variable without a default is unset until set (Python's get()
// raises LookupError); a task created with WithVarContext writes to that
// context, as create_task(coro, context=ctx) does.
func ExampleCopyContext() {
	requestID := asyncio.NewContextVarNoDefault[string]("request_id")
	asyncio.Run(func(t *asyncio.T) (struct{}, error) {
		_, ok := requestID.Lookup(t)
		fmt.Println("set:", ok, "get(default):", requestID.GetDefault(t, "none"))
		ctx := asyncio.CopyContext(t)
		task := asyncio.CreateTaskErr(t, func(t *asyncio.T) error {
			requestID.Set(t, "r-42")
			return nil
		}, asyncio.WithVarContext(ctx))
		if _, err := task.Await(t); err != nil {
			return struct{}{}, err
		}
		v, ok := requestID.LookupValue(ctx.Context())
		fmt.Println("in ctx:", v, ok)
		_, ok = requestID.Lookup(t)
		fmt.Println("in main:", ok)
		return struct{}{}, nil
	}, asyncio.WithVirtualTime())
	// Output:
	// set: false get(default): none
	// in ctx: r-42 true
	// in main: false
}

// AsCompletedFuncs is as_completed's plain for: each call takes the next
// completion, whichever function is called.
func ExampleAsCompletedFuncs() {
	asyncio.Run(func(t *asyncio.T) (struct{}, error) {
		slow := asyncio.CreateTask(t, func(t *asyncio.T) (string, error) { return "slow", asyncio.Sleep(t, 2*time.Second) })
		fast := asyncio.CreateTask(t, func(t *asyncio.T) (string, error) { return "fast", asyncio.Sleep(t, time.Second) })
		for _, next := range asyncio.AsCompletedFuncs(t, []asyncio.AwaitableOf[string]{slow, fast}, asyncio.Never) {
			v, err := next(t)
			if err != nil {
				return struct{}{}, err
			}
			fmt.Println(v)
		}
		return struct{}{}, nil
	}, asyncio.WithVirtualTime())
	// Output:
	// fast
	// slow
}
