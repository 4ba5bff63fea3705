//go:build never

// This file is excluded by its build constraint: the analyzers never see
// it, so its findings (and its errors) do not count.
package tags

import (
	"time"

	"github.com/go-asyncio/asyncio"
)

func excluded(t *asyncio.T) {
	time.Sleep(undefinedDuration)
}
