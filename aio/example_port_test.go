//go:build unix

package aio_test

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"

	"github.com/go-asyncio/asyncio"
	"github.com/go-asyncio/asyncio/aio"
)

// A port of a small asyncio program written with the pieces a port
// needs: a line server whose handler feeds a queue (`async for line in
// reader`), a worker draining the queue until shutdown, writing to a pipe
// through a FlowControlMixin protocol, and `except* ValueError` around the
// TaskGroup. portBefore is the same program without them, for the line
// count in the issue note; both print the same.
//
//	class PipeOut(asyncio.streams.FlowControlMixin, asyncio.Protocol): pass
//
//	async def main(pipe):
//	    q = asyncio.Queue()
//	    async def handle(r, w):
//	        async for line in r:
//	            await q.put(line)
//	        q.shutdown()
//	    async def worker(tr, p):
//	        while True:
//	            try:
//	                line = await q.get()
//	            except asyncio.QueueShutDown:
//	                return
//	            if line == b"boom\n":
//	                raise ValueError("boom")
//	            tr.write(line.upper())
//	            await p._drain_helper()
//	    tr, p = await loop.connect_write_pipe(PipeOut, pipe)
//	    srv = await asyncio.start_server(handle, "127.0.0.1", 0)
//	    try:
//	        async with srv, asyncio.TaskGroup() as tg:
//	            tg.create_task(worker(tr, p))
//	            r, w = await asyncio.open_connection(*srv.sockets[0].getsockname())
//	            w.write(b"a\nb\nboom\n"); w.write_eof()
//	    except* ValueError as eg:
//	        print("worker failed:", eg.exceptions[0])
//	    tr.close()
func Example_port() {
	portRun(portAfter)
	portRun(portBefore)
	// Output:
	// worker failed: boom
	// pipe got "A\nB\n"
	// worker failed: boom
	// pipe got "A\nB\n"
}

// portRun runs a port's main with a pipe and prints what it received.
func portRun(main func(t *asyncio.T, pipe *os.File) error) {
	r, w, _ := os.Pipe()
	defer r.Close()
	if _, err := asyncio.Run(func(t *asyncio.T) (struct{}, error) { return struct{}{}, main(t, w) }); err != nil {
		fmt.Println("run:", err)
	}
	var got bytes.Buffer
	got.ReadFrom(r)
	fmt.Printf("pipe got %q\n", got.String())
}

// ---- after: the port with protocol bases, iterators and ExceptStar

type pipeOut struct{ aio.FlowControl }

func portAfter(t *asyncio.T, pipe *os.File) error {
	q := asyncio.NewQueue[[]byte](0)
	handle := func(t *asyncio.T, r *aio.StreamReader, w *aio.StreamWriter) error {
		for line, err := range r.Lines(t) {
			if err != nil {
				return err
			}
			q.PutNowait(line)
		}
		q.Shutdown(false)
		return nil
	}
	p := &pipeOut{}
	tr, _, err := aio.ConnectWritePipe(t, func() aio.Protocol { return p }, pipe)
	if err != nil {
		return err
	}
	defer tr.Close()
	worker := func(t *asyncio.T) error {
		for line, err := range q.Items(t) {
			if err != nil {
				return err
			}
			if string(line) == "boom\n" {
				return &asyncio.ValueError{Msg: "boom"}
			}
			tr.Write(bytes.ToUpper(line))
			if err := p.Drain(t); err != nil {
				return err
			}
		}
		return nil
	}
	srv, err := aio.StartServer(t, handle, "127.0.0.1", 0)
	if err != nil {
		return err
	}
	err = aio.WithServer(t, srv, func() error {
		return asyncio.TaskGroup(t, func(g *asyncio.Group) error {
			asyncio.SpawnErr(g, worker)
			_, w, err := aio.OpenConnection(t, "127.0.0.1", srv.Addr().(*net.TCPAddr).Port)
			if err != nil {
				return err
			}
			defer w.Close()
			w.Write([]byte("a\nb\nboom\n"))
			return w.WriteEOF()
		})
	})
	return asyncio.ExceptStar(err, asyncio.Except[*asyncio.ValueError](func(eg *asyncio.ExceptionGroup) error {
		fmt.Println("worker failed:", eg.Errs[0].(*asyncio.ValueError).Msg)
		return nil
	}))
}

