//go:build unix

package aio

import (
	"strings"
	"testing"
	"time"

	"github.com/go-asyncio/asyncio"
	"golang.org/x/sys/unix"
)

// h7TLSPair connects a TLS client (protocol c) and a TLS server
// (protocol s) over a socketpair, both on at's loop.
func h7TLSPair(t *testing.T, at *asyncio.T, c, s Protocol) (ctr, str Transport, err error) {
	serverCfg, clientCfg := testTLSConfigs(t)
	clientCfg = clientCfg.Clone()
	clientCfg.ServerName = "localhost"
	fds := socketpair(t, unix.SOCK_STREAM) // both adopted by the transports below
	srvDone := asyncio.CreateTask(at, func(t *asyncio.T) (Transport, error) {
		tr, _, err := ConnectAcceptedSocket(t, func() Protocol { return s }, fds[1], WithTLS(serverCfg))
		return tr, err
	})
	ctr, _, err = CreateConnection(at, func() Protocol { return c }, "", 0, WithSocket(fds[0]), WithTLS(clientCfg))
	if err != nil {
		return nil, nil, err
	}
	str, err = srvDone.Await(at)
	return ctr, str, err
}

// A TLS transport asks its BufferedProtocol for a buffer only once there
// is plaintext to put in it, as asyncio's SSL protocol does: the buffer
// taken before a wait for the peer went to the protocol of that time, so
// data that came after SetProtocol reached the old protocol's
// BufferUpdated and never the new one's DataReceived.
func TestH7TLSSetProtocolWhileWaitingForData(t *testing.T) {
	clean(t)
	var log []string
	runVirtual(t, func(at *asyncio.T) error {
		old := newBufferedRecorder(at, "old", &log, 64)
		plain := newStreamRecorder(at, "new", &log)
		srv := newStreamRecorder(at, "srv", &log)
		ctr, str, err := h7TLSPair(t, at, old, srv)
		if err != nil {
			return err
		}
		for range 5 { // the reader task waits for the peer
			if err := asyncio.Sleep(at, 0); err != nil {
				return err
			}
		}
		ctr.SetProtocol(plain)
		if err := str.Write([]byte("hello")); err != nil {
			return err
		}
		str.Close()
		if _, err := plain.lost.Await(at); err != nil {
			return err
		}
		_, err = srv.lost.Await(at)
		return err
	})
	got := strings.Join(log, "|")
	if !strings.Contains(got, "new:data hello") || strings.Contains(got, "old:updated") {
		t.Errorf("log %q: want the data after SetProtocol in new's DataReceived, none in old's BufferUpdated", got)
	}
}

// After Abort from a protocol callback a TLS transport delivers nothing
// more, as asyncio's SSL protocol (its _abort leaves the WRAPPED state,
// and _do_read then returns), though plaintext is still buffered: a
// BufferedProtocol with small buffers got the rest of the record, a plain
// protocol the records that came in the same read.
func TestH7TLSNothingAfterAbortInCallback(t *testing.T) {
	clean(t)
	for _, buffered := range []bool{true, false} {
		var log []string
		runVirtual(t, func(at *asyncio.T) error {
			srv := newStreamRecorder(at, "srv", &log)
			var cli Protocol
			var lost *asyncio.Future[error]
			if buffered {
				p := newBufferedRecorder(at, "cli", &log, 1)
				p.onUpdated = func(int) { p.tr.Abort() }
				cli, lost = p, p.lost
			} else {
				p := newStreamRecorder(at, "cli", &log)
				p.onData = func(p *streamRecorder, d []byte) { p.add("data " + string(d)); p.tr.Abort() }
				cli, lost = p, p.lost
			}
			_, str, err := h7TLSPair(t, at, cli, srv)
			if err != nil {
				return err
			}
			// Two records in one flight: the client reads both at once.
			if err := str.WriteLines([]byte("ab"), []byte("cd")); err != nil {
				return err
			}
			if _, err := lost.Await(at); err != nil {
				return err
			}
			str.Abort()
			_, err = srv.lost.Await(at)
			return err
		})
		var cli []string
		for _, e := range log {
			if strings.HasPrefix(e, "cli:") && !strings.HasPrefix(e, "cli:get") {
				cli = append(cli, e)
			}
		}
		want := []string{"cli:made", `cli:updated "a"`, "cli:lost <nil>"}
		if !buffered {
			want = []string{"cli:made", "cli:data ab", "cli:lost <nil>"}
		}
		if strings.Join(cli, "|") != strings.Join(want, "|") {
			t.Errorf("buffered=%v: the client got %q, want %q", buffered, cli, want)
		}
	}
}

// A BufferedProtocol with 1-byte buffers that pauses reading in each
// BufferUpdated over TLS gets no BufferUpdated while paused, and every
// byte, in order, as it resumes (the rest of a record waits, asyncio's
// _do_read returns while the application is paused).
func TestH7TLSPauseInBufferUpdated(t *testing.T) {
	clean(t)
	var log []string
	var got []byte
	runVirtual(t, func(at *asyncio.T) error {
		srv := newStreamRecorder(at, "srv", &log)
		p := newBufferedRecorder(at, "cli", &log, 1)
		paused := false
		p.onUpdated = func(n int) {
			if paused {
				t.Errorf("BufferUpdated(%d) while paused", n)
			}
			got = append(got, p.buf[:n]...)
			p.tr.PauseReading()
			paused = true
			if p.tr.IsReading() {
				t.Error("IsReading after PauseReading")
			}
			at.Loop().CallLater(time.Second, func() { paused = false; p.tr.ResumeReading() })
		}
		_, str, err := h7TLSPair(t, at, p, srv)
		if err != nil {
			return err
		}
		if err := str.WriteLines([]byte("hello "), []byte("world")); err != nil {
			return err
		}
		str.Close()
		if _, err := p.lost.Await(at); err != nil {
			return err
		}
		_, err = srv.lost.Await(at)
		return err
	})
	if string(got) != "hello world" {
		t.Errorf("received %q, want %q", got, "hello world")
	}
}
