//go:build unix

package aio

import (
	"crypto/tls"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/go-asyncio/asyncio"
	"golang.org/x/sys/unix"
)

// A client StartTLS with no server name to verify (serverHostname "",
// cfg.ServerName "", InsecureSkipVerify false) is a *ValueError before
// anything happens: the transport is still plain, open and reading, with
// its protocol, and the stream goes on. It was crypto/tls's "either
// ServerName or InsecureSkipVerify must be specified" from the handshake,
// after the transport was handed over and then aborted.
//
// CPython 3.13 (PYENV_VERSION=3.13.0) does not refuse here:
// loop.start_tls(tr, p, ctx, server_side=False) with ctx.check_hostname
// True and no server_hostname sends the ClientHello and verifies the
// chain without the host name (wrap_bio has no "check_hostname requires
// server_hostname" check, which is ssl.wrap_socket's); crypto/tls cannot
// verify without a name unless verification is off, so the mistake is
// named up front, as create_connection names it ("You must set
// server_hostname when using ssl without a host"). With a server name,
// or InsecureSkipVerify (check_hostname False and CERT_NONE), the
// upgrade goes on as before.
func TestH9StartTLSClientWithoutServerName(t *testing.T) {
	clean(t)
	serverCfg, clientCfg := testTLSConfigs(t)
	var log []string
	runVirtual(t, func(at *asyncio.T) error {
		srv, err := StartServer(at, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
			defer w.Close()
			for {
				line, err := r.ReadLine(t)
				if err != nil || len(line) == 0 {
					return err
				}
				w.Write(line)
				if string(line) == "tls\n" {
					if err := w.StartTLS(t, serverCfg, ""); err != nil {
						return err
					}
				}
			}
		}, "127.0.0.1", 0)
		if err != nil {
			return err
		}
		// No name: refused by both, before anything is done.
		r, w, err := OpenConnection(at, "127.0.0.1", serverPort(srv))
		if err != nil {
			return err
		}
		tr := w.Transport()
		proto := tr.Protocol()
		_, err1 := StartTLS(at, tr, proto, clientCfg, false, "")
		var ve *asyncio.ValueError
		log = append(log, fmt.Sprintf("StartTLS ValueError=%v %v; closing=%v reading=%v same protocol=%v",
			errors.As(err1, &ve), err1, tr.IsClosing(), tr.IsReading(), tr.Protocol() == proto))
		err2 := w.StartTLS(at, clientCfg, "")
		log = append(log, fmt.Sprintf("StreamWriter.StartTLS ValueError=%v", errors.As(err2, &ve)))
		w.Write([]byte("plain\n"))
		line, err := r.ReadLine(at)
		log = append(log, fmt.Sprintf("then %q %v", line, err))
		w.Close()
		if err := w.WaitClosed(at); err != nil {
			return err
		}
		// A name, or no verification: the upgrade is made.
		for _, c := range []struct {
			what string
			cfg  *tls.Config
			host string
		}{
			{"serverHostname", clientCfg, "localhost"},
			{"InsecureSkipVerify", &tls.Config{InsecureSkipVerify: true}, ""},
		} {
			r, w, err := OpenConnection(at, "127.0.0.1", serverPort(srv))
			if err != nil {
				return err
			}
			w.Write([]byte("tls\n"))
			if _, err := r.ReadLine(at); err != nil {
				return err
			}
			if err := w.StartTLS(at, c.cfg, c.host); err != nil {
				return fmt.Errorf("%s: StreamWriter.StartTLS: %w", c.what, err)
			}
			w.Write([]byte("secret\n"))
			line, err := r.ReadLine(at)
			_, isTLS := w.ExtraInfo("ssl_object").(*tls.Conn)
			log = append(log, fmt.Sprintf("%s: %q %v tls=%v", c.what, line, err, isTLS))
			w.Close()
			if err := w.WaitClosed(at); err != nil {
				return err
			}
		}
		srv.Close()
		return guard(at, func() error { return srv.WaitClosed(at) })
	})
	for i, l := range log {
		log[i] = strings.ReplaceAll(l, "asyncio: StartTLS: check_hostname requires server_hostname: give a server host name, or a tls.Config with ServerName (or InsecureSkipVerify)", "<msg>")
	}
	expectLog(t, []string{
		"StartTLS ValueError=true <msg>; closing=false reading=true same protocol=true",
		"StreamWriter.StartTLS ValueError=true",
		`then "plain\n" <nil>`,
		`serverHostname: "secret\n" <nil> tls=true`,
		`InsecureSkipVerify: "secret\n" <nil> tls=true`,
	}, log)
}

