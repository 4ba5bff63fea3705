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

// An http.Handler served from the loop on a simulated host, and called
// with http.Client over the same network: 2 round trips of 30 ms.
func ExampleStartHTTPServer() {
	_, err := asyncio.Run(func(t *asyncio.T) (struct{}, error) {
		n := aio.NewSimNetwork(t, 1)
		n.SetDefaultLink(aio.LinkConfig{Latency: 15 * time.Millisecond})
		srv, err := aio.StartHTTPServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, "hello %s", r.URL.Query().Get("name"))
		}), "", 80, aio.WithNetwork(n.Host("api")))
		if err != nil {
			return struct{}{}, err
		}
		defer srv.Close()
		client := &http.Client{Transport: n.Host("client").HTTPTransport()}
		body, err := asyncio.Go(t, func(ctx context.Context) (string, error) {
			req, _ := http.NewRequestWithContext(ctx, "GET", "http://api/?name=gopher", nil)
			resp, err := client.Do(req)
			if err != nil {
				return "", err
			}
			defer resp.Body.Close()
			b, err := io.ReadAll(resp.Body)
			return string(b), err
		})
		fmt.Printf("%s after %v\n", body, t.Loop().Time())
		srv.CloseClients()
		return struct{}{}, err
	}, asyncio.WithVirtualTime())
	if err != nil {
		fmt.Println(err)
	}
	// Output: hello gopher after 60ms
}

// SearchSeeds runs a scenario over seeds and names the first that fails:
// here the scenario fails when the seed's jitter makes a 10 ms echo take
// more than 25 ms.
func ExampleSearchSeeds() {
	scenario := func(seed uint64) error {
		_, err := asyncio.Run(func(t *asyncio.T) (struct{}, error) {
			n := aio.NewSimNetwork(t, seed)
			n.SetDefaultLink(aio.LinkConfig{Latency: 5 * time.Millisecond, Jitter: 10 * time.Millisecond})
			srv, err := aio.StartServer(t, func(t *asyncio.T, r *aio.StreamReader, w *aio.StreamWriter) error {
				defer w.Close()
				line, err := r.ReadLine(t)
				w.Write(line)
				return err
			}, "", 7, aio.WithNetwork(n.Host("echo")))
			if err != nil {
				return struct{}{}, err
			}
			defer srv.Close()
			r, w, err := aio.OpenConnection(t, "echo", 7, aio.WithNetwork(n.Host("client")))
			if err != nil {
				return struct{}{}, err
			}
			defer w.Close()
			start := t.Loop().Time()
			w.Write([]byte("ping\n"))
			if _, err := r.ReadLine(t); err != nil {
				return struct{}{}, err
			}
			if d := t.Loop().Time() - start; d > 25*time.Millisecond {
				return struct{}{}, fmt.Errorf("echo took %v", d.Round(time.Millisecond))
			}
			return struct{}{}, nil
		}, asyncio.WithVirtualTime())
		return err
	}
	seed, err := aio.SearchSeeds(1, 100, scenario)
	fmt.Println(err)
	fmt.Println("again:", scenario(seed))
	// Output:
	// seed 12: echo took 28ms
	// again: echo took 28ms
}
