//go:build unix

package cpython

import (
	"bytes"
	"net"
	"testing"
	"time"

	"github.com/go-asyncio/asyncio"
	"github.com/go-asyncio/asyncio/aio"
)

// receiveStuffProto is test_buffered_proto.py's ReceiveStuffProto: a
// BufferedProtocol that hands out a fresh 100-byte buffer for every read
// and passes what was written into it to cb.
type receiveStuffProto struct {
	aio.BaseProtocol
	cb          func([]byte)
	conLostFut  *asyncio.Future[struct{}]
	buffer      []byte
	dataCalls   int
	sizeHints   []int
	getBuffers  int
	bufferCalls int
}

func (p *receiveStuffProto) GetBuffer(sizeHint int) []byte {
	p.getBuffers++
	p.sizeHints = append(p.sizeHints, sizeHint)
	p.buffer = make([]byte, 100)
	return p.buffer
}

func (p *receiveStuffProto) BufferUpdated(nbytes int) {
	p.bufferCalls++
	p.cb(p.buffer[:nbytes])
}

func (p *receiveStuffProto) DataReceived([]byte) { p.dataCalls++ }

func (p *receiveStuffProto) ConnectionLost(err error) {
	if err == nil {
		p.conLostFut.SetResult(struct{}{})
	} else {
		p.conLostFut.SetException(err)
	}
}

func TestBufferedProto_test_buffered_proto_create_connection(t *testing.T) {
	noise := bytes.Repeat([]byte("12345678+"), 1024)
	run(t, func(tk *asyncio.T) error {
		onServerClient := func(tk *asyncio.T, r *aio.StreamReader, w *aio.StreamWriter) error {
			w.Write(noise)
			if _, err := r.ReadExactly(tk, 1); err != nil {
				return err
			}
			w.Close()
			return w.WaitClosed(tk)
		}
		srv, err := aio.StartServer(tk, onServerClient, "127.0.0.1", 0)
		if err != nil {
			return err
		}
		addr := srv.Addr().(*net.TCPAddr)
		var proto *receiveStuffProto
		client := func(tk *asyncio.T) (struct{}, error) {
			var data []byte
			var tr aio.Transport
			onBuf := func(buf []byte) {
				data = append(data, buf...)
				if bytes.Equal(data, noise) {
					tr.Write([]byte("1"))
				}
			}
			conLostFut := asyncio.NewFuture[struct{}](tk)
			tr, _, err := aio.CreateConnection(tk, func() aio.Protocol {
				proto = &receiveStuffProto{cb: onBuf, conLostFut: conLostFut}
				return proto
			}, addr.IP.String(), addr.Port)
			if err != nil {
				return struct{}{}, err
			}
			_, err = conLostFut.Await(tk)
			eq(t, len(data), len(noise), "bytes received")
			return struct{}{}, err
		}
		if _, err := asyncio.WaitForFunc(tk, 5*time.Second, client); err != nil {
			return err
		}
		// The protocol got the data through its own buffers only, 100
		// bytes at most at a time, with the socket transport's hint -1.
		eq(t, proto.dataCalls, 0, "DataReceived calls")
		check(t, proto.bufferCalls >= len(noise)/100, "BufferUpdated calls", proto.bufferCalls)
		for _, h := range proto.sizeHints {
			if h != -1 {
				t.Errorf("GetBuffer size hint %d, want -1", h)
				break
			}
		}
		srv.Close()
		return srv.WaitClosed(tk)
	})
}
