//go:build unix

package aio

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/go-asyncio/asyncio"
)

// WithTLSHandshakeTimeout applies whatever the option order, and without
// WithTLS it is an error (asyncio: ValueError "ssl_handshake_timeout is
// only meaningful with ssl").
func TestTLSHandshakeTimeoutOption(t *testing.T) {
	cfg := &tls.Config{}
	for _, tc := range []struct {
		name string
		opts []Option
		want time.Duration
	}{
		{"after WithTLS", []Option{WithTLS(cfg), WithTLSHandshakeTimeout(time.Second)}, time.Second},
		{"before WithTLS", []Option{WithTLSHandshakeTimeout(2 * time.Second), WithTLS(cfg)}, 2 * time.Second},
		{"default", []Option{WithTLS(cfg)}, defaultTLSHandshakeTimeout},
	} {
		o, err := buildOptions(tc.opts)
		if err != nil || o.tls.handshakeTimeout != tc.want {
			t.Errorf("%s: timeout %v, err %v; want %v", tc.name, o.tls.handshakeTimeout, err, tc.want)
		}
	}
	_, err := buildOptions([]Option{WithTLSHandshakeTimeout(time.Second)})
	var ve *asyncio.ValueError
	if !errors.As(err, &ve) || ve.Msg != "ssl_handshake_timeout is only meaningful with ssl" {
		t.Errorf("without WithTLS: err = %v, want the ValueError", err)
	}
	runNet(t, func(at *asyncio.T) error {
		if _, _, err := OpenConnection(at, "127.0.0.1", 1, WithTLSHandshakeTimeout(time.Second)); !errors.Is(err, asyncio.ErrValue) {
			t.Errorf("OpenConnection: err = %v, want a ValueError", err)
		}
		return nil
	})
}

// Without options the calls get asyncio's defaults (backlog 100,
// reuse_address on, happy eyeballs at 250 ms with interleaving, the
// 64 KiB stream limit) and the system's resolver; WithBacklog keeps at
// least one.
func TestOptionDefaults(t *testing.T) {
	o, err := buildOptions(nil)
	if err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprintf("backlog=%d reuseAddr=%v reusePort=%v broadcast=%v delay=%v interleaves=%v limit=%d resolver is net's=%v tls=%v",
		o.backlog, o.reuseAddr, o.reusePort, o.allowBroadcast, o.happyEyeballsDelay, o.interleaves(), o.limit, o.resolver == Resolver(net.DefaultResolver), o.tls != nil)
	want := "backlog=100 reuseAddr=true reusePort=false broadcast=false delay=250ms interleaves=true limit=65536 resolver is net's=true tls=false"
	if got != want {
		t.Errorf("defaults:\n got %s\nwant %s", got, want)
	}
	if o, _ := buildOptions([]Option{WithBacklog(0)}); o.backlog != 1 {
		t.Errorf("WithBacklog(0): backlog %d, want 1", o.backlog)
	}
	if o, _ := buildOptions([]Option{WithHappyEyeballsDelay(0)}); o.interleaves() {
		t.Error("without happy eyeballs, interleaving is on; asyncio turns it on only with happy_eyeballs_delay")
	}
}
