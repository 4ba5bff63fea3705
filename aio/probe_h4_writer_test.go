//go:build unix

package aio

import (
	"fmt"
	"net"
	"runtime"
	"testing"

	"github.com/go-asyncio/asyncio"
)

// A StreamWriter made with NewStreamWriter (asyncio's
// StreamWriter(transport, protocol, reader, loop)) that is collected
// unclosed closes its transport, as CPython 3.13's StreamWriter.__del__
// does for every writer (streams.py: "if not self._transport.is_closing():
// ... self.close()"), and as OpenConnection's writer here; the pipe's
// reader sees EOF. It stayed open for ever.
func TestH4NewStreamWriterCollectedClosesItsTransport(t *testing.T) {
	clean(t)
	r, w := osPipe(t)
	var log []string
	runNet(t, func(at *asyncio.T) error {
		reader := NewStreamReader(at, DefaultStreamLimit)
		if _, _, err := ConnectReadPipe(at, func() Protocol { return NewStreamReaderProtocol(reader) }, r); err != nil {
			return err
		}
		proto := NewStreamReaderProtocol(NewStreamReader(at, DefaultStreamLimit))
		tr, _, err := ConnectWritePipe(at, func() Protocol { return proto }, w)
		if err != nil {
			return err
		}
		writeAndDrop(tr, proto)
		line, err := reader.ReadLine(at)
		log = append(log, fmt.Sprintf("read %q %v; closing %v", line, err, tr.IsClosing()))
		for i := 0; !tr.IsClosing(); i++ { // gc.collect(), then the cleanup's close
			if i == 1000 {
				return fmt.Errorf("the collected writer's pipe is still open")
			}
			runtime.GC()
			if err := asyncio.Sleep(at, 0); err != nil {
				return err
			}
		}
		rest, err := reader.Read(at, -1)
		log = append(log, fmt.Sprintf("then %q %v eof %v", rest, err, reader.AtEOF()))
		return nil
	})
	expectLog(t, []string{`read "hello\n" <nil>; closing false`, `then "" <nil> eof true`}, log)
}

// writeAndDrop writes a line through a StreamWriter it makes and drops.
//
//go:noinline
func writeAndDrop(tr WriteTransport, proto Protocol) {
	NewStreamWriter(tr, proto, nil).Write([]byte("hello\n"))
}

// A StreamReader and a StreamWriter over pipes name their transports as
// over a socket ("<readPipeTransport fd=5 open>", asyncio's
// "<_UnixReadPipeTransport fd=5 polling>"); fmt printed the transports'
// fields, maps and all. A datagram transport too.
func TestH4PipeAndDatagramTransportStrings(t *testing.T) {
	clean(t)
	r, w := osPipe(t)
	runNet(t, func(at *asyncio.T) error {
		reader := NewStreamReader(at, DefaultStreamLimit)
		rtr, _, err := ConnectReadPipe(at, func() Protocol { return NewStreamReaderProtocol(reader) }, r)
		if err != nil {
			return err
		}
		proto := NewStreamReaderProtocol(NewStreamReader(at, DefaultStreamLimit))
		wtr, _, err := ConnectWritePipe(at, func() Protocol { return proto }, w)
		if err != nil {
			return err
		}
		sw := NewStreamWriter(wtr, proto, nil)
		rfd, wfd := PipeFile(rtr).Fd(), PipeFile(wtr).Fd()
		if got, want := fmt.Sprint(reader), fmt.Sprintf("<StreamReader transport=<readPipeTransport fd=%d open>>", rfd); got != want {
			return fmt.Errorf("reader %s, want %s", got, want)
		}
		if got, want := fmt.Sprint(sw), fmt.Sprintf("<StreamWriter transport=<writePipeTransport fd=%d open>>", wfd); got != want {
			return fmt.Errorf("writer %s, want %s", got, want)
		}
		sw.Close()
		if err := sw.WaitClosed(at); err != nil {
			return err
		}
		if _, err := reader.Read(at, -1); err != nil {
			return err
		}
		dtr, _, err := CreateDatagramEndpoint(at, func() DatagramProtocol { return BaseDatagramProtocol{} }, &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)}, nil)
		if err != nil {
			return err
		}
		fd, _ := Socket(dtr)
		if got := fmt.Sprint(dtr); got != fmt.Sprintf("<datagramTransport fd=%d open>", fd) {
			return fmt.Errorf("datagram transport %s", got)
		}
		dtr.Close()
		return settle(at)
	})
}
