//go:build unix

package aio

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"syscall"
	"testing"

	"github.com/go-asyncio/asyncio"
	"github.com/google/go-cmp/cmp"
)

// A connect whose attempts all fail with different errors reads as
// asyncio's OSError: "Multiple exceptions: " and the attempts' texts
// joined with ", " (base_events.py create_connection), and still
// unwraps to each attempt's error.
func TestCreateConnectionMultipleExceptionsText(t *testing.T) {
	t.Parallel()
	runNet(t, func(at *asyncio.T) error {
		port := closedPort(t)
		_, _, err := CreateConnection(at, func() Protocol { return &BaseProtocol{} }, "two.test", port,
			fakeResolver("127.0.0.1", "127.0.0.2"), WithHappyEyeballsDelay(0))
		want := fmt.Sprintf("Multiple exceptions: connect to 127.0.0.1:%d: connect: connection refused, connect to 127.0.0.2:%d: connect: connection refused", port, port)
		if err == nil || err.Error() != want {
			t.Errorf("err = %v\nwant %s", err, want)
		}
		if !errors.Is(err, syscall.ECONNREFUSED) {
			t.Errorf("errors.Is(%v, ECONNREFUSED) = false", err)
		}
		return nil
	})
}

// hostsResolver resolves each name to its addresses (WithResolver), and
// a name it does not have to a *net.DNSError.
type hostsResolver map[string][]string

