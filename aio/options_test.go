//go:build unix

package aio

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-asyncio/asyncio"
)

// WithTLSHandshakeTimeout applies whatever the option order, and without
// WithTLS it is an error (asyncio: ValueError "ssl_handshake_timeout is
// only meaningful with ssl").
func TestTLSHandshakeTimeoutOption(t *testing.T) {
	cfg := &tls.Config{}
	for _, tc := range []struct {
		name string
		opts []Option
		want time.Duration
	}{
		{"after WithTLS", []Option{WithTLS(cfg), WithTLSHandshakeTimeout(time.Second)}, time.Second},
		{"before WithTLS", []Option{WithTLSHandshakeTimeout(2 * time.Second), WithTLS(cfg)}, 2 * time.Second},
		{"default", []Option{WithTLS(cfg)}, defaultTLSHandshakeTimeout},
	} {
		o, err := buildOptions("CreateConnection", tc.opts)
		if err != nil || o.tls.handshakeTimeout != tc.want {
			t.Errorf("%s: timeout %v, err %v; want %v", tc.name, o.tls.handshakeTimeout, err, tc.want)
		}
	}
	_, err := buildOptions("CreateConnection", []Option{WithTLSHandshakeTimeout(time.Second)})
	var ve *asyncio.ValueError
	if !errors.As(err, &ve) || ve.Msg != "ssl_handshake_timeout is only meaningful with ssl" {
		t.Errorf("without WithTLS: err = %v, want the ValueError", err)
	}
	runNet(t, func(at *asyncio.T) error {
		if _, _, err := OpenConnection(at, "127.0.0.1", 1, WithTLSHandshakeTimeout(time.Second)); !errors.Is(err, asyncio.ErrValue) {
			t.Errorf("OpenConnection: err = %v, want a ValueError", err)
		}
		return nil
	})
}

// A given WithTLSHandshakeTimeout is always checked: d <= 0 is asyncio's
// ValueError "ssl_handshake_timeout should be a positive number", and
// without WithTLS even 0 is "only meaningful with ssl" (0 used to count as
// not given, and a negative value with WithTLS was accepted and meant no
// timeout at all); the calls fail before they do anything.
func TestTLSHandshakeTimeoutOptionIsAlwaysChecked(t *testing.T) {
	cfg := &tls.Config{}
	for _, tc := range []struct {
		opts []Option
		want string
	}{
		{[]Option{WithTLS(cfg), WithTLSHandshakeTimeout(0)}, "ssl_handshake_timeout should be a positive number, got 0s"},
		{[]Option{WithTLSHandshakeTimeout(-time.Second), WithTLS(cfg)}, "ssl_handshake_timeout should be a positive number, got -1s"},
		{[]Option{WithTLSHandshakeTimeout(0)}, "ssl_handshake_timeout is only meaningful with ssl"},
		{[]Option{WithTLSHandshakeTimeout(-time.Second)}, "ssl_handshake_timeout is only meaningful with ssl"},
	} {
		_, err := buildOptions("CreateConnection", tc.opts)
		var ve *asyncio.ValueError
		if !errors.As(err, &ve) || ve.Msg != tc.want {
			t.Errorf("err = %v, want the ValueError %q", err, tc.want)
		}
	}
	runNet(t, func(at *asyncio.T) error {
		srv, err := StartServer(at, closeAtOnce, "127.0.0.1", 0, WithTLS(cfg), WithTLSHandshakeTimeout(-time.Second))
		if !errors.Is(err, asyncio.ErrValue) || srv != nil {
			t.Errorf("StartServer: %v, err = %v, want no server and a ValueError", srv, err)
		}
		return nil
	})
}

