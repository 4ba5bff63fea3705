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
