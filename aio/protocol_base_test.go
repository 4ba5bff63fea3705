//go:build unix

package aio

import (
	"errors"
	"fmt"
	"net"
	"syscall"
	"testing"

	"github.com/go-asyncio/asyncio"
)

// A stream protocol that defines only DataReceived and ConnectionLost.
type countingProtocol struct {
	BaseProtocol
	n    int
	lost *asyncio.Future[struct{}]
}

func (p *countingProtocol) DataReceived(b []byte) { p.n += len(b) }
func (p *countingProtocol) ConnectionLost(error)  { p.lost.SetResult(struct{}{}) }

// A datagram protocol that defines only DatagramReceived.
type onlyDatagrams struct {
	BaseDatagramProtocol
	got *asyncio.Future[string]
}

func (p *onlyDatagrams) DatagramReceived(b []byte, _ net.Addr) {
	if !p.got.Done() {
		p.got.SetResult(string(b))
	}
}

// A subprocess protocol that defines only PipeDataReceived and
// ConnectionLost.
type onlyPipeData struct {
	BaseSubprocessProtocol
	out  []byte
	done *asyncio.Future[struct{}]
}

func (p *onlyPipeData) PipeDataReceived(_ int, b []byte) { p.out = append(p.out, b...) }
func (p *onlyPipeData) ConnectionLost(error)             { p.done.SetResult(struct{}{}) }

// Protocols that embed a base write only the callbacks they need, and
// the transports call the base's defaults for the rest (a stream's
// EOFReceived closes the transport).
func TestProtocolBases_WriteOnlyWhatYouNeed(t *testing.T) {
	clean(t)
	var log []string
	runNet(t, func(at *asyncio.T) error {
		srv, err := StartServer(at, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
			defer w.Close()
			return w.Write([]byte("twelve bytes"))
		}, "127.0.0.1", 0)
		if err != nil {
			return err
		}
		cp := &countingProtocol{lost: asyncio.NewFuture[struct{}](at)}
		if _, _, err := CreateConnection(at, func() Protocol { return cp }, "127.0.0.1", serverPort(srv)); err != nil {
			return err
		}
		if _, err := cp.lost.Await(at); err != nil {
			return err
		}
		log = append(log, fmt.Sprintf("stream: %d bytes, then lost", cp.n))
		srv.Close()
		if err := srv.WaitClosed(at); err != nil {
			return err
		}

		dp := &onlyDatagrams{got: asyncio.NewFuture[string](at)}
		dtr, _, err := CreateDatagramEndpoint(at, func() DatagramProtocol { return dp }, &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)}, nil)
		if err != nil {
			return err
		}
		ctr, _, err := CreateDatagramEndpoint(at, func() DatagramProtocol { return BaseDatagramProtocol{} }, nil, dtr.ExtraInfo("sockname").(*net.UDPAddr))
		if err != nil {
			return err
		}
		ctr.SendTo([]byte("ping"), nil)
		got, err := dp.got.Await(at)
		if err != nil {
			return err
		}
		log = append(log, "datagram: "+got)
		ctr.Close()
		dtr.Close()

		sp := &onlyPipeData{done: asyncio.NewFuture[struct{}](at)}
		if _, _, err := SubprocessExec(at, func() SubprocessProtocol { return sp }, "sh", []string{"-c", "echo out"}); err != nil {
			return err
		}
		if _, err := sp.done.Await(at); err != nil {
			return err
		}
		log = append(log, fmt.Sprintf("subprocess: %q", sp.out))
		return nil
	})
	expectLog(t, []string{"stream: 12 bytes, then lost", "datagram: ping", `subprocess: "out\n"`}, log)
}

// pipeOut is a connect_write_pipe protocol as a port writes it.
type pipeOut struct{ FlowControl }

// FlowControl tracks the write pause state of a pipe: Drain waits while
// the pipe's buffer is above the high water mark and returns once the
// reader has taken it down to the low water mark.
func TestFlowControl_DrainWaitsForTheReader(t *testing.T) {
	clean(t)
	r, w := osPipe(t)
	var log []string
	data := make([]byte, 1<<20)
	runNet(t, func(at *asyncio.T) error {
		reader := NewStreamReader(at, DefaultStreamLimit)
		if _, _, err := ConnectReadPipe(at, func() Protocol { return NewStreamReaderProtocol(reader) }, r); err != nil {
			return err
		}
		p := &pipeOut{}
		tr, _, err := ConnectWritePipe(at, func() Protocol { return p }, w)
		if err != nil {
			return err
		}
		tr.Write(data)
		log = append(log, fmt.Sprintf("paused: %v", p.Paused()))
		drained := asyncio.CreateTaskErr(at, p.Drain)
		if err := asyncio.Sleep(at, 0); err != nil {
			return err
		}
		log = append(log, fmt.Sprintf("drain waits: %v", !drained.Done()))
		if _, err := reader.ReadExactly(at, len(data)); err != nil {
			return err
		}
		if _, err := drained.Await(at); err != nil {
			return err
		}
		log = append(log, fmt.Sprintf("drained, paused: %v, buffer %d", p.Paused(), tr.WriteBufferSize()))
		tr.Close()
		return settle(at)
	})
	expectLog(t, []string{"paused: true", "drain waits: true", "drained, paused: false, buffer 0"}, log)
}

// A Drain waiting when the connection is lost returns the loss; a Drain
// after it returns "Connection lost" (ECONNRESET), as FlowControlMixin's.
func TestFlowControl_DrainAfterLoss(t *testing.T) {
	clean(t)
	r, w := osPipe(t)
	var log []string
	runNet(t, func(at *asyncio.T) error {
		p := &pipeOut{}
		tr, _, err := ConnectWritePipe(at, func() Protocol { return p }, w)
		if err != nil {
			return err
		}
		tr.Write(make([]byte, 1<<20))
		drained := asyncio.CreateTaskErr(at, p.Drain)
		if err := asyncio.Sleep(at, 0); err != nil {
			return err
		}
		r.Close()
		_, err = drained.Await(at)
		log = append(log, fmt.Sprintf("waiting drain: EPIPE=%v", errors.Is(err, syscall.EPIPE)))
		err = p.Drain(at)
		log = append(log, fmt.Sprintf("later drain: ECONNRESET=%v (%v)", errors.Is(err, syscall.ECONNRESET), err))
		return nil
	})
	expectLog(t, []string{"waiting drain: EPIPE=true", "later drain: ECONNRESET=true (Connection lost: connection reset by peer)"}, log)
}
