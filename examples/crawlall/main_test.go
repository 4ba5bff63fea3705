//go:build unix

package main

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestCrawlAllSpreadsRequestsOverTheLoops(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "hello") }))
	defer srv.Close()
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	var out strings.Builder
	if err := run(&out, 2, port, 40, 5); err != nil {
		t.Fatal(err)
	}
	if got, want := out.String(), "loop 0: 20 ok\nloop 1: 20 ok\n"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}
