package blockingcall

import (
	"time"

	aso "github.com/go-asyncio/asyncio"
)

type item struct{ n int }

func fixInt(t *aso.T) (int, error) {
	time.Sleep(10 * time.Millisecond) // want `time.Sleep inside a task blocks the whole event loop until it returns; use asyncio.Sleep\(t, d\)`
	return 1, nil
}

func fixStruct(t *aso.T) (struct{}, error) {
	for i := 0; i < 3; i++ {
		time.Sleep(time.Duration(i) * time.Millisecond) // want `time.Sleep inside a task`
	}
	return struct{}{}, nil
}

func fixErrOnly(l *aso.Loop) {
	aso.CreateTask(l, func(tt *aso.T) (*item, error) {
		time.Sleep(time.Second) // want `time.Sleep inside a task`
		return &item{}, nil
	})
}

// No fix: the zero value of item needs a type name.
func noFixNamedStruct(t *aso.T) (item, error) {
	time.Sleep(time.Second) // want `time.Sleep inside a task`
	return item{}, nil
}

// No fix: the function returns no error.
func noFixNoError(t *aso.T) {
	time.Sleep(time.Second) // want `time.Sleep inside a task`
}

// No fix: the handle is unnamed.
func noFixUnnamed(_ *aso.T) error {
	time.Sleep(time.Second) // want `time.Sleep inside a task`
	return nil
}

// No fix: the result is used as an expression, not a statement... (Sleep
// has none), and inside a literal called on the spot a return would leave
// the literal, not the task.
func noFixNested(t *aso.T) error {
	func() {
		time.Sleep(time.Second) // want `time.Sleep inside a task`
	}()
	return nil
}
