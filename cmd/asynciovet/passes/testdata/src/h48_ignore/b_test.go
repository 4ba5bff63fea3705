package h48_ignore

import (
	"testing"

	"github.com/go-asyncio/asyncio"
)

// The file directive of a_test.go covers a_test.go only.
func TestOther(tt *testing.T) {
	if _, err := asyncio.Run(func(t *asyncio.T) (int, error) {
		asyncio.Sleep(t, 0) // want `droppedcancel: the error of asyncio.Sleep is discarded`
		return 0, nil
	}); err != nil {
		tt.Fatal(err)
	}
}
