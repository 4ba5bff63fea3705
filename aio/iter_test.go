//go:build unix

package aio

import (
	"fmt"
	"net"
	"testing"

	"github.com/go-asyncio/asyncio"
)

// Lines yields each line with its "\n", the unterminated last one too,
// and ends at EOF; Chunks yields reads of at most n bytes until EOF.
func TestStreamIterators_LinesAndChunks(t *testing.T) {
	var log []string
	runVirtual(t, func(at *asyncio.T) error {
		r := NewStreamReader(at, DefaultStreamLimit)
		r.FeedData([]byte("one\ntwo\nthree"))
		r.FeedEOF()
		for line, err := range r.Lines(at) {
			if err != nil {
				return err
			}
			log = append(log, fmt.Sprintf("line %q", line))
		}
		r = NewStreamReader(at, DefaultStreamLimit)
		at.Loop().CallSoon(func() { r.FeedData([]byte("abcdefg")); r.FeedEOF() })
		for b, err := range r.Chunks(at, 3) {
			if err != nil {
				return err
			}
			log = append(log, fmt.Sprintf("chunk %q", b))
		}
		log = append(log, "end")
		return nil
	})
	expectLog(t, []string{`line "one\n"`, `line "two\n"`, `line "three"`, `chunk "abc"`, `chunk "def"`, `chunk "g"`, "end"}, log)
}

// A cancellation while Lines waits, and a line over the limit, arrive as
// the sequence's error and end the range; Chunks(0) is a *ValueError.
func TestStreamIterators_Errors(t *testing.T) {
	var log []string
	runVirtual(t, func(at *asyncio.T) error {
		r := NewStreamReader(at, DefaultStreamLimit)
		r.FeedData([]byte("first\n"))
		reader := asyncio.CreateTaskErr(at, func(t *asyncio.T) error {
			for line, err := range r.Lines(t) {
				if err != nil {
					log = append(log, "error: "+describe(err))
					return err
				}
				log = append(log, fmt.Sprintf("line %q", line))
			}
			return nil
		})
		if err := asyncio.Sleep(at, 0); err != nil {
			return err
		}
		reader.Cancel("enough")
		_, err := reader.Await(at)
		log = append(log, "reader cancelled: "+fmt.Sprint(asyncio.IsCancelled(err)))

		small := NewStreamReader(at, 4)
		small.FeedData([]byte("much too long\n"))
		for _, err := range small.Lines(at) {
			log = append(log, "limit: "+describe(err))
		}
		func() {
			defer func() { log = append(log, fmt.Sprintf("Chunks(0): %v", recover())) }()
			small.Chunks(at, 0)
		}()
		return nil
	})
	expectLog(t, []string{
		`line "first\n"`, "error: cancelled", "reader cancelled: true",
		"limit: ValueError Separator is found, but chunk is longer than limit",
		"Chunks(0): asyncio: Chunks: the chunk size must be > 0",
	}, log)
}

// A DatagramQueue yields the datagrams its endpoint receives with their
// senders, and ends once the endpoint is closed.
func TestDatagramQueue_RangeUntilClosed(t *testing.T) {
	var log []string
	runNet(t, func(at *asyncio.T) error {
		dq := NewDatagramQueue()
		str, _, err := CreateDatagramEndpoint(at, dq.Factory, &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)}, nil)
		if err != nil {
			return err
		}
		ctr, _, err := CreateDatagramEndpoint(at, func() DatagramProtocol { return BaseDatagramProtocol{} }, nil, str.ExtraInfo("sockname").(*net.UDPAddr))
		if err != nil {
			return err
		}
		defer ctr.Close()
		for _, s := range []string{"a", "b", "quit"} {
			ctr.SendTo([]byte(s), nil)
		}
		client := ctr.ExtraInfo("sockname").(*net.UDPAddr).String()
		for d, err := range dq.Datagrams(at) {
			if err != nil {
				return err
			}
			log = append(log, fmt.Sprintf("%s from client: %v", d.Data, d.Addr.String() == client))
			if string(d.Data) == "quit" {
				str.Close()
			}
		}
		log = append(log, "ended")
		return nil
	})
	expectLog(t, []string{"a from client: true", "b from client: true", "quit from client: true", "ended"}, log)
}

// WithServer closes the server after the body and waits for its
// connections, as `async with server:` does; the body's error comes back.
func TestWithServer_ClosesAndWaits(t *testing.T) {
	var log []string
	runNet(t, func(at *asyncio.T) error {
		srv, err := StartServer(at, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
			defer w.Close()
			_, err := r.Read(t, -1)
			return err
		}, "127.0.0.1", 0)
		if err != nil {
			return err
		}
		err = WithServer(at, srv, func() error {
			_, w, err := OpenConnection(at, "127.0.0.1", serverPort(srv))
			if err != nil {
				return err
			}
			w.Write([]byte("hello"))
			w.Close()
			return fmt.Errorf("body failed")
		})
		log = append(log, fmt.Sprintf("err %v, serving %v, addrs %v", err, srv.IsServing(), srv.Addrs()))
		return srv.WaitClosed(at)
	})
	expectLog(t, []string{"err body failed, serving false, addrs []"}, log)
}
