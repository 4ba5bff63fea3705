//go:build unix

package aio

import (
	"errors"
	"iter"
	"net"

	"github.com/go-asyncio/asyncio"
)

// `async for` and `async with` over streams, datagrams and servers (see
// the root package's iter.go for the shapes).

// Lines returns the lines of r, each with its "\n" (the last one without,
// if the stream does not end with one), until EOF: `async for line in
// reader` (StreamReader.__anext__, which stops at an empty readline).
// An error of ReadLine (a *CancelledError when t is cancelled while
// waiting, a line over the limit, the connection's error) is yielded
// once, with a nil line, and ends the range. The sequence must be ranged
// over from task t.
func (r *StreamReader) Lines(t *asyncio.T) iter.Seq2[[]byte, error] {
	r.checkMade("StreamReader.Lines")
	return func(yield func([]byte, error) bool) {
		for {
			line, err := r.ReadLine(t)
			if err == nil && len(line) == 0 {
				return // EOF
			}
			if !yield(line, err) || err != nil {
				return
			}
		}
	}
}

// Chunks returns what r receives in chunks of at most n bytes (Read(t,
// n)) until EOF: `while chunk := await reader.read(n)`. Errors end the
// range as for Lines. An n <= 0 panics with a *ValueError.
func (r *StreamReader) Chunks(t *asyncio.T, n int) iter.Seq2[[]byte, error] {
	r.checkMade("StreamReader.Chunks")
	if n <= 0 {
		panic(&asyncio.ValueError{Msg: "Chunks: the chunk size must be > 0"})
	}
	return func(yield func([]byte, error) bool) {
		for {
			b, err := r.Read(t, n)
			if err == nil && len(b) == 0 {
				return // EOF
			}
			if !yield(b, err) || err != nil {
				return
			}
		}
	}
}

// Datagram is one datagram a DatagramQueue received, with its sender.
type Datagram struct {
	Data []byte
	Addr net.Addr
}

// DatagramQueue is a DatagramProtocol that queues what its endpoint
// receives, for a task to range over with Datagrams (what a port writes
// as a DatagramProtocol feeding an asyncio.Queue):
//
//	dq := aio.NewDatagramQueue()
//	tr, _, err := aio.CreateDatagramEndpoint(t, dq.Factory, local, nil)
//	for d, err := range dq.Datagrams(t) { ... }
//
// The queue is unbounded. Its methods must be called on the loop. The zero
// DatagramQueue is ready to use, as NewDatagramQueue's.
type DatagramQueue struct {
	BaseDatagramProtocol
	q *asyncio.Queue[datagramItem]
}

type datagramItem struct {
	d   Datagram
	err error
}

// NewDatagramQueue returns an empty DatagramQueue.
func NewDatagramQueue() *DatagramQueue {
	return &DatagramQueue{q: asyncio.NewQueue[datagramItem](0)}
}

// queue is dq's queue; the zero DatagramQueue makes it on first use, as
// NewDatagramQueue does.
func (dq *DatagramQueue) queue() *asyncio.Queue[datagramItem] {
	if dq.q == nil {
		dq.q = asyncio.NewQueue[datagramItem](0)
	}
	return dq.q
}

// Factory returns dq, for CreateDatagramEndpoint: a DatagramQueue serves
// one endpoint.
func (dq *DatagramQueue) Factory() DatagramProtocol { return dq }

// DatagramReceived queues the datagram.
func (dq *DatagramQueue) DatagramReceived(data []byte, addr net.Addr) {
	dq.queue().PutNowait(datagramItem{d: Datagram{Data: data, Addr: addr}})
}

// ErrorReceived queues err: Datagrams yields it and goes on.
func (dq *DatagramQueue) ErrorReceived(err error) {
	dq.queue().PutNowait(datagramItem{err: err})
}

// ConnectionLost ends Datagrams once what was queued has been yielded;
// a non-nil err is yielded last.
func (dq *DatagramQueue) ConnectionLost(err error) {
	if err != nil {
		dq.queue().PutNowait(datagramItem{err: err})
	}
	dq.queue().Shutdown(false)
}

// Datagrams returns the datagrams dq receives, in order, until its
// endpoint is closed. An error the endpoint receives (asyncio's
// error_received: an ICMP port unreachable, say) is yielded with an empty
// Datagram and the range goes on; the connection's error, if it was lost
// with one, is yielded last; a cancellation of t while waiting is
// yielded and ends the range. The sequence must be ranged over from task
// t.
func (dq *DatagramQueue) Datagrams(t *asyncio.T) iter.Seq2[Datagram, error] {
	return func(yield func(Datagram, error) bool) {
		for {
			it, err := dq.queue().Get(t)
			if errors.Is(err, asyncio.ErrQueueShutDown) {
				return
			}
			if err != nil {
				yield(Datagram{}, err)
				return
			}
			if !yield(it.d, it.err) {
				return
			}
		}
	}
}

// WithServer is `async with server: body`: it runs fn and then, however
// fn ends, closes srv and waits until its connections are gone
// (Server.__aexit__: close, then wait_closed). It returns fn's error, or
// else WaitClosed's.
func WithServer(t *asyncio.T, srv *Server, fn func() error) (err error) {
	if srv == nil || fn == nil {
		panic(&asyncio.ValueError{Msg: "WithServer: nil server or function"})
	}
	defer func() {
		srv.Close()
		if werr := srv.WaitClosed(t); err == nil {
			err = werr
		}
	}()
	return fn()
}