// ---- before: the same program without them

// pipeOutBefore writes every callback of Protocol and WriteFlowControl,
// and tracks the pause state and the drain waiters itself.
type pipeOutBefore struct {
	paused  bool
	lost    bool
	waiters []*asyncio.Future[struct{}]
}

func (p *pipeOutBefore) ConnectionMade(aio.Transport) {}
func (p *pipeOutBefore) DataReceived([]byte)          {}
func (p *pipeOutBefore) EOFReceived() bool            { return false }
func (p *pipeOutBefore) PauseWriting()                { p.paused = true }
func (p *pipeOutBefore) ResumeWriting() {
	p.paused = false
	p.wake(nil)
}
func (p *pipeOutBefore) ConnectionLost(err error) {
	p.lost = true
	p.wake(err)
}
func (p *pipeOutBefore) wake(err error) {
	for _, w := range p.waiters {
		if w.Done() {
			continue
		}
		if err != nil {
			w.SetException(err)
		} else {
			w.SetResult(struct{}{})
		}
	}
	p.waiters = nil
}
func (p *pipeOutBefore) drain(t *asyncio.T) error {
	if p.lost {
		return errors.New("Connection lost")
	}
	if !p.paused {
		return nil
	}
	w := asyncio.NewFuture[struct{}](t)
	p.waiters = append(p.waiters, w)
	_, err := w.Await(t)
	return err
}

func portBefore(t *asyncio.T, pipe *os.File) error {
	q := asyncio.NewQueue[[]byte](0)
	handle := func(t *asyncio.T, r *aio.StreamReader, w *aio.StreamWriter) error {
		defer w.Close()
		for {
			line, err := r.ReadLine(t)
			if err != nil {
				return err
			}
			if len(line) == 0 {
				break
			}
			q.PutNowait(line)
		}
		q.Shutdown(false)
		return nil
	}
	p := &pipeOutBefore{}
	tr, _, err := aio.ConnectWritePipe(t, func() aio.Protocol { return p }, pipe)
	if err != nil {
		return err
	}
	defer tr.Close()
	worker := func(t *asyncio.T) error {
		for {
			line, err := q.Get(t)
			if errors.Is(err, asyncio.ErrQueueShutDown) {
				return nil
			}
			if err != nil {
				return err
			}
			if string(line) == "boom\n" {
				return &asyncio.ValueError{Msg: "boom"}
			}
			tr.Write(bytes.ToUpper(line))
			if err := p.drain(t); err != nil {
				return err
			}
		}
	}
	srv, err := aio.StartServer(t, handle, "127.0.0.1", 0)
	if err != nil {
		return err
	}
	err = asyncio.TaskGroup(t, func(g *asyncio.Group) error {
		asyncio.SpawnErr(g, worker)
		_, w, err := aio.OpenConnection(t, "127.0.0.1", srv.Addr().(*net.TCPAddr).Port)
		if err != nil {
			return err
		}
		defer w.Close()
		w.Write([]byte("a\nb\nboom\n"))
		return w.WriteEOF()
	})
	srv.Close()
	if werr := srv.WaitClosed(t); err == nil {
		err = werr
	}
	var eg *asyncio.ExceptionGroup
	if errors.As(err, &eg) {
		matched, rest := eg.Split(func(err error) bool {
			var ve *asyncio.ValueError
			return errors.As(err, &ve)
		})
		if matched != nil {
			var ve *asyncio.ValueError
			errors.As(matched, &ve)
			fmt.Println("worker failed:", ve.Msg)
		}
		if rest == nil {
			return nil
		}
		return rest
	}
	return err
}
