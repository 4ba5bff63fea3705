//go:build unix

package aio

import (
	"testing"

	"github.com/go-asyncio/asyncio"
)

// WithSocket with a negative fd was quietly no option at all (the
// options keep -1 for "no socket" and test fd >= 0): CreateConnection
// then connected to its host and port as if WithSocket had not been
// given, and CreateDatagramEndpoint failed with "unexpected address
// family", which does not name the mistake. CPython 3.13 never ignores
// a sock=: socket.socket(fileno=-5) is ValueError "negative file
// descriptor", and create_connection(sock=-1) fails at once
// (AttributeError: 'int' object has no attribute 'type'). Now it is a
// *ValueError naming the option, before anything is done.
func TestH19_WithSocketNegativeFDIsAValueError(t *testing.T) {
	clean(t)
	var log []string
	runNet(t, func(at *asyncio.T) error {
		srv, err := StartServer(at, closeAtOnce, "127.0.0.1", 0)
		if err != nil {
			return err
		}
		defer func() { srv.Close(); srv.CloseClients() }()
		tr, _, err := CreateConnection(at, func() Protocol { return &BaseProtocol{} }, "127.0.0.1", serverPort(srv), WithSocket(-1))
		if tr != nil {
			tr.Abort()
			log = append(log, "CreateConnection: connected")
		} else {
			log = append(log, "CreateConnection: "+describe(err))
		}
		_, _, err = CreateDatagramEndpoint(at, func() DatagramProtocol { return &BaseDatagramProtocol{} }, nil, nil, WithSocket(-5))
		log = append(log, "CreateDatagramEndpoint: "+describe(err))
		return settle(at)
	})
	expectLog(t, []string{
		"CreateConnection: ValueError CreateConnection: WithSocket(-1): a file descriptor is >= 0",
		"CreateDatagramEndpoint: ValueError CreateDatagramEndpoint: WithSocket(-5): a file descriptor is >= 0",
	}, log)
}
