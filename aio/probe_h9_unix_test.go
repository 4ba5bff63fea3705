//go:build unix

package aio

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-asyncio/asyncio"
	"golang.org/x/sys/unix"
)

// A Unix socket path with a NUL byte in it is a *asyncio.ValueError
// "embedded null byte", before any socket exists, for every call that
// takes a path. The kernel ends a path at its first NUL, so bind made a
// socket file of the shorter name (which Close then did not remove) and
// connect reached that shorter name. CPython 3.13 (PYENV_VERSION=3.13.0):
//
//	await asyncio.start_unix_server(cb, d + "/a\0b")
//	# ValueError: stat: embedded null character in path
//	await asyncio.open_unix_connection(d + "/a\0b")
//	# FileNotFoundError: connects to d + "/a" (the kernel's truncation;
//	# here a ValueError too, the mistake named rather than a shorter path
//	# reached)
func TestH9UnixPathWithEmbeddedNUL(t *testing.T) {
	clean(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "a\x00b")
	runVirtual(t, func(at *asyncio.T) error {
		before := openFDs(t)
		srv, err1 := StartUnixServer(at, closeAtOnce, path)
		if err1 == nil {
			srv.Close()
		}
		_, w, err2 := OpenUnixConnection(at, path)
		if err2 == nil {
			w.Close()
		}
		c, err3 := DialConn(at, "unix", path)
		if err3 == nil {
			c.Close()
		}
		fd, err := NewSocket("unix")
		if err != nil {
			return err
		}
		defer unix.Close(fd)
		err4 := SockConnect(at, fd, &net.UnixAddr{Name: path, Net: "unix"})
		gfd, err := NewSocket("unixgram")
		if err != nil {
			return err
		}
		defer unix.Close(gfd)
		_, err5 := SockSendTo(at, gfd, []byte("x"), &net.UnixAddr{Name: path, Net: "unixgram"})
		for i, err := range []error{err1, err2, err3, err4, err5} {
			var ve *asyncio.ValueError
			if !errors.As(err, &ve) || !strings.Contains(err.Error(), "embedded null byte") {
				t.Errorf("call %d: %v, want a *asyncio.ValueError naming the embedded null byte", i+1, err)
			}
		}
		before[fd], before[gfd] = true, true
		checkNoNewFDs(t, before)
		return nil
	})
	if _, err := os.Stat(filepath.Join(dir, "a")); !os.IsNotExist(err) {
		t.Errorf("a socket file of the truncated name was made: %v", err)
	}
}

// SockSendTo names a Unix path too long for the system as SockConnect
// does ("AF_UNIX path too long", asyncio's OSError), where it said
// "unsupported address type".
func TestH9SockSendToUnixPathTooLong(t *testing.T) {
	clean(t)
	long := "/tmp/" + strings.Repeat("x", maxUnixPath)
	runVirtual(t, func(at *asyncio.T) error {
		fd, err := NewSocket("unixgram")
		if err != nil {
			return err
		}
		defer unix.Close(fd)
		_, err = SockSendTo(at, fd, []byte("x"), &net.UnixAddr{Name: long, Net: "unixgram"})
		var ae *net.AddrError
		if !errors.As(err, &ae) || !strings.Contains(err.Error(), "AF_UNIX path too long") {
			t.Errorf("SockSendTo: %v, want a *net.AddrError saying the path is too long", err)
		}
		return nil
	})
}
