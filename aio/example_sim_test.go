//go:build unix

package aio_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"time"

	"github.com/go-asyncio/asyncio"
	"github.com/go-asyncio/asyncio/aio"
)

// The same client and server code on a simulated network, on the loop's
// virtual clock: a 40 ms link, a server that stalls for 30 s, one that
// resets, and an address nobody listens on. The run takes virtual time
// (printed) and no real time to speak of.
func ExampleNewSimNetwork() {
	_, err := asyncio.Run(func(t *asyncio.T) (struct{}, error) {
		n := aio.NewSimNetwork(t, 42)
		n.SetDefaultLink(aio.LinkConfig{Latency: 20 * time.Millisecond})
		client := n.Host("client")
		for _, name := range []string{"ok", "stalls", "resets"} {
			h := n.Host(name)
			srv, err := aio.StartServer(t, func(t *asyncio.T, r *aio.StreamReader, w *aio.StreamWriter) error {
				defer w.Close()
				line, err := r.ReadLine(t)
				if err != nil {
					return nil
				}
				// The test's faults: the server finds its connection by
				// the client's address.
				switch c := n.ConnOf(w.ExtraInfo("peername").(net.Addr)); name {
				case "stalls":
					c.StallFor(30 * time.Second)
				case "resets":
					c.Reset()
					return nil
				}
				w.Write([]byte(name + " says " + string(line)))
				return nil
			}, "", 7, aio.WithNetwork(h))
			if err != nil {
				return struct{}{}, err
			}
			defer srv.Close()
		}
		n.Host("empty")
		for _, host := range []string{"ok", "stalls", "resets", "empty"} {
			start := t.Loop().Time()
			line, err := asyncio.WaitForFunc(t, time.Second, func(t *asyncio.T) ([]byte, error) {
				r, w, err := aio.OpenConnection(t, host, 7, aio.WithNetwork(client))
				if err != nil {
					return nil, err
				}
				defer w.Close()
				w.Write([]byte("hi\n"))
				return r.ReadLine(t)
			})
			took := t.Loop().Time() - start
			switch {
			case errors.Is(err, asyncio.ErrTimeout):
				fmt.Printf("%s: timed out after %v\n", host, took)
			case errors.Is(err, syscall.ECONNRESET):
				fmt.Printf("%s: reset after %v\n", host, took)
			case errors.Is(err, syscall.ECONNREFUSED):
				fmt.Printf("%s: refused after %v\n", host, took)
			case err != nil:
				return struct{}{}, err
			default:
				fmt.Printf("%s: %q after %v\n", host, line, took)
			}
		}
		return struct{}{}, nil
	}, asyncio.WithVirtualTime())
	if err != nil {
		fmt.Println(err)
	}
	// Output:
	// ok: "ok says hi\n" after 80ms
	// stalls: timed out after 1s
	// resets: reset after 60ms
	// empty: refused after 40ms
}

// http.Client inside asyncio.Go over a simulated network: the transport
// runs each exchange on the loop, and the Go call does not hold the
// virtual clock while it waits, so the link's latency takes virtual time.
func ExampleSimHost_HTTPTransport() {
	_, err := asyncio.Run(func(t *asyncio.T) (struct{}, error) {
		n := aio.NewSimNetwork(t, 1)
		n.SetDefaultLink(aio.LinkConfig{Latency: 50 * time.Millisecond})
		web := n.Host("web")
		srv, err := aio.StartServer(t, func(t *asyncio.T, r *aio.StreamReader, w *aio.StreamWriter) error {
			defer w.Close()
			if _, err := r.ReadUntil(t, []byte("\r\n\r\n")); err != nil {
				return nil
			}
			w.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello"))
			return nil
		}, "", 80, aio.WithNetwork(web))
		if err != nil {
			return struct{}{}, err
		}
		defer srv.Close()
		client := &http.Client{Transport: n.Host("client").HTTPTransport()}
		body, err := asyncio.Go(t, func(ctx context.Context) (string, error) {
			req, err := http.NewRequestWithContext(ctx, "GET", "http://web/", nil)
			if err != nil {
				return "", err
			}
			resp, err := client.Do(req)
			if err != nil {
				return "", err
			}
			defer resp.Body.Close()
			b, err := io.ReadAll(resp.Body)
			return strings.ToUpper(string(b)), err
		})
		fmt.Printf("%s after %v\n", body, t.Loop().Time())
		return struct{}{}, err
	}, asyncio.WithVirtualTime())
	if err != nil {
		fmt.Println(err)
	}
	// Output: HELLO after 200ms
}
