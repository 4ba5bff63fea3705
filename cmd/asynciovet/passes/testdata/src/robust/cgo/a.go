// Package cgo checks that cgo files are analysed like any other.
package cgo

// #include <unistd.h>
import "C"

import (
	"time"

	"github.com/go-asyncio/asyncio"
)

func task(t *asyncio.T) (int, error) {
	C.usleep(1)                  // a C call: not resolved as a Go function, silent
	time.Sleep(time.Millisecond) // want `blockingcall: time.Sleep inside a task`
	return 0, nil
}
