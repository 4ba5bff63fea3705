// Command echo is a port of the asyncio streams echo server and client
// (docs.python.org, "TCP echo client and server using streams"), with a
// per-client idle timeout and a graceful shutdown. It must produce no
// finding: it measures false positives.
package main

import (
	"bytes"
	"errors"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/go-asyncio/asyncio"
	"github.com/go-asyncio/asyncio/aio"
)

const idle = 5 * time.Second

// handleEcho is asyncio's handle_echo(reader, writer).
func handleEcho(t *asyncio.T, r *aio.StreamReader, w *aio.StreamWriter) error {
	defer w.Close()
	for {
		var line []byte
		err := asyncio.Timeout(t, idle, func(s *asyncio.TimeoutScope) error {
			var err error
			line, err = r.ReadLine(t)
			return err
		})
		switch {
		case errors.Is(err, asyncio.ErrTimeout):
			log.Printf("client idle for %v, closing", idle)
			return nil
		case err != nil:
			return err
		case len(line) == 0:
			return w.WaitClosed(t) // EOF
		}
		if err := w.Write(bytes.ToUpper(line)); err != nil {
			return err
		}
		if err := w.Drain(t); err != nil {
			return err
		}
	}
}

// client is asyncio's tcp_echo_client(message).
func client(t *asyncio.T, port int, messages []string) ([]string, error) {
	r, w, err := aio.OpenConnection(t, "127.0.0.1", port)
	if err != nil {
		return nil, err
	}
	defer w.Close()
	var replies []string
	for _, m := range messages {
		if err := w.Write([]byte(m + "\n")); err != nil {
			return nil, err
		}
		if err := w.Drain(t); err != nil {
			return nil, err
		}
		line, err := r.ReadLine(t)
		if err != nil {
			return nil, err
		}
		replies = append(replies, string(line))
	}
	return replies, nil
}

func serve(t *asyncio.T) (struct{}, error) {
	srv, err := aio.StartServer(t, handleEcho, "127.0.0.1", 8888)
	if err != nil {
		return struct{}{}, err
	}
	defer srv.Close()
	served := asyncio.CreateTask(t, func(t *asyncio.T) (struct{}, error) {
		return struct{}{}, srv.ServeForever(t)
	}, asyncio.WithName("serve forever"))
	replies, err := client(t, 8888, []string{"hello", "world"})
	if err != nil {
		return struct{}{}, err
	}
	fmt.Println(replies)
	served.Cancel("client done")
	if _, err := served.Await(t); err != nil && !asyncio.IsCancelled(err) {
		return struct{}{}, err
	}
	return struct{}{}, srv.WaitClosed(t)
}

func main() {
	if _, err := asyncio.Run(serve); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
