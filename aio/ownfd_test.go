//go:build unix

package aio

import (
	"testing"

	"github.com/go-asyncio/asyncio"
	"golang.org/x/sys/unix"
)

// A transport closes its socket with a raw system call (rawClose) only
// while the package alone holds it: made by a dial or an accept, never
// handed out by ExtraInfo("socket"). A caller's socket (WithSocket), or
// one a caller was given, may have a dup or SO_LINGER, which makes close
// block: those are closed with the ordinary call, which the scheduler
// sees. Every one of them is closed in the end.
func TestTransportOwnsOnlyTheSocketsItMade(t *testing.T) {
	type seen struct {
		name  string
		owned bool
		fd    int
		ino   uint64
	}
	var got []seen
	note := func(name string, w *StreamWriter) {
		tr := w.Transport().(*socketTransport)
		var st unix.Stat_t
		unix.Fstat(tr.fd, &st)
		got = append(got, seen{name, tr.ownFD, tr.fd, uint64(st.Ino)})
	}
	runNet(t, func(at *asyncio.T) error {
		accepted := asyncio.NewFuture[struct{}](at.Loop())
		srv, err := StartServer(at, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
			if !accepted.Done() {
				note("accepted", w)
				accepted.SetResult(struct{}{})
			}
			if _, err := r.Read(t, -1); err != nil {
				return err
			}
			w.Close()
			return w.WaitClosed(t)
		}, "127.0.0.1", 0)
		if err != nil {
			return err
		}
		port := serverPort(srv)

		_, w, err := OpenConnection(at, "127.0.0.1", port)
		if err != nil {
			return err
		}
		note("dialled", w)
		if _, err := accepted.Await(at); err != nil {
			return err
		}
		w.ExtraInfo("socket")
		note("dialled, socket handed out", w)
		w.Close()
		if err := w.WaitClosed(at); err != nil {
			return err
		}

		fd, err := NewSocket("tcp4")
		if err != nil {
			return err
		}
		if err := SockConnect(at, fd, srv.Addrs()[0]); err != nil {
			unix.Close(fd)
			return err
		}
		_, w2, err := OpenConnection(at, "", 0, WithSocket(fd))
		if err != nil {
			return err
		}
		note("WithSocket", w2)
		w2.Close()
		if err := w2.WaitClosed(at); err != nil {
			return err
		}
		srv.Close()
		return srv.WaitClosed(at)
	})
	want := map[string]bool{"accepted": true, "dialled": true, "dialled, socket handed out": false, "WithSocket": false}
	if len(got) != len(want) {
		t.Fatalf("saw %v, want one of each of %v", got, want)
	}
	for _, s := range got {
		if s.owned != want[s.name] {
			t.Errorf("%s: ownFD %v, want %v", s.name, s.owned, want[s.name])
		}
		// The number may have been reused since (tests in parallel): the
		// socket is gone if the number now names another file.
		var st unix.Stat_t
		if err := unix.Fstat(s.fd, &st); err == nil && uint64(st.Ino) == s.ino {
			t.Errorf("%s: socket (fd %d) still open after the connection closed", s.name, s.fd)
		}
	}
}
