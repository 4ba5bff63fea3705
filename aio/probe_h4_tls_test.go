//go:build unix

package aio

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/go-asyncio/asyncio"
)

// The TLS transport offers asyncio's "cipher" and "compression" keys
// (sslproto.py _on_handshake_complete: cipher=sslobj.cipher(),
// compression=sslobj.compression()). CPython 3.13.0 with the default
// contexts: cipher ('TLS_AES_256_GCM_SHA384', 'TLSv1.3', 256),
// compression None; limited to TLS 1.2 the version is 'TLSv1.2'. A plain
// connection has no cipher.
func TestH4TLSExtraInfoCipher(t *testing.T) {
	clean(t)
	serverCfg, clientCfg := testTLSConfigs(t)
	var log []string
	runNet(t, func(at *asyncio.T) error {
		srv, err := StartServer(at, echoLines(""), "127.0.0.1", 0, WithTLS(serverCfg))
		if err != nil {
			return err
		}
		plain, err := StartServer(at, echoLines(""), "127.0.0.1", 0)
		if err != nil {
			return err
		}
		tls12 := clientCfg.Clone()
		tls12.MaxVersion = tls.VersionTLS12
		tls12.CipherSuites = []uint16{tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256}
		for _, cfg := range []*tls.Config{clientCfg, tls12} {
			_, w, err := OpenConnection(at, "127.0.0.1", serverPort(srv), WithTLS(cfg))
			if err != nil {
				return err
			}
			c, ok := Cipher(w)
			raw := w.ExtraInfo("cipher")
			if cfg == clientCfg {
				// Go picks AES-128-GCM or ChaCha20 for TLS 1.3 by the
				// machine's AES support: check the bits for the suite.
				bits := map[string]int{"TLS_AES_128_GCM_SHA256": 128, "TLS_AES_256_GCM_SHA384": 256, "TLS_CHACHA20_POLY1305_SHA256": 256}
				negotiated := tls.CipherSuiteName(TLSConn(w).ConnectionState().CipherSuite)
				fd, _ := Socket(w)
				log = append(log, fmt.Sprint(fmt.Sprint(w.Transport()) == fmt.Sprintf("<tlsTransport <socketTransport fd=%d open>>", fd)))
				log = append(log, fmt.Sprintf("tls13 name=%v version=%s bits=%v", c.Name == negotiated, c.Version, c.SecretBits == bits[negotiated] && c.SecretBits > 0))
			}
			log = append(log, fmt.Sprintf("ok=%v same=%v compression=%v", ok, raw == any(c), w.ExtraInfo("compression")))
			if cfg == tls12 {
				log = append(log, fmt.Sprintf("cipher=%+v", c))
			}
			w.Close()
			if err := w.WaitClosed(at); err != nil {
				return err
			}
		}
		_, w, err := OpenConnection(at, "127.0.0.1", serverPort(plain))
		if err != nil {
			return err
		}
		c, ok := Cipher(w)
		log = append(log, fmt.Sprintf("plain cipher=%+v ok=%v", c, ok))
		w.Close()
		if err := w.WaitClosed(at); err != nil {
			return err
		}
		for _, s := range []*Server{srv, plain} {
			s.Close()
			if err := s.WaitClosed(at); err != nil {
				return err
			}
		}
		return nil
	})
	expectLog(t, []string{
		"true",
		"tls13 name=true version=TLSv1.3 bits=true",
		"ok=true same=true compression=<nil>",
		"ok=true same=true compression=<nil>",
		"cipher={Name:TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256 Version:TLSv1.2 SecretBits:256}",
		"plain cipher={Name: Version: SecretBits:0} ok=false",
	}, log)
}

