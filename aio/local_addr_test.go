//go:build unix

package aio

import (
	"strings"
	"testing"

	"github.com/go-asyncio/asyncio"
)

// WithLocalAddr's bad uses are a *ValueError naming the mistake, before
// anything is resolved or connected.
func TestWithLocalAddrErrors(t *testing.T) {
	_, err := asyncio.Run(func(tk *asyncio.T) (struct{}, error) {
		factory := func() Protocol { return &BaseProtocol{} }
		for _, c := range []struct {
			opts []Option
			want string
		}{
			{[]Option{WithLocalAddr("127.0.0.1", 70000)}, "70000"},
			{[]Option{WithLocalAddr("127.0.0.1", 0), WithSocket(3)}, "WithLocalAddr and WithSocket cannot be given together"},
		} {
			_, _, err := CreateConnection(tk, factory, "", 0, c.opts...)
			ve, ok := err.(*asyncio.ValueError)
			if !ok || !strings.Contains(ve.Msg, c.want) {
				t.Errorf("got %v, want a ValueError with %q", err, c.want)
			}
		}
		_, _, err := CreateUnixConnection(tk, factory, "/nonexistent", WithLocalAddr("127.0.0.1", 0))
		if ve, ok := err.(*asyncio.ValueError); !ok || !strings.Contains(ve.Msg, "does not take the option WithLocalAddr") {
			t.Errorf("CreateUnixConnection: got %v, want a ValueError", err)
		}
		return struct{}{}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
