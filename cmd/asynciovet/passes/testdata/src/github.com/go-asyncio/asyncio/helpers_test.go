package asyncio

import "context"

// The library's own tests are checked like user code (its implementation
// files are not).

// waitUntilIdle stands for a test helper that reads loop state under the
// loop's mutex: unexported, so not part of what the checks know.
func waitUntilIdle(l *Loop) {}

func workerPolls(t *T) (int, error) {
	l := t.Loop()
	return ToThread(t, func(context.Context) (int, error) {
		waitUntilIdle(l)      // negative: an unexported helper of the library
		return 0, Sleep(t, 0) // want `asyncio.Sleep is called on t from a function that asyncio.ToThread runs on another goroutine`
	})
}