// Arguments no correct program passes are *ValueErrors naming the
// mistake, returned before any socket exists: a nil resolver or TLS
// config (nil-pointer panics, WithTLS(nil) only after the TCP connect),
// and a port out of 0-65535 for a connect or a bind (CPython: "port must
// be 0-65535"; it used to reach connect or bind as EINVAL).
func TestBadArgumentsFailBeforeAnySocket(t *testing.T) {
	runVirtual(t, func(at *asyncio.T) error {
		factory := func() Protocol { return &BaseProtocol{} }
		dgram := func() DatagramProtocol { return &BaseDatagramProtocol{} }
		for _, c := range []struct {
			name, want string
			call       func() error
		}{
			{"OpenConnection WithResolver(nil)", "WithResolver(nil)", func() error {
				_, _, err := OpenConnection(at, "localhost", 80, WithResolver(nil))
				return err
			}},
			{"StartServer WithResolver(nil)", "WithResolver(nil)", func() error {
				_, err := StartServer(at, closeAtOnce, "localhost", 0, WithResolver(nil))
				return err
			}},
			{"OpenConnection WithTLS(nil)", "WithTLS(nil)", func() error {
				_, _, err := OpenConnection(at, "127.0.0.1", 80, WithTLS(nil))
				return err
			}},
			{"CreateServer WithTLS(nil)", "WithTLS(nil)", func() error {
				_, err := CreateServer(at, factory, "127.0.0.1", 0, WithTLS(nil))
				return err
			}},
			{"OpenConnection port -1", "port must be 0-65535, got -1", func() error {
				_, _, err := OpenConnection(at, "127.0.0.1", -1)
				return err
			}},
			{"CreateConnection port 70000", "port must be 0-65535, got 70000", func() error {
				_, _, err := CreateConnection(at, factory, "127.0.0.1", 70000)
				return err
			}},
			{"StartServer port 70000", "port must be 0-65535, got 70000", func() error {
				_, err := StartServer(at, closeAtOnce, "127.0.0.1", 70000)
				return err
			}},
			{"CreateServer port -1", "port must be 0-65535, got -1", func() error {
				_, err := CreateServer(at, factory, "127.0.0.1", -1)
				return err
			}},
			{"CreateDatagramEndpoint local port", "port must be 0-65535, got 65536", func() error {
				_, _, err := CreateDatagramEndpoint(at, dgram, &net.UDPAddr{Port: 65536}, nil)
				return err
			}},
			{"CreateDatagramEndpoint remote port", "port must be 0-65535, got -5", func() error {
				_, _, err := CreateDatagramEndpoint(at, dgram, nil, &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: -5})
				return err
			}},
		} {
			leaked, err := callCountingFDs(t, c.call)
			var ve *asyncio.ValueError
			if !errors.As(err, &ve) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s: %v, want a ValueError with %q", c.name, err, c.want)
			}
			if len(leaked) > 0 {
				t.Errorf("%s: descriptors left open: %v", c.name, leaked)
			}
		}
		return nil
	})
}

// Without options the calls get asyncio's defaults (backlog 100,
// reuse_address on, happy eyeballs at 250 ms with interleaving, the
// 64 KiB stream limit) and the system's resolver; WithBacklog keeps at
// least one.
func TestOptionDefaults(t *testing.T) {
	o, err := buildOptions("OpenConnection", nil)
	if err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprintf("backlog=%d reuseAddr=%v reusePort=%v broadcast=%v delay=%v interleaves=%v limit=%d resolver is net's=%v tls=%v",
		o.backlog, o.reuseAddr, o.reusePort, o.allowBroadcast, o.happyEyeballsDelay, o.interleaves(), o.limit, o.resolver == Resolver(net.DefaultResolver), o.tls != nil)
	want := "backlog=100 reuseAddr=true reusePort=false broadcast=false delay=250ms interleaves=true limit=65536 resolver is net's=true tls=false"
	if got != want {
		t.Errorf("defaults:\n got %s\nwant %s", got, want)
	}
	if o, _ := buildOptions("CreateServer", []Option{WithBacklog(0)}); o.backlog != 1 {
		t.Errorf("WithBacklog(0): backlog %d, want 1", o.backlog)
	}
	if o, _ := buildOptions("CreateConnection", []Option{WithHappyEyeballsDelay(0)}); o.interleaves() {
		t.Error("without happy eyeballs, interleaving is on; asyncio turns it on only with happy_eyeballs_delay")
	}
}

// nopSubprocess is a SubprocessProtocol that does nothing.
type nopSubprocess struct{}

func (nopSubprocess) ConnectionMade(SubprocessTransport) {}
func (nopSubprocess) PipeDataReceived(int, []byte)       {}
func (nopSubprocess) PipeConnectionLost(int, error)      {}
func (nopSubprocess) ProcessExited()                     {}
func (nopSubprocess) ConnectionLost(error)               {}

