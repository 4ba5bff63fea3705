package asyncio

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

type h11Protocol struct{}

type h11NamedProtocol struct{}

func (h11NamedProtocol) String() string { return "<Fragile>" }

// The default exception handler logs the context's protocol (asyncio's
// "protocol" key, which a transport's fatal error sets): its String, or
// its type.
func TestH11DefaultHandlerLogsProtocol(t *testing.T) {
	logs := captureSlog(t)
	l := NewTestLoop()
	defer l.Close()
	msg := "Fatal error: protocol.data_received() call failed."
	l.DefaultExceptionHandler(ExceptionContext{Message: msg, Transport: h4Transport{}, Protocol: &h11Protocol{}})
	l.DefaultExceptionHandler(ExceptionContext{Message: msg, Protocol: h11NamedProtocol{}})
	want := []string{
		"ERROR " + msg + " transport=<socketTransport fd=7 open> protocol=*asyncio.h11Protocol",
		"ERROR " + msg + " protocol=<Fragile>",
	}
	if d := cmp.Diff(want, logs.take()); d != "" {
		t.Fatal(d)
	}
}
