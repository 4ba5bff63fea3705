//go:build unix

package main

import (
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestEcho(t *testing.T) {
	var out strings.Builder
	if err := run(&out, []string{"hello", "go-asyncio"}); err != nil {
		t.Fatal(err)
	}
	if got, want := out.String(), "HELLO\nGO-ASYNCIO\n"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}
