//go:build unix

package aio

import (
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/go-asyncio/asyncio"
)

// Servers across the loops of a LoopGroup (group_server.go).

// onGroup runs main on loop 0 of a new group of n loops (RunGroup) and
// closes the group.
func onGroup(t *testing.T, n int, main func(at *asyncio.T, g *asyncio.LoopGroup) error) {
	t.Helper()
	g := asyncio.NewLoopGroup(asyncio.WithLoops(n))
	_, err := asyncio.RunGroup(g, func(at *asyncio.T) (struct{}, error) { return struct{}{}, main(at, g) })
	if cerr := g.Close(); cerr != nil {
		t.Errorf("group Close: %v", cerr)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// loopIndexHere is the index of the group loop the caller runs on.
func loopIndexHere(g *asyncio.LoopGroup) int {
	for i, l := range g.Loops() {
		if l.OnLoopGoroutine() {
			return i
		}
	}
	return -1
}

// echoOn is a stream handler that echoes lines and answers which loop it
// runs on first.
func echoOn(g *asyncio.LoopGroup) func(*asyncio.T, *StreamReader, *StreamWriter) error {
	return func(st *asyncio.T, r *StreamReader, w *StreamWriter) error {
		if err := w.Write([]byte{byte('0' + g.Index(st.Loop()))}); err != nil {
			return err
		}
		for {
			line, err := r.ReadLine(st)
			if err != nil || len(line) == 0 {
				w.Close()
				return nil
			}
			if err := w.Write(line); err != nil {
				return err
			}
		}
	}
}

// dialAndEcho opens a connection (TCP port, or Unix path), reads the
// serving loop's index, and checks one echoed line.
func dialAndEcho(at *asyncio.T, port int, path string) (int, *StreamWriter, error) {
	var r *StreamReader
	var w *StreamWriter
	var err error
	if path != "" {
		r, w, err = OpenUnixConnection(at, path)
	} else {
		r, w, err = OpenConnection(at, "127.0.0.1", port)
	}
	if err != nil {
		return -1, nil, err
	}
	b, err := r.ReadExactly(at, 1)
	if err != nil {
		return -1, w, err
	}
	if err := w.Write([]byte("ping\n")); err != nil {
		return -1, w, err
	}
	line, err := r.ReadLine(at)
	if err != nil || string(line) != "ping\n" {
		return -1, w, errors.New("bad echo: " + string(line))
	}
	return int(b[0] - '0'), w, nil
}

// Reuse port: a listener on every loop, one port; connections are served
// on the loops' own servers; Close, CloseClients and WaitClosed act on
// every loop.
func TestGroupServer_ReusePortListensOnEveryLoop(t *testing.T) {
	clean(t)
	onGroup(t, 2, func(at *asyncio.T, g *asyncio.LoopGroup) error {
		gs, err := StartGroupServer(at, g, GroupReusePort, echoOn(g), "127.0.0.1", 0)
		if err != nil {
			return err
		}
		port := gs.Addr().(*net.TCPAddr).Port
		for i, s := range gs.Servers() {
			if s.Loop() != g.Loop(i) {
				t.Errorf("loop %d: server %v on the wrong loop", i, s)
			}
		}
		// One listening socket per loop, all on the port.
		fds := gs.Sockets()
		if len(fds) != 2 || len(gs.Addrs()) != 1 {
			t.Errorf("Sockets %v, Addrs %v: want a socket per loop on one address", fds, gs.Addrs())
		}
		for _, fd := range fds {
			if sa, err := unix.Getsockname(fd); err != nil || sa.(*unix.SockaddrInet4).Port != port {
				t.Errorf("socket %d: %v, %v; want one bound to port %d", fd, sa, err, port)
			}
		}
		var writers []*StreamWriter
		seen := map[int]int{}
		for k := 0; k < 16; k++ {
			i, w, err := dialAndEcho(at, port, "")
			if err != nil {
				return err
			}
			seen[i]++
			writers = append(writers, w)
		}
		counts, err := gs.ActiveConnections(at)
		if err != nil || counts[0]+counts[1] != 16 || counts[0] != seen[0] {
			t.Errorf("active connections %v (served by %v), %v", counts, seen, err)
		}
		if err := gs.Close(at); err != nil {
			return err
		}
		if gs.Addr() != nil || gs.Addrs() != nil || gs.Sockets() != nil {
			t.Errorf("after Close: Addr %v, Addrs %v, Sockets %v; want nothing", gs.Addr(), gs.Addrs(), gs.Sockets())
		}
		if err := gs.CloseClients(at); err != nil {
			return err
		}
		for _, w := range writers {
			w.Close()
		}
		return gs.WaitClosed(at)
	})
}

// Main/sub, round robin: the acceptor hands connections to the loops in
// turn (streams; CreateGroupServer shares the path).
func TestGroupServer_RoundRobinHandsConnectionsToEachLoopInTurn(t *testing.T) {
	clean(t)
	onGroup(t, 2, func(at *asyncio.T, g *asyncio.LoopGroup) error {
		gs, err := StartGroupServer(at, g, GroupRoundRobin, echoOn(g), "127.0.0.1", 0)
		if err != nil {
			return err
		}
		port := gs.Addr().(*net.TCPAddr).Port
		var order []int
		var writers []*StreamWriter
		for k := 0; k < 6; k++ {
			i, w, err := dialAndEcho(at, port, "")
			if err != nil {
				return err
			}
			order = append(order, i)
			writers = append(writers, w)
		}
		if got := order; got[0] != 0 || got[1] != 1 || got[2] != 0 || got[3] != 1 || got[4] != 0 || got[5] != 1 {
			t.Errorf("served by loops %v, want alternating from 0", order)
		}
		for _, w := range writers {
			w.Close()
		}
		if err := gs.Close(at); err != nil {
			return err
		}
		return gs.WaitClosed(at)
	})
}

// Main/sub, least connections, on a Unix socket (where SO_REUSEPORT does
// not apply): a new connection goes to the loop with the fewest.
func TestGroupServer_LeastConnsOnAUnixSocket(t *testing.T) {
	clean(t)
	path := filepath.Join(t.TempDir(), "s.sock")
	onGroup(t, 2, func(at *asyncio.T, g *asyncio.LoopGroup) error {
		gs, err := StartUnixGroupServer(at, g, GroupLeastConns, echoOn(g), path)
		if err != nil {
			return err
		}
		a, wa, err := dialAndEcho(at, 0, path)
		if err != nil {
			return err
		}
		b, wb, err := dialAndEcho(at, 0, path)
		if err != nil {
			return err
		}
		if a == b {
			t.Errorf("two connections on loop %d, want one per loop", a)
		}
		// Close the one on loop 0 and wait until loop 0 has let it go.
		first := wa
		if a != 0 {
			first = wb
		}
		first.Close()
		for {
			counts, err := gs.ActiveConnections(at)
			if err != nil {
				return err
			}
			if counts[0] == 0 {
				break
			}
			if err := asyncio.Sleep(at, 0); err != nil {
				return err
			}
		}
		c, wc, err := dialAndEcho(at, 0, path)
		if err != nil {
			return err
		}
		if c != 0 {
			t.Errorf("third connection on loop %d, want 0 (the least loaded)", c)
		}
		if err := gs.Close(at); err != nil {
			return err
		}
		if err := gs.CloseClients(at); err != nil {
			return err
		}
		wa.Close()
		wb.Close()
		wc.Close()
		return gs.WaitClosed(at)
	})
}

// Least connections with ties: short connections, each let go before the
// next arrives, take the loops in turn instead of all going to loop 0.
func TestGroupServer_LeastConnsBreaksTiesInTurn(t *testing.T) {
	clean(t)
	path := filepath.Join(t.TempDir(), "s.sock")
	onGroup(t, 2, func(at *asyncio.T, g *asyncio.LoopGroup) error {
		gs, err := StartUnixGroupServer(at, g, GroupLeastConns, echoOn(g), path)
		if err != nil {
			return err
		}
		var loops []int
		for range 4 {
			i, w, err := dialAndEcho(at, 0, path)
			if err != nil {
				return err
			}
			loops = append(loops, i)
			w.Close()
			for { // until its loop has let it go: every count is 0 again
				counts, err := gs.ActiveConnections(at)
				if err != nil {
					return err
				}
				if counts[0]+counts[1] == 0 {
					break
				}
				if err := asyncio.Sleep(at, 0); err != nil {
					return err
				}
			}
		}
		if fmt.Sprint(loops) != "[0 1 0 1]" {
			t.Errorf("four short connections went to loops %v, want [0 1 0 1]", loops)
		}
		if err := gs.Close(at); err != nil {
			return err
		}
		return gs.WaitClosed(at)
	})
}

// A listener that cannot bind: a clear error naming the loop, and
// nothing left open.
func TestGroupServer_BindFailureNamesTheLoopAndLeaksNothing(t *testing.T) {
	clean(t)
	busy, err := net.Listen("tcp4", "127.0.0.1:0") // without SO_REUSEPORT
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	port := busy.Addr().(*net.TCPAddr).Port
	onGroup(t, 2, func(at *asyncio.T, g *asyncio.LoopGroup) error {
		_, err := CreateGroupServer(at, g, GroupReusePort, func() Protocol { return nil }, "127.0.0.1", port)
		if err == nil || !strings.Contains(err.Error(), "the listener of loop 0") || !strings.Contains(err.Error(), "bind") {
			t.Errorf("got %v, want a bind error naming loop 0", err)
		}
		_, err = CreateUnixGroupServer(at, g, GroupReusePort, func() Protocol { return nil }, "x")
		if !errors.Is(err, asyncio.ErrValue) {
			t.Errorf("reuse port on a Unix socket: %v", err)
		}
		_, err = CreateGroupServer(at, g, GroupMode(9), func() Protocol { return nil }, "127.0.0.1", 0)
		if !errors.Is(err, asyncio.ErrValue) {
			t.Errorf("unknown mode: %v", err)
		}
		_, err = StartGroupServer(at, g, GroupRoundRobin, nil, "127.0.0.1", 0)
		if err == nil || !errors.Is(err, asyncio.ErrValue) || !strings.Contains(err.Error(), "StartGroupServer: nil client callback") {
			t.Errorf("StartGroupServer nil callback: %v", err)
		}
		_, err = StartUnixGroupServer(at, g, GroupRoundRobin, nil, "x")
		if err == nil || !errors.Is(err, asyncio.ErrValue) || !strings.Contains(err.Error(), "StartUnixGroupServer: nil client callback") {
			t.Errorf("StartUnixGroupServer nil callback: %v", err)
		}
		return nil
	})
}

// A protocol factory that panics on one worker loop: that connection is
// closed and reported on that loop, and the other loops keep serving.
func TestGroupServer_FactoryPanicOnAWorkerLoopIsContained(t *testing.T) {
	clean(t)
	reports := make(chan string, 4)
	onGroup(t, 2, func(at *asyncio.T, g *asyncio.LoopGroup) error {
		g.Loop(1).SetExceptionHandler(func(_ *asyncio.Loop, c asyncio.ExceptionContext) { reports <- c.Message })
		gs, err := CreateGroupServer(at, g, GroupRoundRobin, func() Protocol {
			if loopIndexHere(g) == 1 {
				panic("factory broke on loop 1")
			}
			return &echoProto{}
		}, "127.0.0.1", 0)
		if err != nil {
			return err
		}
		port := gs.Addr().(*net.TCPAddr).Port
		for k := 0; k < 2; k++ { // loop 0, then loop 1 (which fails)
			r, w, err := OpenConnection(at, "127.0.0.1", port)
			if err != nil {
				return err
			}
			_ = w.Write([]byte("hi\n"))
			line, err := r.ReadLine(at)
			switch k {
			case 0:
				if string(line) != "hi\n" || err != nil {
					t.Errorf("loop 0: %q, %v", line, err)
				}
			case 1:
				if len(line) != 0 && err == nil {
					t.Errorf("loop 1 answered %q", line)
				}
			}
			w.Close()
		}
		// Loop 0 still serves.
		r, w, err := OpenConnection(at, "127.0.0.1", port)
		if err != nil {
			return err
		}
		_ = w.Write([]byte("again\n"))
		if line, err := r.ReadLine(at); string(line) != "again\n" || err != nil {
			t.Errorf("after the panic: %q, %v", line, err)
		}
		w.Close()
		if err := gs.Close(at); err != nil {
			return err
		}
		if err := gs.CloseClients(at); err != nil {
			return err
		}
		return gs.WaitClosed(at)
	})
	if got := <-reports; got != "Error on transport creation for incoming connection" {
		t.Errorf("loop 1 reported %q", got)
	}
}

// echoProto writes back what it receives.
type echoProto struct{ tr Transport }

func (p *echoProto) ConnectionMade(tr Transport) { p.tr = tr }
func (p *echoProto) DataReceived(d []byte)       { _ = p.tr.Write(d) }
func (p *echoProto) EOFReceived() bool           { return false }
func (p *echoProto) ConnectionLost(error)        {}

// A group server takes the options its server call takes (WithStreamLimit for
// the stream form) and refuses the others with an error naming the group
// call, before any listener exists.
func TestGroupServer_OptionsCheckedAsItsServerCall(t *testing.T) {
	clean(t)
	onGroup(t, 2, func(at *asyncio.T, g *asyncio.LoopGroup) error {
		_, err := StartGroupServer(at, g, GroupReusePort, echoOn(g), "127.0.0.1", 0, WithStdin(Pipe))
		var ve *asyncio.ValueError
		if !errors.As(err, &ve) || !strings.Contains(err.Error(), "StartGroupServer does not take the option WithStdin") {
			t.Errorf("StartGroupServer with WithStdin: %v, want a *ValueError naming the call and option", err)
		}
		_, err = CreateGroupServer(at, g, GroupRoundRobin, func() Protocol { return &chunkProtocol{} }, "127.0.0.1", 0, WithStreamLimit(1<<10))
		if !errors.As(err, &ve) || !strings.Contains(err.Error(), "CreateGroupServer does not take the option WithStreamLimit") {
			t.Errorf("CreateGroupServer with WithStreamLimit: %v, want a *ValueError naming the call and option", err)
		}
		gs, err := StartGroupServer(at, g, GroupRoundRobin, echoOn(g), "127.0.0.1", 0, WithStreamLimit(1<<10))
		if err != nil {
			return fmt.Errorf("StartGroupServer with WithStreamLimit: %w", err)
		}
		if err := gs.Close(at); err != nil {
			return err
		}
		return gs.WaitClosed(at)
	})
}
