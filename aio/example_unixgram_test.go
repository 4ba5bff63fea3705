//go:build unix

package aio_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/go-asyncio/asyncio"
	"github.com/go-asyncio/asyncio/aio"
)

// A Unix datagram echo: the server is bound to a path; the client binds
// a path of its own (an unbound socket could send, but not be answered)
// and is connected to the server's.
func ExampleCreateUnixDatagramEndpoint() {
	dir, err := os.MkdirTemp("", "example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	serverPath, clientPath := filepath.Join(dir, "server"), filepath.Join(dir, "client")
	_, err = asyncio.Run(func(t *asyncio.T) (struct{}, error) {
		server, _, err := aio.CreateUnixDatagramEndpoint(t, func() aio.DatagramProtocol { return &udpEcho{} }, serverPath, "")
		if err != nil {
			return struct{}{}, err
		}
		reply := &udpReply{got: asyncio.NewFuture[string](t)}
		client, _, err := aio.CreateUnixDatagramEndpoint(t, func() aio.DatagramProtocol { return reply }, clientPath, serverPath)
		if err != nil {
			return struct{}{}, err
		}
		client.SendTo([]byte("ping"), nil)
		got, err := asyncio.WaitFor(t, 5*time.Second, reply.got)
		fmt.Println(got)
		client.Close()
		server.Close()
		// One more iteration: the transports call ConnectionLost and close
		// their sockets.
		return struct{}{}, errors.Join(err, asyncio.Sleep(t, 0))
	})
	fmt.Println("error:", err)
	// Output:
	// echo ping
	// error: <nil>
}
