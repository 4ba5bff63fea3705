// Command hello is the smallest go-asyncio program: two tasks that sleep
// and greet, awaited by main, as in
//
//	async def greet(name, delay):
//	    await asyncio.sleep(delay)
//	    print(f"hello, {name}")
//	    return len(name)
//
//	async def main():
//	    a = asyncio.create_task(greet("world", 0.2))
//	    b = asyncio.create_task(greet("asyncio", 0.1))
//	    print(await a + await b)
//
//	asyncio.run(main())
package main

import (
	"fmt"
	"os"
	"time"

	"github.com/go-asyncio/asyncio"
)

func greet(name string, delay time.Duration) func(*asyncio.T) (int, error) {
	return func(t *asyncio.T) (int, error) {
		if err := asyncio.Sleep(t, delay); err != nil {
			return 0, err
		}
		fmt.Printf("hello, %s (from %s)\n", name, t.Name())
		return len(name), nil
	}
}

func main() {
	total, err := run()
	if err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
	fmt.Println("total letters:", total)
}

func run(opts ...asyncio.LoopOption) (int, error) {
	return asyncio.Run(func(t *asyncio.T) (int, error) {
		a := asyncio.CreateTask(t, greet("world", 200*time.Millisecond), asyncio.WithName("greet-world"))
		b := asyncio.CreateTask(t, greet("asyncio", 100*time.Millisecond), asyncio.WithName("greet-asyncio"))
		x, err := a.Await(t)
		if err != nil {
			return 0, err
		}
		y, err := b.Await(t)
		return x + y, err
	}, opts...)
}
