//go:build linux

package aio

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/go-asyncio/asyncio"
)

// An abstract Unix socket named as asyncio names it, with a leading NUL,
// is the same socket as Go's "@" name (x/sys/unix binds both without a
// trailing NUL, so a CPython client reaches it). The server reports it as
// its clients see it (the peername, "@" as Go's getsockname spells it;
// CPython 3.13.0 reports b'\x00name' for both the server's
// getsockname and the client's peername, so they are equal there too;
// Server.Addr returned the name as given). A file named like an abstract
// socket's "@" name in the working directory is not that socket: the
// server leaves it alone (it removed it as a stale socket file).
func TestH4AbstractUnixNames(t *testing.T) {
	clean(t)
	dir := t.TempDir()
	t.Chdir(dir)
	name := fmt.Sprintf("h4-abstract-%d", os.Getpid())
	// A socket file called "@name" in the working directory.
	ln, err := net.Listen("unix", filepath.Join(dir, "@"+name))
	if err != nil {
		t.Fatal(err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	ln.Close()
	var log []string
	runNet(t, func(at *asyncio.T) error {
		for _, path := range []string{"\x00" + name, "@" + name} {
			srv, err := StartUnixServer(at, echoLines(""), path)
			if err != nil {
				return err
			}
			for _, dial := range []string{"\x00" + name, "@" + name} {
				r, w, err := OpenUnixConnection(at, dial)
				if err != nil {
					return err
				}
				w.Write([]byte("hi\n"))
				line, err := r.ReadLine(at)
				log = append(log, fmt.Sprintf("listen %q dial %q: %q %v addr=%q peer=%q same=%v", path[0], dial[0], line, err,
					srv.Addr().String(), PeerName(w).String(), srv.Addr().String() == PeerName(w).String()))
				w.Close()
				if err := w.WaitClosed(at); err != nil {
					return err
				}
			}
			srv.Close()
			if err := srv.WaitClosed(at); err != nil {
				return err
			}
		}
		return nil
	})
	if _, err := os.Stat(filepath.Join(dir, "@"+name)); err != nil {
		log = append(log, fmt.Sprintf("the file @%s: %v", name, err))
	}
	at := "@" + name
	expectLog(t, []string{
		fmt.Sprintf(`listen '\x00' dial '\x00': "hi\n" <nil> addr=%q peer=%q same=true`, at, at),
		fmt.Sprintf(`listen '\x00' dial '@': "hi\n" <nil> addr=%q peer=%q same=true`, at, at),
		fmt.Sprintf(`listen '@' dial '\x00': "hi\n" <nil> addr=%q peer=%q same=true`, at, at),
		fmt.Sprintf(`listen '@' dial '@': "hi\n" <nil> addr=%q peer=%q same=true`, at, at),
	}, log)
}
