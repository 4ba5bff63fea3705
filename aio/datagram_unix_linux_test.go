//go:build linux

package aio

import (
	"fmt"
	"net"
	"os"
	"testing"

	"github.com/go-asyncio/asyncio"
	"golang.org/x/sys/unix"
)

// Linux's abstract socket names on Unix datagram endpoints: a name given
// with a leading NUL (asyncio's) or "@" (Go's) is the same socket, and is
// reported with "@"; a sender's abstract name keeps the NULs inside it.
func TestUnixDatagramAbstract(t *testing.T) {
	clean(t)
	nameA := fmt.Sprintf("@aio-ug-a-%d", os.Getpid())
	nameB := fmt.Sprintf("@aio-ug-b\x00%d", os.Getpid()) // a NUL inside
	runNet(t, func(at *asyncio.T) error {
		var log []string
		a := newAddrRecorder(at, "a", &log)
		trA, _, err := CreateUnixDatagramEndpoint(at, func() DatagramProtocol { return a }, "\x00"+nameA[1:], "")
		if err != nil {
			return err
		}
		if got := trA.ExtraInfo("sockname"); !sameUnixAddr(got, nameA) {
			t.Errorf("sockname %#v, want %q", got, nameA)
		}
		b := newAddrRecorder(at, "b", &log)
		trB, _, err := CreateUnixDatagramEndpoint(at, func() DatagramProtocol { return b }, nameB, "\x00"+nameA[1:])
		if err != nil {
			return err
		}
		if got := trB.ExtraInfo("peername"); !sameUnixAddr(got, nameA) {
			t.Errorf("peername %#v, want %q", got, nameA)
		}
		// The peer in either spelling is the connected endpoint's peer.
		for _, to := range []string{nameA, "\x00" + nameA[1:]} {
			if err := trB.SendTo([]byte("to "+to[1:]), &net.UnixAddr{Name: to, Net: "unixgram"}); err != nil {
				t.Errorf("SendTo %q: %v", to, err)
			}
		}
		await(t, at, a.got)
		spinUntil(t, at, func() bool { return len(a.from) >= 2 })
		for _, from := range a.from {
			if !sameUnixAddr(from, nameB) {
				t.Errorf("sender %#v, want %q", from, nameB)
			}
		}
		if err := trA.SendTo([]byte("back"), a.from[0]); err != nil {
			return err
		}
		await(t, at, b.got)
		trA.Close()
		trB.Close()
		await(t, at, a.lost)
		await(t, at, b.lost)
		expectLog(t, []string{"a:made", "b:made", "a:got to " + nameA[1:], "a:got to " + nameA[1:], "b:got back", "a:lost <nil>", "b:lost <nil>"}, log)
		return nil
	})
}

// An abstract name has no file: a socket file of the same spelling in the
// working directory ("@name") is not removed as stale.
func TestUnixDatagramAbstractKeepsFile(t *testing.T) {
	clean(t)
	dir := sockDir(t)
	t.Chdir(dir)
	name := fmt.Sprintf("@aio-ug-f-%d", os.Getpid())
	fd := unixgramSocket(t, name) // binds the abstract name...
	unix.Close(fd)
	file := unixgramSocket(t, "")
	// ...and this the file "./@name", through a path x/sys/unix does not
	// take for abstract.
	if err := unix.Bind(file, &unix.SockaddrUnix{Name: "./" + name}); err != nil {
		t.Fatal(err)
	}
	unix.Close(file)
	runNet(t, func(at *asyncio.T) error {
		p := newDatagramRecorder(at, "p", new([]string))
		tr, _, err := CreateUnixDatagramEndpoint(at, func() DatagramProtocol { return p }, name, "")
		if err != nil {
			return err
		}
		tr.Close()
		await(t, at, p.lost)
		return nil
	})
	if fi, err := os.Stat(name); err != nil || fi.Mode()&os.ModeSocket == 0 {
		t.Errorf("the socket file %q was removed: %v", name, err)
	}
}
