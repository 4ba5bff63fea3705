package main

import (
	"testing"

	"github.com/go-asyncio/asyncio"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestHello(t *testing.T) {
	total, err := run(asyncio.WithVirtualTime())
	if err != nil || total != len("world")+len("asyncio") {
		t.Fatalf("run() = %d, %v; want 12, nil", total, err)
	}
}
