//go:build unix

// Command echo runs a line-echo server and a client on one event loop,
// with asyncio's streams API, as in
//
//	async def handle(reader, writer):
//	    async for line in reader:
//	        writer.write(line.upper())
//	        await writer.drain()
//	    writer.close()
//
//	async def main():
//	    server = await asyncio.start_server(handle, "127.0.0.1", 0)
//	    reader, writer = await asyncio.open_connection(*server.sockets[0].getsockname())
//	    for msg in ["hello", "echo"]:
//	        writer.write(msg.encode() + b"\n")
//	        print((await reader.readline()).decode(), end="")
//	    writer.close(); await writer.wait_closed()
//	    server.close(); await server.wait_closed()
package main

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"os"

	"github.com/go-asyncio/asyncio"
	"github.com/go-asyncio/asyncio/aio"
)

// handle serves one connection: each line comes back upper-cased.
func handle(t *asyncio.T, r *aio.StreamReader, w *aio.StreamWriter) error {
	defer w.Close()
	for {
		line, err := r.ReadLine(t)
		if err != nil || len(line) == 0 { // error or EOF
			return err
		}
		w.Write(bytes.ToUpper(line))
		if err := w.Drain(t); err != nil {
			return err
		}
	}
}

// run starts the server on 127.0.0.1, sends msgs from a client and
// prints each echo to out.
func run(out io.Writer, msgs []string) error {
	_, err := asyncio.Run(func(t *asyncio.T) (struct{}, error) {
		server, err := aio.StartServer(t, handle, "127.0.0.1", 0)
		if err != nil {
			return struct{}{}, err
		}
		addr := server.Addr().(*net.TCPAddr)
		r, w, err := aio.OpenConnection(t, "127.0.0.1", addr.Port)
		if err != nil {
			return struct{}{}, err
		}
		for _, m := range msgs {
			w.Write([]byte(m + "\n"))
			line, err := r.ReadLine(t)
			if err != nil {
				return struct{}{}, err
			}
			fmt.Fprint(out, string(line))
		}
		w.Close()
		if err := w.WaitClosed(t); err != nil {
			return struct{}{}, err
		}
		server.Close()
		return struct{}{}, server.WaitClosed(t)
	})
	return err
}

func main() {
	msgs := os.Args[1:]
	if len(msgs) == 0 {
		msgs = []string{"hello", "echo"}
	}
	if err := run(os.Stdout, msgs); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}
