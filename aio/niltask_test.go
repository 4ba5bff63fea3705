//go:build unix

package aio

import (
	"errors"
	"net"
	"os"
	"strings"
	"testing"

	"github.com/go-asyncio/asyncio"
)

// A nil *asyncio.T is a *ValueError that says so, whatever the call (it
// was a nil-pointer dereference in most of them), before anything is
// made: CreateUnixServer made its socket first (clean checks the fds).
func TestCallsWithNilTask(t *testing.T) {
	clean(t)
	proto := func() Protocol { return &BaseProtocol{} }
	echo := func(*asyncio.T, *StreamReader, *StreamWriter) error { return nil }
	calls := map[string]func() error{
		"CreateServer":     func() error { _, err := CreateServer(nil, proto, "127.0.0.1", 0); return err },
		"CreateUnixServer": func() error { _, err := CreateUnixServer(nil, proto, t.TempDir()+"/s.sock"); return err },
		"StartServer":      func() error { _, err := StartServer(nil, echo, "127.0.0.1", 0); return err },
		"OpenConnection":   func() error { _, _, err := OpenConnection(nil, "127.0.0.1", 1); return err },
		"CreateConnection": func() error { _, _, err := CreateConnection(nil, proto, "127.0.0.1", 1); return err },
		"DialConn":         func() error { _, err := DialConn(nil, "tcp", "127.0.0.1:1"); return err },
		"CreateDatagramEndpoint": func() error {
			_, _, err := CreateDatagramEndpoint(nil, func() DatagramProtocol { return &BaseDatagramProtocol{} }, &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)}, nil)
			return err
		},
		"ConnectReadPipe": func() error { _, _, err := ConnectReadPipe(nil, proto, os.Stdin); return err },
		"SockRecv":        func() error { _, err := SockRecv(nil, 0, 1); return err },
	}
	for name, call := range calls {
		func() {
			defer func() {
				r := recover()
				var ve *asyncio.ValueError
				if err, ok := r.(error); !ok || !errors.As(err, &ve) || !(strings.Contains(ve.Msg, "nil *T") || strings.Contains(ve.Msg, "nil loop owner")) {
					t.Errorf("%s(nil, ...): panic %v, want a *ValueError about the nil *T", name, r)
				}
			}()
			if err := call(); err != nil {
				t.Errorf("%s(nil, ...) returned %v instead of panicking", name, err)
			}
		}()
	}
}
