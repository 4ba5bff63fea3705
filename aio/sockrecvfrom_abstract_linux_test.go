package aio

import (
	"fmt"
	"net"
	"os"
	"testing"

	"github.com/go-asyncio/asyncio"
	"golang.org/x/sys/unix"
)

// SockRecvFrom on a Unix datagram socket gives a sender bound to an
// abstract name with a NUL inside its whole name, as asyncio's
// sock_recvfrom does (b'\x00name\x00x'); x/sys/unix's recvfrom cuts it at
// the inner NUL, which names another socket. An unnamed sender is nil
// (asyncio's None).
func TestSockRecvFromAbstractSender(t *testing.T) {
	clean(t)
	base := fmt.Sprintf("recvfrom-%d", os.Getpid())
	var log []string
	runVirtual(t, func(at *asyncio.T) error {
		r, err := NewSocket("unixgram")
		if err != nil {
			return err
		}
		defer unix.Close(r)
		if err := unix.Bind(r, &unix.SockaddrUnix{Name: "@" + base + "-in"}); err != nil {
			return err
		}
		for _, bind := range []string{"", "@" + base, "@" + base + "\x00x"} {
			s, err := NewSocket("unixgram")
			if err != nil {
				return err
			}
			if bind != "" {
				if err := unix.Bind(s, &unix.SockaddrUnix{Name: bind}); err != nil {
					unix.Close(s)
					return err
				}
			}
			err = unix.Sendto(s, []byte("x"), 0, &unix.SockaddrUnix{Name: "@" + base + "-in"})
			unix.Close(s)
			if err != nil {
				return err
			}
			_, from, err := SockRecvFrom(at, r, 8)
			if err != nil {
				return err
			}
			name := "<nil>"
			if ua, ok := from.(*net.UnixAddr); ok {
				name = fmt.Sprintf("%q %s", ua.Name, ua.Net)
			}
			log = append(log, name)
		}
		return nil
	})
	want := []string{"<nil>", fmt.Sprintf("%q unixgram", "@"+base), fmt.Sprintf("%q unixgram", "@"+base+"\x00x")}
	if fmt.Sprint(log) != fmt.Sprint(want) {
		t.Errorf("senders %q, want %q", log, want)
	}
}
