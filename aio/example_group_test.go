//go:build unix

package aio_test

import (
	"fmt"
	"net"

	"github.com/go-asyncio/asyncio"
	"github.com/go-asyncio/asyncio/aio"
)

// An echo server on every loop of a group, main/sub style: the calling
// loop accepts and hands each connection to a loop in turn, where its
// handler task runs for the connection's life.
func ExampleStartGroupServer() {
	g := asyncio.NewLoopGroup(asyncio.WithLoops(2))
	defer g.Close()
	handle := func(t *asyncio.T, r *aio.StreamReader, w *aio.StreamWriter) error {
		defer w.Close()
		line, err := r.ReadLine(t)
		if err != nil {
			return err
		}
		return w.Write([]byte(fmt.Sprintf("%s: %s", t.Loop().Name(), line)))
	}
	_, err := asyncio.RunGroup(g, func(t *asyncio.T) (struct{}, error) {
		srv, err := aio.StartGroupServer(t, g, aio.GroupRoundRobin, handle, "127.0.0.1", 0)
		if err != nil {
			return struct{}{}, err
		}
		port := srv.Addr().(*net.TCPAddr).Port
		for i := 0; i < 3; i++ {
			r, w, err := aio.OpenConnection(t, "127.0.0.1", port)
			if err != nil {
				return struct{}{}, err
			}
			_ = w.Write([]byte(fmt.Sprintf("hello %d\n", i)))
			line, err := r.ReadLine(t)
			if err != nil {
				return struct{}{}, err
			}
			fmt.Print(string(line))
			w.Close()
		}
		if err := srv.Close(t); err != nil {
			return struct{}{}, err
		}
		return struct{}{}, srv.WaitClosed(t)
	})
	fmt.Println(err)
	// Output:
	// loop 0: hello 0
	// loop 1: hello 1
	// loop 0: hello 2
	// <nil>
}
