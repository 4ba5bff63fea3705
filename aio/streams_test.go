package aio

import (
	"bytes"
	"errors"
	"github.com/go-asyncio/asyncio"
	"io"
	"net"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// runNet runs main as a task on a real-clock loop and closes it.
func runNet(t *testing.T, main func(t *asyncio.T) error) {
	t.Helper()
	if _, err := asyncio.Run(func(at *asyncio.T) (struct{}, error) { return struct{}{}, main(at) }); err != nil {
		t.Fatal(err)
	}
}

func serverPort(s *Server) int { return s.Addr().(*net.TCPAddr).Port }

func TestStreamEcho(t *testing.T) {
	var log []string
	runNet(t, func(at *asyncio.T) error {
		srv, err := StartServer(at, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
			defer w.Close()
			for {
				line, err := r.ReadLine(t)
				if err != nil || len(line) == 0 {
					return err
				}
				w.Write(bytes.ToUpper(line))
				if err := w.Drain(t); err != nil {
					return err
				}
			}
		}, "127.0.0.1", 0)
		if err != nil {
			return err
		}
		r, w, err := OpenConnection(at, "127.0.0.1", serverPort(srv))
		if err != nil {
			return err
		}
		for _, s := range []string{"hello\n", "world\n"} {
			w.Write([]byte(s))
			line, err := r.ReadLine(at)
			if err != nil {
				return err
			}
			log = append(log, string(line))
		}
		w.WriteEOF()
		rest, err := r.Read(at, -1)
		log = append(log, "rest:"+string(rest))
		if !r.AtEOF() {
			return errors.New("not at EOF")
		}
		w.Close()
		if err := w.WaitClosed(at); err != nil {
			return err
		}
		srv.Close()
		return srv.WaitClosed(at)
	})
	if d := cmp.Diff([]string{"HELLO\n", "WORLD\n", "rest:"}, log); d != "" {
		t.Fatal(d)
	}
	_ = io.EOF
}
