package aio

import (
	"fmt"
	"runtime/debug"

	"github.com/go-asyncio/asyncio"
)

func runtimeErrorf(format string, args ...any) *asyncio.RuntimeError {
	return &asyncio.RuntimeError{Msg: fmt.Sprintf(format, args...)}
}

func newPanicError(v any) *asyncio.PanicError {
	return &asyncio.PanicError{Value: v, Stack: debug.Stack()}
}
