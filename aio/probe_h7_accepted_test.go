//go:build unix

package aio

import (
	"crypto/tls"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/go-asyncio/asyncio"
	"golang.org/x/sys/unix"
)

// A server's WithTLS config without a certificate fails every handshake
// ("tls: no certificates configured"), and only once a client came:
// ConnectAcceptedSocket waited for the handshake timeout with a silent
// peer, and a server listened. It is a *ValueError naming the mistake,
// before the socket is touched or a server made.
func TestH7ServerTLSWithoutCertificate(t *testing.T) {
	clean(t)
	var log []string
	isOpen := func(fd int) bool { _, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); return err == nil }
	const want = "a server's *tls.Config needs a certificate"
	runVirtual(t, func(at *asyncio.T) error {
		pair := socketpair(t, unix.SOCK_STREAM)
		defer unix.Close(pair[0])
		defer unix.Close(pair[1])
		if err := unix.SetNonblock(pair[0], false); err != nil {
			return err
		}
		proto := func() Protocol { return newStreamRecorder(at, "p", &log) }
		_, _, err := ConnectAcceptedSocket(at, proto, pair[0], WithTLS(&tls.Config{}), WithTLSHandshakeTimeout(5*time.Second))
		if !errors.Is(err, asyncio.ErrValue) || !strings.Contains(err.Error(), want) {
			t.Errorf("ConnectAcceptedSocket: err = %v, want a *ValueError with %q", err, want)
		}
		if !isOpen(pair[0]) {
			t.Error("ConnectAcceptedSocket closed the fd of a refused call")
		}
		flags, err := unix.FcntlInt(uintptr(pair[0]), unix.F_GETFL, 0)
		if err != nil || flags&unix.O_NONBLOCK != 0 {
			t.Errorf("the refused call changed the fd's flags (%#x, %v)", flags, err)
		}
		srv, err := CreateServer(at, proto, "127.0.0.1", 0, WithTLS(&tls.Config{}))
		if !errors.Is(err, asyncio.ErrValue) || !strings.Contains(err.Error(), want) {
			t.Errorf("CreateServer: err = %v, want a *ValueError with %q", err, want)
		}
		if srv != nil {
			srv.Close()
		}
		// A config that finds its certificate per client is accepted.
		serverCfg, _ := testTLSConfigs(t)
		dyn := &tls.Config{GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return &serverCfg.Certificates[0], nil }}
		srv, err = CreateServer(at, proto, "127.0.0.1", 0, WithTLS(dyn))
		if err != nil {
			t.Errorf("CreateServer with GetCertificate: %v", err)
		} else {
			srv.Close()
			if err := srv.WaitClosed(at); err != nil {
				return err
			}
		}
		// A client's config needs none.
		if _, err := buildOptions("CreateConnection", []Option{WithTLS(&tls.Config{})}); err != nil {
			t.Errorf("a client's config without a certificate: %v", err)
		}
		return settle(at)
	})
}

// ConnectAcceptedSocket with TLS and a peer that never speaks: the
// handshake timeout (virtual time) or a cancellation ends the call, the
// fd is closed once the loop has run the teardown, and the protocol
// hears nothing (no ConnectionMade, no ConnectionLost).
func TestH7AcceptedTLSTimeoutAndCancelCloseTheFD(t *testing.T) {
	clean(t)
	serverCfg, _ := testTLSConfigs(t)
	var log []string
	isOpen := func(fd int) bool { _, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); return err == nil }
	runVirtual(t, func(at *asyncio.T) error {
		proto := func() Protocol { return newStreamRecorder(at, "p", &log) }
		timedOut := socketpair(t, unix.SOCK_STREAM)
		defer unix.Close(timedOut[1])
		start := at.Loop().Time()
		_, _, err := ConnectAcceptedSocket(at, proto, timedOut[0], WithTLS(serverCfg), WithTLSHandshakeTimeout(5*time.Second))
		if !errors.Is(err, ErrTLSHandshakeTimeout) {
			t.Errorf("a silent peer: err = %v, want ErrTLSHandshakeTimeout", err)
		}
		if d := at.Loop().Time() - start; d != 5*time.Second {
			t.Errorf("the handshake gave up after %v, want 5s", d)
		}
		cancelled := socketpair(t, unix.SOCK_STREAM)
		defer unix.Close(cancelled[1])
		task := asyncio.CreateTask(at, func(t *asyncio.T) (struct{}, error) {
			_, _, err := ConnectAcceptedSocket(t, proto, cancelled[0], WithTLS(serverCfg))
			return struct{}{}, err
		})
		if err := asyncio.Sleep(at, time.Second); err != nil {
			return err
		}
		task.Cancel()
		if _, err := task.Await(at); !asyncio.IsCancelled(err) {
			t.Errorf("a cancelled handshake: err = %v, want the cancellation", err)
		}
		if err := settle(at); err != nil {
			return err
		}
		for _, fd := range []int{timedOut[0], cancelled[0]} {
			if isOpen(fd) {
				t.Errorf("fd %d is still open", fd)
			}
		}
		return nil
	})
	if len(log) != 0 {
		t.Errorf("the protocol heard %q", log)
	}
}
