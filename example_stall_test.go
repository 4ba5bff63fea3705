package asyncio_test

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-asyncio/asyncio"
)

// On virtual time a Recv nobody sends to holds the clock; after the grace
// period the loop reports it, naming the operation, its task and (after
// " at ") the file:line of the call. Here the handler plays the forgotten
// sender.
func ExampleWithOutsideGrace() {
	ch := make(chan int)
	l := asyncio.NewLoop(asyncio.WithVirtualTime(), asyncio.WithOutsideGrace(time.Millisecond))
	defer l.Close()
	l.SetExceptionHandler(func(_ *asyncio.Loop, c asyncio.ExceptionContext) {
		var se *asyncio.StalledError
		if errors.As(c.Err, &se) {
			what, _, _ := strings.Cut(se.Pending[0], " at ")
			fmt.Println("stalled on:", what)
		}
		go func() { ch <- 42 }()
	})
	task := asyncio.CreateTask(l, func(t *asyncio.T) (int, error) {
		v, _, err := asyncio.Recv(t, ch)
		return v, err
	}, asyncio.WithName("consumer"))
	if err := l.RunUntilComplete(task); err != nil {
		fmt.Println(err)
	}
	fmt.Println(task.Result())
	// Output:
	// stalled on: Recv by task "consumer"
	// 42 <nil>
}