// StartTLS with a nil protocol is a *ValueError before the transport is
// touched: the plain connection goes on, and a StartTLS with the protocol
// then works. (It upgraded the connection, and the first data then
// failed inside the reader task with a nil dereference.)
func TestH4StartTLSNilProtocol(t *testing.T) {
	clean(t)
	serverCfg, clientCfg := testTLSConfigs(t)
	clientCfg.ServerName = "localhost"
	var log []string
	runVirtual(t, func(at *asyncio.T) error {
		at.Loop().SetExceptionHandler(func(_ *asyncio.Loop, ctx asyncio.ExceptionContext) {
			log = append(log, "handler: "+ctx.Message)
		})
		srv, err := StartServer(at, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
			defer w.Close()
			line, err := r.ReadLine(t) // "plain\n"
			if err != nil {
				return err
			}
			w.Write(line)
			if err := w.StartTLS(t, serverCfg, ""); err != nil {
				return err
			}
			w.Write([]byte("secret\n"))
			_, err = r.Read(t, -1)
			return err
		}, "127.0.0.1", 0)
		if err != nil {
			return err
		}
		var clog []string
		p := newStreamRecorder(at, "client", &clog)
		tr, _, err := CreateConnection(at, func() Protocol { return p }, "127.0.0.1", serverPort(srv))
		if err != nil {
			return err
		}
		_, err = asyncio.WaitForFunc(at, time.Minute, func(t *asyncio.T) (Transport, error) {
			return StartTLS(t, tr, nil, clientCfg, false, "")
		})
		var ve *asyncio.ValueError
		log = append(log, fmt.Sprintf("nil protocol: ValueError=%v %v; closing %v", errors.As(err, &ve), err, tr.IsClosing()))
		tr.Write([]byte("plain\n"))
		if err := h4Until(at, func() bool { return len(clog) >= 2 }); err != nil { // made, then the echo
			return err
		}
		ttr, err := StartTLS(at, tr, p, clientCfg, false, "")
		if err != nil {
			return err
		}
		if err := h4Until(at, func() bool { return len(clog) >= 3 }); err != nil {
			return err
		}
		ttr.Close()
		if _, err := p.lost.Await(at); err != nil {
			return err
		}
		srv.Close()
		if err := srv.WaitClosed(at); err != nil {
			return err
		}
		log = append(log, clog...)
		return nil
	})
	expectLog(t, []string{
		"nil protocol: ValueError=true asyncio: StartTLS: nil protocol; closing false",
		"client:made", "client:data plain\n", "client:data secret\n", "client:lost <nil>",
	}, log)
}

// h4Until lets the loop run until cond holds, for at most a minute of
// the virtual clock.
func h4Until(t *asyncio.T, cond func() bool) error {
	for start := t.Loop().Time(); !cond(); {
		if t.Loop().Time()-start > time.Minute {
			return fmt.Errorf("still waiting after a minute")
		}
		if err := asyncio.Sleep(t, time.Millisecond); err != nil {
			return err
		}
	}
	return nil
}

// h4Warnings records the messages logged through log/slog.
type h4Warnings struct {
	mu   sync.Mutex
	msgs []string
}

func (h *h4Warnings) Enabled(context.Context, slog.Level) bool { return true }
func (h *h4Warnings) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	h.msgs = append(h.msgs, r.Level.String()+" "+r.Message)
	h.mu.Unlock()
	return nil
}
func (h *h4Warnings) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *h4Warnings) WithGroup(string) slog.Handler      { return h }

// Writes to a closed TLS transport are dropped, and from the sixth on
// each logs "SSL connection is closed", as CPython 3.13's
// SSLProtocol._write_appdata (sslproto.py: "if self._conn_lost >=
// LOG_THRESHOLD_FOR_CONNLOST_WRITES: logger.warning('SSL connection is
// closed')"); a plain socket transport logs "socket.send() raised
// exception." the same way. They were dropped silently. CPython 3.13.0,
// seven writes after close(): two "WARNING SSL connection is closed".
func TestH4TLSWriteAfterCloseWarns(t *testing.T) {
	clean(t)
	serverCfg, clientCfg := testTLSConfigs(t)
	h := &h4Warnings{}
	old := slog.Default()
	slog.SetDefault(slog.New(h))
	defer slog.SetDefault(old)
	runNet(t, func(at *asyncio.T) error {
		srv, err := StartServer(at, echoLines(""), "127.0.0.1", 0, WithTLS(serverCfg))
		if err != nil {
			return err
		}
		_, w, err := OpenConnection(at, "127.0.0.1", serverPort(srv), WithTLS(clientCfg))
		if err != nil {
			return err
		}
		w.Close()
		for i := range 7 {
			if err := w.Write([]byte(fmt.Sprintf("late %d\n", i))); err != nil {
				return err
			}
		}
		if err := w.WaitClosed(at); err != nil {
			return err
		}
		srv.Close()
		return srv.WaitClosed(at)
	})
	h.mu.Lock()
	defer h.mu.Unlock()
	expectLog(t, []string{"WARN SSL connection is closed", "WARN SSL connection is closed"}, h.msgs)
}
