//go:build linux

package aio

import (
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/go-asyncio/asyncio"
)

// DialConn took every network but "unix" for "tcp": DialConn(t, "udp",
// "server:53", WithNetwork(h)) made a TCP connection, and
// DialConn(t, "unix", path, WithNetwork(h)) dialled a real Unix socket
// off the simulated network, WithNetwork silently dropped (a test meant
// to run on the network then talks to whatever listens at path on the
// machine). net.Dial refuses a network it does not know, and the
// package's calls refuse an option they cannot honour, naming it, before
// anything is dialled: both are a *ValueError now.
func TestH21_DialConnRefusesWhatItCannotDo(tt *testing.T) {
	clean(tt)
	path := filepath.Join(tt.TempDir(), "s")
	runVirtual(tt, func(t *asyncio.T) error {
		n, c, s := simPair(t, 1, LinkConfig{})
		srv, err := StartServer(t, echoLines(""), "", 53, WithNetwork(s))
		if err != nil {
			return err
		}
		defer srv.Close()
		userver, err := StartUnixServer(t, echoLines("real: "), path)
		if err != nil {
			return err
		}
		defer userver.Close()
		for _, tc := range []struct {
			network, address, want string
			opts                   []Option
		}{
			{"udp", "server:53", `"udp"`, []Option{WithNetwork(c)}},
			{"tcp5", "server:53", `"tcp5"`, []Option{WithNetwork(c)}},
			{"unix", path, "WithNetwork", []Option{WithNetwork(c)}},
		} {
			conn, err := DialConn(t, tc.network, tc.address, tc.opts...)
			if conn != nil {
				conn.Close()
			}
			var ve *asyncio.ValueError
			if !errors.As(err, &ve) || !strings.Contains(ve.Msg, tc.want) {
				return fmt.Errorf("DialConn(%q, %q): %v, want a *ValueError naming %s", tc.network, tc.address, err, tc.want)
			}
		}
		if len(n.Conns()) != 0 {
			return fmt.Errorf("refused dials made %d connections", len(n.Conns()))
		}
		return nil
	})
}

// CreateConnection and OpenConnection with host "" (asyncio's
// host=None) connect to the loopback addresses, getaddrinfo(None, port)'s
// answer, and with port 0 too are a *ValueError ("host and port was not
// specified"). On the simulated network "" was looked up as a host name:
// a DNS error ("no such host") in both cases. It is the calling host's
// loopback there too now, as "localhost" is.
func TestH21_EmptyHostIsLoopbackOnTheNetwork(tt *testing.T) {
	clean(tt)
	run := func(t *asyncio.T, opts ...Option) (string, error) {
		srv, err := StartServer(t, echoLines("echo: "), "", 0, opts...)
		if err != nil {
			return "", err
		}
		defer srv.Close()
		_, _, err = OpenConnection(t, "", 0, opts...)
		var ve *asyncio.ValueError
		if !errors.As(err, &ve) || !strings.Contains(ve.Msg, "host and port was not specified") {
			return "", fmt.Errorf(`OpenConnection("", 0): %v, want the ValueError "host and port was not specified"`, err)
		}
		r, w, err := OpenConnection(t, "", serverPort(srv), opts...)
		if err != nil {
			return "", fmt.Errorf(`OpenConnection("", port): %v`, err)
		}
		defer w.Close()
		w.Write([]byte("hi\n"))
		line, err := r.ReadLine(t)
		return string(line), err
	}
	runVirtual(tt, func(t *asyncio.T) error {
		real, err := run(t)
		if err != nil {
			return fmt.Errorf("real sockets: %v", err)
		}
		_, _, s := simPair(t, 1, LinkConfig{})
		sim, err := run(t, WithNetwork(s))
		if err != nil {
			return fmt.Errorf("simulated network: %v", err)
		}
		if sim != real || real != "echo: hi\n" {
			return fmt.Errorf("echo %q on the network, %q on real sockets", sim, real)
		}
		return nil
	})
}

// A dial to an IP address no simulated host has failed with a
// *net.DNSError ("lookup 10.0.0.99: no such host"): an address literal is
// never looked up, by asyncio (getaddrinfo returns it as it is) or by
// this package on real sockets, so code that tells a name that does not
// resolve from a host that cannot be reached took the wrong branch. It
// fails as the network's datagram endpoint connected there does, with
// ENETUNREACH from connect (an *os.SyscallError, as a real connect's);
// an unknown name is still a DNSError.
func TestH21_UnknownAddressIsNotADNSError(tt *testing.T) {
	clean(tt)
	runVirtual(tt, func(t *asyncio.T) error {
		_, c, _ := simPair(t, 1, LinkConfig{})
		for _, host := range []string{"10.0.0.99", "192.0.2.1", "2001:db8::1"} {
			_, _, err := OpenConnection(t, host, 80, WithNetwork(c))
			var dns *net.DNSError
			if errors.As(err, &dns) || !errors.Is(err, syscall.ENETUNREACH) {
				return fmt.Errorf("dial %s: %v, want ENETUNREACH, not a DNS error", host, err)
			}
		}
		_, _, err := OpenConnection(t, "nowhere", 80, WithNetwork(c))
		var dns *net.DNSError
		if !errors.As(err, &dns) || !dns.IsNotFound {
			return fmt.Errorf("dial nowhere: %v, want a not-found DNSError", err)
		}
		return nil
	})
}
