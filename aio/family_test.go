//go:build unix

package aio

import (
	"errors"
	"net"
	"strings"
	"testing"

	"github.com/go-asyncio/asyncio"
	"golang.org/x/sys/unix"
)

// hasIPv6 reports whether this host can bind ::1.
func hasIPv6(t *testing.T) bool {
	t.Helper()
	fd, err := unix.Socket(unix.AF_INET6, unix.SOCK_STREAM, 0)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	return unix.Bind(fd, &unix.SockaddrInet6{Addr: [16]byte{15: 1}}) == nil
}

// WithFamily is asyncio's family=: a server on host "" listens on that
// family's wildcard only, and a client connects to that family's
// addresses of the host (of host "": the loopback one).
func TestWithFamily(t *testing.T) {
	ipv6 := hasIPv6(t)
	runNet(t, func(at *asyncio.T) error {
		factory := func() Protocol { return &BaseProtocol{} }
		listeners := func(opts ...Option) ([]string, error) {
			srv, err := CreateServer(at, factory, "", 0, opts...)
			if err != nil {
				return nil, err
			}
			var hosts []string
			for _, a := range srv.Addrs() {
				hosts = append(hosts, a.(*net.TCPAddr).IP.String())
			}
			srv.Close()
			return hosts, srv.WaitClosed(at)
		}
		got, err := listeners(WithFamily(unix.AF_INET))
		if err != nil || strings.Join(got, " ") != "0.0.0.0" {
			t.Errorf("server on \"\" with AF_INET: %v %v, want 0.0.0.0 only", got, err)
		}
		if ipv6 {
			got, err = listeners(WithFamily(unix.AF_INET6))
			if err != nil || strings.Join(got, " ") != "::" {
				t.Errorf("server on \"\" with AF_INET6: %v %v, want :: only", got, err)
			}
		}

		// A server on both families (one port); the client picks by family.
		srv, err := CreateServer(at, factory, "127.0.0.1", 0)
		if err != nil {
			return err
		}
		defer srv.Close()
		port := srv.Addr().(*net.TCPAddr).Port
		if ipv6 {
			srv6, err := CreateServer(at, factory, "::1", port)
			if err != nil {
				return err
			}
			defer srv6.Close()
		}
		r := hostsResolver{"both.test": {"::1", "127.0.0.1"}, "v4.test": {"127.0.0.1"}}
		peer := func(host string, opts ...Option) (string, error) {
			tr, _, err := CreateConnection(at, factory, host, port, append(opts, WithResolver(r))...)
			if err != nil {
				return "", err
			}
			defer tr.Close()
			return PeerName(tr).(*net.TCPAddr).IP.String(), nil
		}
		for _, host := range []string{"", "both.test"} {
			if p, err := peer(host, WithFamily(unix.AF_INET)); err != nil || p != "127.0.0.1" {
				t.Errorf("client to %q with AF_INET: peer %q %v, want 127.0.0.1", host, p, err)
			}
			if ipv6 {
				if p, err := peer(host, WithFamily(unix.AF_INET6)); err != nil || p != "::1" {
					t.Errorf("client to %q with AF_INET6: peer %q %v, want ::1", host, p, err)
				}
				if p, err := peer(host); err != nil || p != "::1" { // both: ::1 first
					t.Errorf("client to %q: peer %q %v, want ::1", host, p, err)
				}
			}
		}

		// No address of the family: getaddrinfo's errors.
		for _, c := range []struct{ host, want string }{
			{"127.0.0.1", "Address family for hostname not supported"},
			{"v4.test", "No address associated with hostname"},
		} {
			_, err := peer(c.host, WithFamily(unix.AF_INET6))
			var de *net.DNSError
			if !errors.As(err, &de) || de.Err != c.want || de.Name != c.host {
				t.Errorf("client to %s with AF_INET6: %T %v, want a *net.DNSError %q", c.host, err, err, c.want)
			}
		}
		_, err = peer("127.0.0.1", WithFamily(unix.AF_INET6), WithLocalAddr("127.0.0.1", 0))
		if de := (*net.DNSError)(nil); !errors.As(err, &de) {
			t.Errorf("WithLocalAddr of another family: %v, want a *net.DNSError", err)
		}
		return nil
	})
}

// WithFamily's bad uses are a *ValueError naming the mistake, before
// anything is resolved, bound or connected.
func TestWithFamilyErrors(t *testing.T) {
	runNet(t, func(at *asyncio.T) error {
		factory := func() Protocol { return &BaseProtocol{} }
		host := NewSimNetwork(at, 1).Host("a")
		for name, c := range map[string]struct {
			f    func() error
			want string
		}{
			"another family": {func() error {
				_, _, err := CreateConnection(at, factory, "127.0.0.1", 1, WithFamily(unix.AF_UNIX))
				return err
			},
				"WithFamily(1): the family must be unix.AF_INET, unix.AF_INET6 or unix.AF_UNSPEC"},
			"with WithSocket": {func() error {
				_, err := CreateServer(at, factory, "", 0, WithSocket(0), WithFamily(unix.AF_INET))
				return err
			},
				"WithFamily and WithSocket cannot be given together"},
			"on a simulated network": {func() error {
				_, err := CreateServer(at, factory, "", 80, WithNetwork(host), WithFamily(unix.AF_INET))
				return err
			}, "WithFamily is not supported on a simulated network"},
			"a Unix call": {func() error {
				_, _, err := CreateUnixConnection(at, factory, "/nonexistent", WithFamily(unix.AF_INET))
				return err
			}, "CreateUnixConnection does not take the option WithFamily"},
		} {
			err := c.f()
			if ve, ok := err.(*asyncio.ValueError); !ok || !strings.Contains(ve.Msg, c.want) {
				t.Errorf("%s: %T %v, want a *ValueError with %q", name, err, err, c.want)
			}
		}
		return nil
	})
}
