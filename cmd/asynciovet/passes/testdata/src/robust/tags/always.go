//go:build linux || !linux

package tags

import "github.com/go-asyncio/asyncio"

func included(t *asyncio.T, ch chan int) int {
	return <-ch // want `blockingcall: channel receive inside a task`
}
