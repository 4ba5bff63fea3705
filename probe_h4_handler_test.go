package asyncio

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

type h4Transport struct{}

func (h4Transport) String() string { return "<socketTransport fd=7 open>" }

// The default exception handler logs the context's transport, as
// asyncio's default_exception_handler logs every key of the context
// ("transport: <_SelectorSocketTransport fd=7 ...>").
func TestH4DefaultHandlerLogsTransport(t *testing.T) {
	logs := captureSlog(t)
	l := NewTestLoop()
	defer l.Close()
	l.DefaultExceptionHandler(ExceptionContext{Message: "Unhandled exception in client_connected_cb", Transport: h4Transport{}})
	want := []string{"ERROR Unhandled exception in client_connected_cb transport=<socketTransport fd=7 open>"}
	if d := cmp.Diff(want, logs.take()); d != "" {
		t.Fatal(d)
	}
}
