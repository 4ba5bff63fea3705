//go:build linux

package aio

import (
	"bytes"
	"crypto/tls"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/go-asyncio/asyncio"
)

// Pipe transports closed at every moment: 256 KiB (four times what the
// pipe holds) written through ConnectWritePipe, with the rest buffered in
// the transport, and read through ConnectReadPipe until EOF. Close closes
// both files the transports took over, whatever was buffered; the test's
// own Close of them afterwards is a no-op (os.ErrClosed), never a close of
// a descriptor reused meanwhile.
func TestH44_PipeTransportsClosedAtEveryMoment(t *testing.T) {
	data := bytes.Repeat([]byte("0123456789abcdef"), 16<<10)
	closeAtEachIteration(t, 400, []asyncio.LoopOption{asyncio.WithVirtualTime()}, func(at *asyncio.T, s *h44State) error {
		pr, pw, err := os.Pipe()
		if err != nil {
			return err
		}
		var taken [2]bool // a transport took the file over
		s.after(func(t *testing.T, completed bool) {
			for i, f := range []*os.File{pr, pw} {
				if err := f.Close(); taken[i] && !errors.Is(err, os.ErrClosed) {
					t.Errorf("the loop's Close left %s open: Close says %v", f.Name(), err)
				}
			}
		})
		var log []string
		var got bytes.Buffer
		rp := newStreamRecorder(at, "r", &log)
		rp.onData = func(p *streamRecorder, d []byte) { got.Write(d) }
		if _, _, err := ConnectReadPipe(at, func() Protocol { return rp }, pr); err != nil {
			return err
		}
		taken[0] = true
		wtr, _, err := ConnectWritePipe(at, func() Protocol { return newStreamRecorder(at, "w", &log) }, pw)
		if err != nil {
			return err
		}
		taken[1] = true
		wtr.Write(data)
		wtr.Close()
		if _, err := rp.lost.Await(at); err != nil {
			return err
		}
		if !bytes.Equal(got.Bytes(), data) {
			return errors.New("the read end got other bytes")
		}
		return nil
	})
}

// TLS over the simulated network, closed at every moment: a 10 ms link
// makes the handshake take several round trips, so Close comes in the
// middle of it (client and server side) at many moments.
func TestH44_SimTLSHandshakeClosedAtEveryMoment(t *testing.T) {
	srvCfg, cliCfg := testTLSConfigs(t)
	cliCfg = cliCfg.Clone()
	cliCfg.ServerName = "localhost"
	closeAtEachIteration(t, 400, []asyncio.LoopOption{asyncio.WithVirtualTime()}, func(at *asyncio.T, s *h44State) error {
		n := NewSimNetwork(at, 7)
		n.SetDefaultLink(LinkConfig{Latency: 10 * time.Millisecond})
		srv, err := StartServer(at, echoLines("tls "), "", 443, WithNetwork(n.Host("srv")), WithTLS(srvCfg))
		if err != nil {
			return err
		}
		r, w, err := OpenConnection(at, "srv", 443, WithNetwork(n.Host("cli")), WithTLS(cliCfg))
		if err != nil {
			return err
		}
		w.Write([]byte("hi\n"))
		line, err := r.ReadLine(at)
		if err != nil {
			return err
		}
		if string(line) != "tls hi\n" {
			return errors.New("read " + string(line))
		}
		if st, ok := w.ExtraInfo("ssl_object").(*tls.Conn); ok && !st.ConnectionState().HandshakeComplete {
			return errors.New("handshake not complete")
		}
		w.Close()
		if err := w.WaitClosed(at); err != nil {
			return err
		}
		srv.Close()
		if err := srv.WaitClosed(at); err != nil {
			return err
		}
		n.Close()
		return nil
	})
}
