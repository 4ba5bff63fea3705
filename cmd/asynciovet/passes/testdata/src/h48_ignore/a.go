// Package h48_ignore: directives as users misspell them. A directive that
// names no check the analyzer knows suppresses nothing, and the finding
// stays in sight.
package h48_ignore

import (
	"time"

	"github.com/go-asyncio/asyncio"
)

func task(t *asyncio.T) {
	//asynciovet:ignore blockingcal a misspelled check name suppresses nothing
	time.Sleep(time.Millisecond) // want `blockingcall: time.Sleep`

	//asynciovet:ignore BlockingCall the names are case-sensitive
	time.Sleep(time.Millisecond) // want `blockingcall: time.Sleep`

	//asynciovet:ignore blockingcall, droppedcancel a space after the comma ends the list: droppedcancel is part of the reason
	time.Sleep(time.Millisecond)

	//asynciovet:ignore blockingcall, droppedcancel a space after the comma ends the list: droppedcancel is part of the reason
	asyncio.Sleep(t, 0) // want `droppedcancel: the error of asyncio.Sleep is discarded`

	//asynciovet:ignore blockingcall,droppedcancel, a trailing comma is harmless
	asyncio.Sleep(t, 0)

	/* asynciovet:ignore droppedcancel a block comment is not a directive */
	asyncio.Sleep(t, 0) // want `droppedcancel: the error of asyncio.Sleep is discarded`

	//asynciovet:ignore droppedcancel covers a call written over several lines from its first line
	asyncio.Sleep(t,
		0)

	asyncio.Sleep(t, // want `droppedcancel: the error of asyncio.Sleep is discarded`
		0) //asynciovet:ignore droppedcancel on the last line of the call: covers nothing
}
