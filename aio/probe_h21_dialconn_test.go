//go:build linux

package aio

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-asyncio/asyncio"
)

// DialConn took every network but "unix" for "tcp": DialConn(t, "udp",
// "server:53", WithNetwork(h)) made a TCP connection, and
// DialConn(t, "unix", path, WithNetwork(h)) dialled a real Unix socket
// off the simulated network, WithNetwork silently dropped (a test meant
// to run on the network then talks to whatever listens at path on the
// machine). net.Dial refuses a network it does not know, and the
// package's calls refuse an option they cannot honour, naming it, before
// anything is dialled: both are a *ValueError now.
func TestH21_DialConnRefusesWhatItCannotDo(tt *testing.T) {
	clean(tt)
	path := filepath.Join(tt.TempDir(), "s")
	runVirtual(tt, func(t *asyncio.T) error {
		n, c, s := simPair(t, 1, LinkConfig{})
		srv, err := StartServer(t, echoLines(""), "", 53, WithNetwork(s))
		if err != nil {
			return err
		}
		defer srv.Close()
		userver, err := StartUnixServer(t, echoLines("real: "), path)
		if err != nil {
			return err
		}
		defer userver.Close()
		for _, tc := range []struct {
			network, address, want string
			opts                   []Option
		}{
			{"udp", "server:53", `"udp"`, []Option{WithNetwork(c)}},
			{"tcp5", "server:53", `"tcp5"`, []Option{WithNetwork(c)}},
			{"unix", path, "WithNetwork", []Option{WithNetwork(c)}},
		} {
			conn, err := DialConn(t, tc.network, tc.address, tc.opts...)
			if conn != nil {
				conn.Close()
			}
			var ve *asyncio.ValueError
			if !errors.As(err, &ve) || !strings.Contains(ve.Msg, tc.want) {
				return fmt.Errorf("DialConn(%q, %q): %v, want a *ValueError naming %s", tc.network, tc.address, err, tc.want)
			}
		}
		if len(n.Conns()) != 0 {
			return fmt.Errorf("refused dials made %d connections", len(n.Conns()))
		}
		return nil
	})
}
