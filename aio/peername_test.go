//go:build unix

package aio

import (
	"fmt"
	"net"
	"reflect"
	"testing"

	"github.com/go-asyncio/asyncio"
)

// A client connected to a literal address takes its peername from that
// address instead of asking getpeername (W9): it must be what
// getpeername decodes, for each form of literal; a name still asks.
func TestPeernameOfLiteralIsGetpeernames(t *testing.T) {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	for _, host := range []string{"127.0.0.1", "::ffff:127.0.0.1", "localhost"} {
		var got, want net.Addr
		runNet(t, func(at *asyncio.T) error {
			_, w, err := OpenConnection(at, host, port)
			if err != nil {
				return err
			}
			got, _ = w.ExtraInfo("peername").(net.Addr)
			want = peerAddr(w.ExtraInfo("socket").(int), "tcp")
			w.Close()
			return w.WaitClosed(at)
		})
		if !reflect.DeepEqual(got, want) || got.String() != fmt.Sprintf("127.0.0.1:%d", port) {
			t.Errorf("%s: peername %#v, getpeername %#v", host, got, want)
		}
	}
	ln.Close()
	<-done
}
