//go:build unix

package aio

import (
	"net"
	"strings"
	"testing"

	"github.com/go-asyncio/asyncio"
)

// WithHosts is asyncio's host given as a sequence: the server listens on
// every address of every host (once each), looked up before any socket
// is made.
func TestWithHosts(t *testing.T) {
	runNet(t, func(at *asyncio.T) error {
		factory := func() Protocol { return &BaseProtocol{} }
		r := hostsResolver{"one.test": {"127.0.0.1"}, "two.test": {"127.0.0.2", "127.0.0.1"}}
		srv, err := CreateServer(at, factory, "", 0, WithHosts("one.test", "two.test", "127.0.0.3"), WithResolver(r))
		if err != nil {
			return err
		}
		var got []string
		for _, a := range srv.Addrs() {
			got = append(got, a.(*net.TCPAddr).IP.String())
		}
		if strings.Join(got, " ") != "127.0.0.1 127.0.0.2 127.0.0.3" {
			t.Errorf("listeners %v, want 127.0.0.1 127.0.0.2 127.0.0.3", got)
		}
		srv.Close()
		if err := srv.WaitClosed(at); err != nil {
			return err
		}

		// StartServer takes it too; a host that does not resolve binds
		// nothing.
		_, err = StartServer(at, func(*asyncio.T, *StreamReader, *StreamWriter) error { return nil }, "", 0,
			WithHosts("127.0.0.1", "nowhere.test"), WithResolver(r))
		if _, ok := err.(*net.DNSError); !ok {
			t.Errorf("a host that does not resolve: %T %v, want its *net.DNSError", err, err)
		}

		for name, c := range map[string]struct {
			f    func() error
			want string
		}{
			"no host":   {func() error { _, err := CreateServer(at, factory, "", 0, WithHosts()); return err }, "WithHosts(): no host"},
			"both ways": {func() error { _, err := CreateServer(at, factory, "127.0.0.1", 0, WithHosts("::1")); return err }, `host "127.0.0.1" given together with WithHosts`},
			"a client": {func() error {
				_, _, err := CreateConnection(at, factory, "127.0.0.1", 1, WithHosts("::1"))
				return err
			}, "CreateConnection does not take the option WithHosts"},
		} {
			err := c.f()
			if ve, ok := err.(*asyncio.ValueError); !ok || !strings.Contains(ve.Msg, c.want) {
				t.Errorf("%s: %T %v, want a *ValueError with %q", name, err, err, c.want)
			}
		}
		return nil
	})
}
