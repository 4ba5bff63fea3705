// Package ignore checks the //asynciovet:ignore directive.
package ignore

import (
	"time"

	"github.com/go-asyncio/asyncio"
)

func task(t *asyncio.T, ch chan int) (int, error) {
	time.Sleep(time.Millisecond) //asynciovet:ignore blockingcall the test measures a frozen loop

	//asynciovet:ignore blockingcall,droppedcancel the line below is the scenario under test
	asyncio.Sleep(t, 0)

	// A directive without a reason is not honoured.
	//asynciovet:ignore blockingcall
	time.Sleep(time.Millisecond) // want `blockingcall: time.Sleep`

	//asynciovet:ignore droppedcancel the directive names another check
	time.Sleep(time.Millisecond) // want `blockingcall: time.Sleep`

	//asynciovet:ignore blockingcall only the next line is covered

	time.Sleep(time.Millisecond) // want `blockingcall: time.Sleep`

	//asynciovet:ignoreblockingcall a malformed directive
	return <-ch, nil // want `blockingcall: channel receive`
}
