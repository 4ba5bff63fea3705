//go:build linux

package aio

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"testing"

	"github.com/go-asyncio/asyncio"
)

// Abstract Unix socket names by length. The kernel takes an abstract
// name that fills sun_path (108 bytes with its leading NUL), and so does
// CPython 3.13 (PYENV_VERSION=3.13.0):
//
//	await asyncio.start_unix_server(cb, "\0" + "a"*107)   # works
//	await asyncio.open_unix_connection("\0" + "a"*107)    # works
//	await asyncio.start_unix_server(cb, "\0" + "a"*108)
//	# OSError: AF_UNIX path too long
//	await asyncio.start_unix_server(cb, "\0ab\0cd")       # works
//
// golang.org/x/sys/unix, which binds and connects here, refuses a 108-byte
// name (SockaddrUnix keeps a byte for a terminator an abstract name does
// not have), so it is an error that says so and names both limits, where
// it was "AF_UNIX path too long ... the limit is 107", a limit CPython
// does not have. One byte shorter works; one byte longer is too long, as
// in CPython; a NUL inside an abstract name is part of the name, and of
// the server's address and its clients' peername (CPython: b'\x00ab\x00cd'),
// which reaches the server again (it was cut at the NUL: "@ab").
func TestH9AbstractUnixNameLengths(t *testing.T) {
	clean(t)
	base := fmt.Sprintf("h9-%d-", os.Getpid())
	name := func(prefix string, n int) string {
		return prefix + base + strings.Repeat("a", n-len(prefix)-len(base))
	}
	var log []string
	runVirtual(t, func(at *asyncio.T) error {
		before := openFDs(t)
		for _, c := range []struct {
			what, path string
		}{
			{"NUL 108", name("\x00", 108)},
			{"@ 108", name("@", 108)},
			{"NUL 109", name("\x00", 109)},
		} {
			_, err1 := StartUnixServer(at, closeAtOnce, c.path)
			_, _, err2 := OpenUnixConnection(at, c.path)
			for i, err := range []error{err1, err2} {
				var ae *net.AddrError
				msg := "not a *net.AddrError"
				if errors.As(err, &ae) {
					msg = ae.Err
				}
				log = append(log, fmt.Sprintf("%s call %d: %s", c.what, i+1, msg))
			}
		}
		checkNoNewFDs(t, before)
		for _, path := range []string{name("\x00", 107), name("@", 107), "\x00" + base + "\x00x"} {
			srv, err := StartUnixServer(at, closeAtOnce, path)
			if err != nil {
				return fmt.Errorf("listen on %q: %w", path, err)
			}
			_, w, err := OpenUnixConnection(at, path)
			if err != nil {
				return fmt.Errorf("connect to %q: %w", path, err)
			}
			log = append(log, fmt.Sprintf("%d bytes: connected; Addr %q peer %q", len(path), srv.Addr().String(), PeerName(w).String()))
			w.Close()
			// The server's address reaches the server.
			_, w, err = OpenUnixConnection(at, srv.Addr().String())
			if err != nil {
				return fmt.Errorf("connect to Addr %q: %w", srv.Addr(), err)
			}
			w.Close()
			srv.Close()
			if err := srv.WaitClosed(at); err != nil {
				return err
			}
		}
		return nil
	})
	limit := "AF_UNIX abstract name of 108 bytes: the kernel takes up to 108, but golang.org/x/sys/unix binds and connects at most 107"
	expectLog(t, []string{
		"NUL 108 call 1: " + limit,
		"NUL 108 call 2: " + limit,
		"@ 108 call 1: " + limit,
		"@ 108 call 2: " + limit,
		"NUL 109 call 1: AF_UNIX path too long: 109 bytes, the limit is 107",
		"NUL 109 call 2: AF_UNIX path too long: 109 bytes, the limit is 107",
		fmt.Sprintf("107 bytes: connected; Addr %q peer %q", name("@", 107), name("@", 107)),
		fmt.Sprintf("107 bytes: connected; Addr %q peer %q", name("@", 107), name("@", 107)),
		fmt.Sprintf("%d bytes: connected; Addr %q peer %q", len(base)+3, "@"+base+"\x00x", "@"+base+"\x00x"),
	}, log)
}
