//go:build unix

package aio

import (
	"crypto/tls"
	"errors"
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
