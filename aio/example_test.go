//go:build unix

package aio_test

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"net/http"

	"github.com/go-asyncio/asyncio"
	"github.com/go-asyncio/asyncio/aio"
)

// A stream server and a client on one loop (asyncio.start_server and
// asyncio.open_connection).
func ExampleOpenConnection() {
	_, err := asyncio.Run(func(t *asyncio.T) (struct{}, error) {
		server, err := aio.StartServer(t, func(t *asyncio.T, r *aio.StreamReader, w *aio.StreamWriter) error {
			line, err := r.ReadLine(t)
			w.Write(append([]byte("echo: "), line...))
			w.Close()
			return err
		}, "127.0.0.1", 0)
		if err != nil {
			return struct{}{}, err
		}
		r, w, err := aio.OpenConnection(t, "127.0.0.1", server.Addr().(*net.TCPAddr).Port)
		if err != nil {
			return struct{}{}, err
		}
		w.Write([]byte("hello\n"))
		reply, err := r.Read(t, -1) // until EOF
		fmt.Printf("%s", reply)
		w.Close()
		server.Close()
		return struct{}{}, errors.Join(err, server.WaitClosed(t))
	})
	fmt.Println("error:", err)
	// Output:
	// echo: hello
	// error: <nil>
}

// net/http.ReadResponse over a loop socket: the Conn's Read and Write
// suspend only the calling task.
func ExampleDialConn() {
	_, err := asyncio.Run(func(t *asyncio.T) (struct{}, error) {
		server, err := aio.StartServer(t, func(t *asyncio.T, r *aio.StreamReader, w *aio.StreamWriter) error {
			if _, err := r.ReadUntil(t, []byte("\r\n\r\n")); err != nil {
				return err
			}
			w.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi"))
			w.Close()
			return nil
		}, "127.0.0.1", 0)
		if err != nil {
			return struct{}{}, err
		}
		conn, err := aio.DialConn(t, "tcp", server.Addr().String())
		if err != nil {
			return struct{}{}, err
		}
		defer conn.Close()
		req, _ := http.NewRequest("GET", "http://example.test/", nil)
		if err := req.Write(conn); err != nil {
			return struct{}{}, err
		}
		resp, err := http.ReadResponse(bufio.NewReader(conn), req)
		if err != nil {
			return struct{}{}, err
		}
		fmt.Println(resp.Status, resp.ContentLength)
		server.Close()
		return struct{}{}, server.WaitClosed(t)
	})
	fmt.Println("error:", err)
	// Output:
	// 200 OK 2
	// error: <nil>
}