// Issue 20 item 5: every call, given one option it does not apply to,
// returns a *ValueError naming the option and the call (as asyncio raises
// TypeError for a keyword its function does not take), before it does
// anything: no connection, no socket file, no child process.
func TestOptions_RejectedByCallsTheyDoNotApplyTo(t *testing.T) {
	dir := t.TempDir()
	sock := filepath.Join(dir, "s.sock")
	marker := filepath.Join(dir, "ran")
	touch := "touch " + marker
	proto := func() Protocol { return &chunkProtocol{} }
	sub := func() SubprocessProtocol { return nopSubprocess{} }
	cb := func(*asyncio.T, *StreamReader, *StreamWriter) error { return nil }
	runNet(t, func(at *asyncio.T) error {
		for _, tc := range []struct {
			call, option string
			run          func() error
		}{
			{"CreateConnection", "WithStdin", func() error {
				_, _, err := CreateConnection(at, proto, "127.0.0.1", 1, WithStdin(Pipe))
				return err
			}},
			{"CreateUnixConnection", "WithHappyEyeballsDelay", func() error {
				_, _, err := CreateUnixConnection(at, proto, sock, WithHappyEyeballsDelay(time.Second))
				return err
			}},
			{"OpenConnection", "WithStdin", func() error {
				_, _, err := OpenConnection(at, "127.0.0.1", 1, WithStdin(Pipe))
				return err
			}},
			{"OpenConnection", "WithBacklog", func() error { // named as the program called it, not as CreateConnection
				_, _, err := OpenConnection(at, "127.0.0.1", 1, WithBacklog(5))
				return err
			}},
			{"OpenUnixConnection", "WithResolver", func() error {
				_, _, err := OpenUnixConnection(at, sock, WithResolver(net.DefaultResolver))
				return err
			}},
			{"DialConn", "WithTLS", func() error {
				_, err := DialConn(at, "tcp", "127.0.0.1:1", WithTLS(&tls.Config{}))
				return err
			}},
			{"CreateServer", "WithStreamLimit", func() error {
				_, err := CreateServer(at, proto, "127.0.0.1", 0, WithStreamLimit(10))
				return err
			}},
			{"CreateUnixServer", "WithReusePort", func() error {
				_, err := CreateUnixServer(at, proto, sock, WithReusePort())
				return err
			}},
			{"StartServer", "WithKeepSocketFile", func() error {
				_, err := StartServer(at, cb, "127.0.0.1", 0, WithKeepSocketFile())
				return err
			}},
			{"StartUnixServer", "WithInterleave", func() error {
				_, err := StartUnixServer(at, cb, sock, WithInterleave(1))
				return err
			}},
			{"CreateDatagramEndpoint", "WithBacklog", func() error {
				_, _, err := CreateDatagramEndpoint(at, func() DatagramProtocol { return nil }, &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)}, nil, WithBacklog(5))
				return err
			}},
			{"SubprocessExec", "WithStreamLimit", func() error {
				_, _, err := SubprocessExec(at, sub, "touch", []string{marker}, WithStreamLimit(10))
				return err
			}},
			{"SubprocessShell", "WithSocket", func() error {
				_, _, err := SubprocessShell(at, sub, touch, WithSocket(0))
				return err
			}},
			{"CreateSubprocessExec", "WithAllowBroadcast", func() error {
				_, err := CreateSubprocessExec(at, "touch", []string{marker}, WithAllowBroadcast())
				return err
			}},
			{"CreateSubprocessShell", "WithMaxWriteBuffer", func() error {
				_, err := CreateSubprocessShell(at, touch, WithMaxWriteBuffer(10))
				return err
			}},
			{"CreateSubprocessShell", "WithDeferredServing", func() error {
				_, err := CreateSubprocessShell(at, touch, WithStdout(Pipe), WithDeferredServing())
				return err
			}},
		} {
			err := tc.run()
			var ve *asyncio.ValueError
			if !errors.As(err, &ve) || !strings.HasPrefix(ve.Msg, tc.call+" does not take the option "+tc.option+" (it applies to ") {
				t.Errorf("%s with %s: err = %v, want a *ValueError naming both", tc.call, tc.option, err)
			}
		}
		return nil
	})
	for _, p := range []string{sock, marker} {
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s exists (%v): a call with a wrong option did something", p, err)
		}
	}
}

// Issue 20 item 5: the message lists the calls the option applies to; the
// zero Option is an error too.
func TestOptions_MessageAndZeroOption(t *testing.T) {
	_, err := buildOptions("OpenConnection", []Option{WithStdin(Pipe)})
	want := "asyncio: OpenConnection does not take the option WithStdin (it applies to SubprocessExec, SubprocessShell, CreateSubprocessExec, CreateSubprocessShell)"
	if err == nil || err.Error() != want {
		t.Errorf("err = %v\nwant %s", err, want)
	}
	_, err = buildOptions("CreateServer", []Option{{}})
	if !errors.Is(err, asyncio.ErrValue) || !strings.Contains(err.Error(), "CreateServer: an Option not made by a With function") {
		t.Errorf("zero Option: err = %v", err)
	}
	// Accepted options still apply, in a call and in the call it is built on.
	o, err := buildOptions("StartServer", via("StartServer", []Option{WithStreamLimit(7), WithBacklog(3)}))
	if err != nil || o.limit != 7 || o.backlog != 3 {
		t.Errorf("StartServer options: %+v, %v", o, err)
	}
}

// Issue 20 item 5 (the review's point): the stream limit is checked in
// buildOptions, once, for every call that takes it, before anything runs.
func TestOptions_StreamLimitCheckedInBuildOptions(t *testing.T) {
	for _, call := range []string{"OpenConnection", "OpenUnixConnection", "StartServer", "StartUnixServer", "CreateSubprocessExec", "CreateSubprocessShell"} {
		for _, n := range []int{0, -1} {
			_, err := buildOptions(call, []Option{WithStreamLimit(n)})
			var ve *asyncio.ValueError
			if !errors.As(err, &ve) || ve.Msg != "Limit cannot be <= 0" {
				t.Errorf("%s WithStreamLimit(%d): err = %v", call, n, err)
			}
		}
	}
	marker := filepath.Join(t.TempDir(), "ran")
	runNet(t, func(at *asyncio.T) error {
		if _, err := CreateSubprocessShell(at, "touch "+marker, WithStreamLimit(0)); !errors.Is(err, asyncio.ErrValue) {
			t.Errorf("CreateSubprocessShell WithStreamLimit(0): err = %v", err)
		}
		return nil
	})
	if _, err := os.Stat(marker); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the child ran (%v)", err)
	}
}
