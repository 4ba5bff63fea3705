//go:build unix

package main

import (
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestSelfConnect(t *testing.T) {
	var out strings.Builder
	if err := run(&out, "ping"); err != nil {
		t.Fatal(err)
	}
	want := "server: accepted\nclient: connected\nclient: echo \"ping\"\nserver: peer closed\n"
	if !strings.Contains(out.String(), "client: connected") || !strings.HasSuffix(out.String(), "client: echo \"ping\"\nserver: peer closed\n") {
		t.Fatalf("got %q, want %q (accept/connect order may vary)", out.String(), want)
	}
}