// CreateUnixConnection (and OpenUnixConnection) with WithTLS, and
// CreateConnection with WithSocket and WithTLS, have no host to take the
// server name from: a config without ServerName that verifies the server
// is a *ValueError before a socket is made or the given one touched (it
// was connected, or made non-blocking, and then failed in the handshake
// with crypto/tls's error). CPython 3.13 (PYENV_VERSION=3.13.0):
//
//	await loop.create_unix_connection(P, path, ssl=ctx)
//	await loop.create_unix_connection(P, sock=a, ssl=ctx)
//	# ValueError: you have to pass server_hostname when using ssl
//	await loop.create_connection(P, sock=a, ssl=ctx)
//	# ValueError: You must set server_hostname when using ssl without a host
//	# (a is still blocking: untouched)
//
// (CPython asks for server_hostname even with check_hostname False; here
// InsecureSkipVerify, like a ServerName, lets the call go on, as for
// CreateConnection with host "".)
func TestH9TLSConnectionWithoutHostNeedsServerName(t *testing.T) {
	clean(t)
	serverCfg, clientCfg := testTLSConfigs(t)
	var log []string
	runVirtual(t, func(at *asyncio.T) error {
		path := t.TempDir() + "/s"
		srv, err := StartUnixServer(at, closeAtOnce, path, WithTLS(serverCfg))
		if err != nil {
			return err
		}
		pair := socketpair(t, unix.SOCK_STREAM)
		defer unix.Close(pair[0])
		defer unix.Close(pair[1])
		if err := unix.SetNonblock(pair[0], false); err != nil { // as a fresh socket
			return err
		}
		before := openFDs(t)
		proto := func() Protocol { return newStreamRecorder(at, "p", &log) }
		_, _, err1 := CreateUnixConnection(at, proto, path, WithTLS(clientCfg))
		_, _, err2 := OpenUnixConnection(at, path, WithTLS(clientCfg))
		_, _, err3 := CreateUnixConnection(at, proto, "", WithSocket(pair[0]), WithTLS(clientCfg))
		_, _, err4 := CreateConnection(at, proto, "", 0, WithSocket(pair[0]), WithTLS(clientCfg))
		for i, err := range []error{err1, err2, err3, err4} {
			var ve *asyncio.ValueError
			log = append(log, fmt.Sprintf("call %d: ValueError=%v %v", i+1, errors.As(err, &ve), err))
		}
		checkNoNewFDs(t, before)
		fl, err := unix.FcntlInt(uintptr(pair[0]), unix.F_GETFL, 0)
		if err != nil {
			return err
		}
		log = append(log, fmt.Sprintf("given socket non-blocking=%v", fl&unix.O_NONBLOCK != 0))
		named := clientCfg.Clone()
		named.ServerName = "localhost"
		_, w, err := OpenUnixConnection(at, path, WithTLS(named))
		if err != nil {
			return err
		}
		_, isTLS := w.ExtraInfo("ssl_object").(*tls.Conn)
		log = append(log, fmt.Sprintf("with ServerName: tls=%v", isTLS))
		w.Close()
		if err := w.WaitClosed(at); err != nil {
			return err
		}
		srv.Close()
		return srv.WaitClosed(at)
	})
	unixMsg := "asyncio: you have to pass server_hostname when using ssl: the tls.Config has no ServerName"
	expectLog(t, []string{
		"call 1: ValueError=true " + unixMsg,
		"call 2: ValueError=true " + unixMsg,
		"call 3: ValueError=true " + unixMsg,
		"call 4: ValueError=true asyncio: You must set server_hostname when using ssl without a host",
		"given socket non-blocking=false",
		"with ServerName: tls=true",
	}, log)
}
