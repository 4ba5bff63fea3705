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
	calls := map[string]func(){
		"CreateServer":     func() { CreateServer(nil, proto, "127.0.0.1", 0) },
		"CreateUnixServer": func() { CreateUnixServer(nil, proto, t.TempDir()+"/s.sock") },
		"StartServer":      func() { StartServer(nil, echo, "127.0.0.1", 0) },
		"OpenConnection":   func() { OpenConnection(nil, "127.0.0.1", 1) },
		"CreateConnection": func() { CreateConnection(nil, proto, "127.0.0.1", 1) },
		"DialConn":         func() { DialConn(nil, "tcp", "127.0.0.1:1") },
		"CreateDatagramEndpoint": func() {
			CreateDatagramEndpoint(nil, func() DatagramProtocol { return &BaseDatagramProtocol{} }, &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)}, nil)
		},
		"ConnectReadPipe": func() { ConnectReadPipe(nil, proto, os.Stdin) },
		"SockRecv":        func() { SockRecv(nil, 0, 1) },
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
			call()
		}()
	}
}