func (r hostsResolver) LookupIPAddr(_ context.Context, host string) ([]net.IPAddr, error) {
	ips, ok := r[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	var out []net.IPAddr
	for _, s := range ips {
		out = append(out, net.IPAddr{IP: net.ParseIP(s)})
	}
	return out, nil
}

// An attempt whose binds to every local address of its family fail
// counts each bind's error, as asyncio's _connect_sock keeps each: two
// local addresses that are not this host's give two errors, joined under
// "Multiple exceptions" (only the last one was kept).
func TestCreateConnectionEveryBindErrorCounts(t *testing.T) {
	t.Parallel()
	runNet(t, func(at *asyncio.T) error {
		port := closedPort(t)
		r := hostsResolver{"one.test": {"127.0.0.1"}, "local.test": {"198.51.100.1", "198.51.100.2"}}
		_, _, err := CreateConnection(at, func() Protocol { return &BaseProtocol{} }, "one.test", port,
			WithResolver(r), WithLocalAddr("local.test", 0), WithHappyEyeballsDelay(0))
		want := fmt.Sprintf("Multiple exceptions: "+
			"connect to 127.0.0.1:%d: error while attempting to bind on address 198.51.100.1:0: bind: cannot assign requested address, "+
			"connect to 127.0.0.1:%d: error while attempting to bind on address 198.51.100.2:0: bind: cannot assign requested address", port, port)
		if err == nil || err.Error() != want {
			t.Errorf("err = %v\nwant %s", err, want)
		}
		if !errors.Is(err, syscall.EADDRNOTAVAIL) {
			t.Errorf("errors.Is(%v, EADDRNOTAVAIL) = false", err)
		}
		return nil
	})
}

// asGroup returns err as the group WithAllErrors makes, failing the test
// if it is not one.
func asGroup(t *testing.T, err error) *asyncio.ExceptionGroup {
	t.Helper()
	eg, ok := err.(*asyncio.ExceptionGroup)
	if !ok {
		t.Fatalf("err = %T %v, want an *asyncio.ExceptionGroup", err, err)
	}
	if eg.Msg != "create_connection failed" {
		t.Errorf("group message %q, want %q", eg.Msg, "create_connection failed")
	}
	return eg
}

// WithAllErrors: every attempt refused gives an ExceptionGroup "create_connection
// failed" with each attempt's error, in the order the attempts started,
// one at a time or racing (happy eyeballs), through CreateConnection and
// OpenConnection (asyncio's all_errors=True; open_connection passes it
// on); errors.Is reaches the members.
func TestWithAllErrorsEveryAttempt(t *testing.T) {
	t.Parallel()
	runNet(t, func(at *asyncio.T) error {
		port := closedPort(t)
		factory := func() Protocol { return &BaseProtocol{} }
		for _, c := range []struct {
			name string
			dial func() error
		}{
			{"sequential", func() error {
				_, _, err := CreateConnection(at, factory, "two.test", port, fakeResolver("127.0.0.1", "127.0.0.2"), WithHappyEyeballsDelay(0), WithAllErrors())
				return err
			}},
			{"happy eyeballs", func() error {
				_, _, err := CreateConnection(at, factory, "two.test", port, fakeResolver("127.0.0.1", "127.0.0.2"), WithAllErrors())
				return err
			}},
			{"OpenConnection", func() error {
				_, _, err := OpenConnection(at, "two.test", port, fakeResolver("127.0.0.1", "127.0.0.2"), WithAllErrors())
				return err
			}},
		} {
			err := c.dial()
			eg := asGroup(t, err)
			if len(eg.Errs) != 2 || eg.Error() != "create_connection failed (2 sub-exceptions)" {
				t.Errorf("%s: %v: %d members", c.name, eg, len(eg.Errs))
			}
			for i, e := range eg.Errs {
				want := fmt.Sprintf("connect to 127.0.0.%d:%d: connect: connection refused", i+1, port)
				if e.Error() != want || !errors.Is(e, syscall.ECONNREFUSED) {
					t.Errorf("%s: member %d = %v, want %s", c.name, i, e, want)
				}
			}
			if !errors.Is(err, syscall.ECONNREFUSED) {
				t.Errorf("%s: errors.Is(group, ECONNREFUSED) = false", c.name)
			}
		}
		return nil
	})
}

// WithAllErrors keeps what asyncio's all_errors keeps: one failed attempt
// is a group of one (test_create_connection_connect_err), and attempts
// whose errors read the same are each a member (without the option they
// are one error).
func TestWithAllErrorsOneAndSame(t *testing.T) {
	t.Parallel()
	runNet(t, func(at *asyncio.T) error {
		port := closedPort(t)
		factory := func() Protocol { return &BaseProtocol{} }
		_, _, err := CreateConnection(at, factory, "127.0.0.1", port, WithAllErrors())
		if eg := asGroup(t, err); len(eg.Errs) != 1 || !errors.Is(eg.Errs[0], syscall.ECONNREFUSED) {
			t.Errorf("one attempt: %+v", eg)
		}
		_, _, err = CreateConnection(at, factory, "same.test", port, fakeResolver("127.0.0.1", "127.0.0.1"), WithHappyEyeballsDelay(0), WithAllErrors())
		if eg := asGroup(t, err); len(eg.Errs) != 2 || eg.Errs[0].Error() != eg.Errs[1].Error() {
			t.Errorf("same text: %+v", eg)
		}
		// Without the option: the one error, as it is.
		_, _, err = CreateConnection(at, factory, "same.test", port, fakeResolver("127.0.0.1", "127.0.0.1"), WithHappyEyeballsDelay(0))
		if _, isGroup := err.(*asyncio.ExceptionGroup); isGroup || err == nil || !errors.Is(err, syscall.ECONNREFUSED) || strings.Contains(err.Error(), "Multiple") {
			t.Errorf("same text without WithAllErrors: %v", err)
		}
		return nil
	})
}

// WithAllErrors with WithLocalAddr: each failed bind of each attempt is
// a member (test_create_connection_multiple_errors_local_addr with
// all_errors=True), in order.
func TestWithAllErrorsBindErrors(t *testing.T) {
	t.Parallel()
	runNet(t, func(at *asyncio.T) error {
		port := closedPort(t)
		r := hostsResolver{"two.test": {"127.0.0.1", "127.0.0.2"}, "local.test": {"198.51.100.1", "198.51.100.2"}}
		_, _, err := CreateConnection(at, func() Protocol { return &BaseProtocol{} }, "two.test", port,
			WithResolver(r), WithLocalAddr("local.test", 0), WithHappyEyeballsDelay(0), WithAllErrors())
		var got []string
		for _, e := range asGroup(t, err).Errs {
			got = append(got, e.Error())
		}
		var want []string
		for _, to := range []string{"127.0.0.1", "127.0.0.2"} {
			for _, from := range []string{"198.51.100.1", "198.51.100.2"} {
				want = append(want, fmt.Sprintf("connect to %s:%d: error while attempting to bind on address %s:0: bind: cannot assign requested address", to, port, from))
			}
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("members (-want +got):\n%s", diff)
		}
		return nil
	})
}

// WithAllErrors does not touch a failed lookup, as asyncio's all_errors
// does not (getaddrinfo's error, or "getaddrinfo() returned empty list",
// is raised before any attempt): the remote host's and WithLocalAddr's.
func TestWithAllErrorsLookupFailure(t *testing.T) {
	t.Parallel()
	runNet(t, func(at *asyncio.T) error {
		factory := func() Protocol { return &BaseProtocol{} }
		r := hostsResolver{"empty.test": nil, "one.test": {"127.0.0.1"}}
		for _, c := range []struct {
			host, local string
			want        string
		}{
			{"missing.test", "", "lookup missing.test: no such host"},
			{"empty.test", "", `getaddrinfo() returned empty list for "empty.test"`},
			{"one.test", "missing.test", "lookup missing.test: no such host"},
		} {
			opts := []Option{WithResolver(r), WithAllErrors()}
			if c.local != "" {
				opts = append(opts, WithLocalAddr(c.local, 0))
			}
			_, _, err := CreateConnection(at, factory, c.host, closedPort(t), opts...)
			if _, isGroup := err.(*asyncio.ExceptionGroup); isGroup || err == nil || err.Error() != c.want {
				t.Errorf("host %s, local %q: err = %T %v, want %s", c.host, c.local, err, err, c.want)
			}
		}
		return nil
	})
}

// On a simulated network (one address per host, so one attempt) a
// refused connect is a group of one with WithAllErrors, and a host not on
// the network is the lookup's *net.DNSError, not a group.
func TestWithAllErrorsSimNetwork(t *testing.T) {
	t.Parallel()
	runVirtual(t, func(at *asyncio.T) error {
		n := NewSimNetwork(at, 1)
		defer n.Close()
		client := n.Host("client")
		n.Host("server")
		_, _, err := OpenConnection(at, "server", 80, WithNetwork(client), WithAllErrors())
		if eg := asGroup(t, err); len(eg.Errs) != 1 || !errors.Is(eg.Errs[0], syscall.ECONNREFUSED) {
			t.Errorf("refused: %+v", eg)
		}
		_, _, err = OpenConnection(at, "server", 80, WithNetwork(client))
		if _, isGroup := err.(*asyncio.ExceptionGroup); isGroup || !errors.Is(err, syscall.ECONNREFUSED) {
			t.Errorf("refused without WithAllErrors: %T %v", err, err)
		}
		_, _, err = OpenConnection(at, "nowhere", 80, WithNetwork(client), WithAllErrors())
		var de *net.DNSError
		if _, isGroup := err.(*asyncio.ExceptionGroup); isGroup || !errors.As(err, &de) {
			t.Errorf("unknown host: %T %v", err, err)
		}
		return nil
	})
}

// WithAllErrors is CreateConnection's and OpenConnection's (asyncio's
// create_connection keyword, which open_connection passes on): other
// calls refuse it with a *ValueError naming it, before doing anything.
func TestWithAllErrorsOtherCalls(t *testing.T) {
	t.Parallel()
	runNet(t, func(at *asyncio.T) error {
		factory := func() Protocol { return &BaseProtocol{} }
		for call, f := range map[string]func() error{
			"DialConn": func() error { _, err := DialConn(at, "tcp", "127.0.0.1:1", WithAllErrors()); return err },
			"CreateUnixConnection": func() error {
				_, _, err := CreateUnixConnection(at, factory, "/nonexistent", WithAllErrors())
				return err
			},
			"CreateServer": func() error { _, err := CreateServer(at, factory, "127.0.0.1", 0, WithAllErrors()); return err },
		} {
			err := f()
			want := call + " does not take the option WithAllErrors (it applies to CreateConnection, OpenConnection)"
			if ve, ok := err.(*asyncio.ValueError); !ok || ve.Msg != want {
				t.Errorf("%s: %T %v, want a *ValueError %q", call, err, err, want)
			}
		}
		return nil
	})
}

// A bind that failed before another bound the socket counts among the
// attempt's errors when its connect then fails, as in asyncio's
// _connect_sock (test_create_connection_multiple_errors_local_addr: four
// errors for two attempts, each a failed bind and a refused connect).
func TestCreateConnectionFailedBindBeforeConnectCounts(t *testing.T) {
	t.Parallel()
	runNet(t, func(at *asyncio.T) error {
		port := closedPort(t)
		r := hostsResolver{"two.test": {"127.0.0.1", "127.0.0.2"}, "local.test": {"198.51.100.1", "127.0.0.1"}}
		factory := func() Protocol { return &BaseProtocol{} }
		var want []string
		for _, to := range []string{"127.0.0.1", "127.0.0.2"} {
			want = append(want,
				fmt.Sprintf("connect to %s:%d: error while attempting to bind on address 198.51.100.1:0: bind: cannot assign requested address", to, port),
				fmt.Sprintf("connect to %s:%d: connect: connection refused", to, port))
		}
		_, _, err := CreateConnection(at, factory, "two.test", port,
			WithResolver(r), WithLocalAddr("local.test", 0), WithHappyEyeballsDelay(0), WithAllErrors())
		var got []string
		for _, e := range asGroup(t, err).Errs {
			got = append(got, e.Error())
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("members (-want +got):\n%s", diff)
		}
		_, _, err = CreateConnection(at, factory, "two.test", port,
			WithResolver(r), WithLocalAddr("local.test", 0), WithHappyEyeballsDelay(0))
		if w := "Multiple exceptions: " + strings.Join(want, ", "); err == nil || err.Error() != w {
			t.Errorf("err = %v\nwant %s", err, w)
		}
		return nil
	})
}

// host "" (asyncio's host=None: the loopback addresses, ::1 then
// 127.0.0.1) takes WithAllErrors too: both attempts' errors in the group.
func TestWithAllErrorsNoHost(t *testing.T) {
	t.Parallel()
	runNet(t, func(at *asyncio.T) error {
		port := closedPort(t)
		_, _, err := CreateConnection(at, func() Protocol { return &BaseProtocol{} }, "", port, WithHappyEyeballsDelay(0), WithAllErrors())
		eg := asGroup(t, err)
		if len(eg.Errs) != 2 || !strings.HasPrefix(eg.Errs[0].Error(), fmt.Sprintf("connect to [::1]:%d: ", port)) ||
			eg.Errs[1].Error() != fmt.Sprintf("connect to 127.0.0.1:%d: connect: connection refused", port) {
			t.Errorf("members %q", eg.Errs)
		}
		return nil
	})
}
