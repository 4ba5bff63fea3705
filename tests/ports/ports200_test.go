//go:build unix

package ports_test

// Ports p200 onward (h41): UDP on loop.sock_* and a refused connected
// endpoint, Unix datagram endpoints and a Unix stream server, a server
// rebinding its port (reuse_address), a TLS echo server with a wrong-host
// client, file work in to_thread with a log queue and rotation, a Unix
// datagram client whose server goes away, a connected UDP endpoint,
// sock_* on Unix datagram sockets, a TLS handshake timeout, a TLS client
// against a plain server and create_unix_server's path cases. Same
// conventions as ports_test.go and ports111_test.go: real sockets and
// files as the Python programs use, the TLS ones (p203, p208, p209) on
// the simulated network as p119.

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-asyncio/asyncio"
	"github.com/go-asyncio/asyncio/aio"
)

// ---------------------------------------------------------------------------
// p200_udp_sock_api.py

type refusedProto struct {
	p    *probe
	done *asyncio.Future[struct{}]
}

func (r *refusedProto) ConnectionMade(tr aio.DatagramTransport) {
	r.p.log("endpoint: connected, peer is remote %s", pyBool(tr.ExtraInfo("peername") != nil))
}

func (r *refusedProto) DatagramReceived(data []byte, _ net.Addr) {
	r.p.log("endpoint: got %s", pbytes(data))
}

func (r *refusedProto) ErrorReceived(err error) {
	name := fmt.Sprintf("%v", err)
	if errors.Is(err, syscall.ECONNREFUSED) {
		name = "ConnectionRefusedError"
	}
	r.p.log("endpoint: error_received %s", name)
	if !r.done.Done() {
		r.done.SetResult(struct{}{})
	}
}

func (r *refusedProto) ConnectionLost(err error) {
	r.p.log("endpoint: connection_lost %s", pyNone(err))
}

func pyBool(b bool) string {
	if b {
		return "True"
	}
	return "False"
}

func pyNone(err error) string {
	if err == nil {
		return "None"
	}
	return err.Error()
}

// boundUDP is socket(AF_INET, SOCK_DGRAM) bound to 127.0.0.1 port 0,
// non-blocking.
func boundUDP() (fd, port int, err error) {
	fd, err = aio.NewSocket("udp4")
	if err != nil {
		return -1, 0, err
	}
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		syscall.Close(fd)
		return -1, 0, err
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		syscall.Close(fd)
		return -1, 0, err
	}
	return fd, sa.(*syscall.SockaddrInet4).Port, nil
}

func TestPortUDPSockAPI(t *testing.T) {
	runPort(t, cpythonTrace("p200_udp_sock_api"), func(p *probe, tk *asyncio.T) error {
		p.restart()
		srv, port, err := boundUDP()
		if err != nil {
			return err
		}
		srvAddr := &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: port}
		server := asyncio.CreateTask(tk, func(t *asyncio.T) (int, error) {
			n := 0
			for {
				data, addr, err := aio.SockRecvFrom(t, srv, 100)
				if err != nil {
					return n, err
				}
				n++
				p.log("server: got %s from 127.0.0.1: %s", pbytes(data), pyBool(addr.(*net.UDPAddr).IP.Equal(net.IPv4(127, 0, 0, 1))))
				if string(data) == "stop" {
					if _, err := aio.SockSendTo(t, srv, []byte("bye"), addr); err != nil {
						return n, err
					}
					return n, nil
				}
				if err := asyncio.Sleep(t, time.Duration(n)*100*ms); err != nil {
					return n, err
				}
				if _, err := aio.SockSendTo(t, srv, bytes.Repeat(bytes.ToUpper(data), 2), addr); err != nil {
					return n, err
				}
			}
		})
		cli, _, err := boundUDP()
		if err != nil {
			return err
		}
		sent, err := aio.SockSendTo(tk, cli, []byte("ping"), srvAddr)
		if err != nil {
			return err
		}
		p.log("client: sent %d bytes", sent)
		data, addr, err := aio.SockRecvFrom(tk, cli, 100)
		if err != nil {
			return err
		}
		p.log("client: reply %s from server: %s", pbytes(data), pyBool(addr.(*net.UDPAddr).Port == port))
		if _, err := aio.SockSendTo(tk, cli, []byte("abcdef"), srvAddr); err != nil {
			return err
		}
		buf := make([]byte, 5)
		n, _, err := aio.SockRecvFromInto(tk, cli, buf)
		if err != nil {
			return err
		}
		p.log("client: recvfrom_into %d %s", n, pbytes(buf[:n]))
		if _, err := asyncio.WaitForFunc(tk, 200*ms, func(t *asyncio.T) ([]byte, error) {
			b, _, err := aio.SockRecvFrom(t, cli, 100)
			return b, err
		}); errors.Is(err, asyncio.ErrTimeout) {
			p.log("client: nothing more yet")
		} else {
			return fmt.Errorf("client's third read: %v", err)
		}
		if _, err := aio.SockSendTo(tk, cli, []byte("stop"), srvAddr); err != nil {
			return err
		}
		data, _, err = aio.SockRecvFrom(tk, cli, 100)
		if err != nil {
			return err
		}
		p.log("client: then %s", pbytes(data))
		handled, err := server.Await(tk)
		if err != nil {
			return err
		}
		p.log("server handled %d", handled)
		syscall.Close(cli)
		syscall.Close(srv)

		gone, gonePort, err := boundUDP()
		if err != nil {
			return err
		}
		syscall.Close(gone)
		done := asyncio.NewFuture[struct{}](tk)
		tr, _, err := aio.CreateDatagramEndpoint(tk, func() aio.DatagramProtocol { return &refusedProto{p, done} },
			nil, &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: gonePort})
		if err != nil {
			return err
		}
		if err := tr.SendTo([]byte("anyone?"), nil); err != nil {
			return err
		}
		if _, err := asyncio.WaitFor(tk, 1000*ms, done); err != nil {
			return err
		}
		p.log("after the refusal, closing: %s", pyBool(tr.IsClosing()))
		if err := asyncio.Sleep(tk, 200*ms); err != nil {
			return err
		}
		if err := tr.SendTo([]byte("still?"), nil); err != nil {
			return err
		}
		if err := asyncio.Sleep(tk, 100*ms); err != nil {
			return err
		}
		tr.Close()
		if err := asyncio.Sleep(tk, 0); err != nil {
			return err
		}
		p.log("done")
		return nil
	})
}

// ---------------------------------------------------------------------------
// p201_unix_dgram_and_stream.py

type syslogProto struct {
	p  *probe
	tr aio.DatagramTransport
}

func (s *syslogProto) ConnectionMade(tr aio.DatagramTransport) { s.tr = tr }
func (s *syslogProto) DatagramReceived(data []byte, addr net.Addr) {
	who := "None"
	if addr != nil {
		who = filepath.Base(addr.(*net.UnixAddr).Name)
	}
	s.p.log("syslog: got %s from %s", pbytes(data), who)
	if addr != nil {
		s.tr.SendTo(append([]byte("ack "), data...), addr)
	}
}
func (s *syslogProto) ErrorReceived(error)  {}
func (s *syslogProto) ConnectionLost(error) {}

type ackClientProto struct {
	p    *probe
	acks *asyncio.Queue[string]
}

func (c *ackClientProto) ConnectionMade(aio.DatagramTransport) {}
func (c *ackClientProto) DatagramReceived(data []byte, addr net.Addr) {
	c.acks.PutNowait(fmt.Sprintf("(%s, '%s')", pbytes(data), filepath.Base(addr.(*net.UnixAddr).Name)))
}
func (c *ackClientProto) ErrorReceived(error) {}
func (c *ackClientProto) ConnectionLost(err error) {
	c.p.log("client endpoint lost %s", pyNone(err))
}

type nopDatagramProto struct{}

func (nopDatagramProto) ConnectionMade(aio.DatagramTransport) {}
func (nopDatagramProto) DatagramReceived([]byte, net.Addr)    {}
func (nopDatagramProto) ErrorReceived(error)                  {}
func (nopDatagramProto) ConnectionLost(error)                 {}

func pyStrList(xs []string) string {
	q := make([]string, len(xs))
	for i, x := range xs {
		q[i] = "'" + x + "'"
	}
	return "[" + strings.Join(q, ", ") + "]"
}

func TestPortUnixDgramAndStream(t *testing.T) {
	d := t.TempDir()
	runPort(t, cpythonTrace("p201_unix_dgram_and_stream"), func(p *probe, tk *asyncio.T) error {
		p.restart()
		spath := filepath.Join(d, "syslog.sock")
		cpath := filepath.Join(d, "client.sock")
		stale, err := aio.NewSocket("unixgram")
		if err != nil {
			return err
		}
		if err := syscall.Bind(stale, &syscall.SockaddrUnix{Name: spath}); err != nil {
			return err
		}
		syscall.Close(stale)
		_, err = os.Stat(spath)
		p.log("stale file there: %s", pyBool(err == nil))
		st, _, err := aio.CreateUnixDatagramEndpoint(tk, func() aio.DatagramProtocol { return &syslogProto{p: p} }, spath, "")
		if err != nil {
			return err
		}
		p.log("syslog bound at %s", filepath.Base(st.ExtraInfo("sockname").(*net.UnixAddr).Name))
		ct, cp, err := aio.CreateUnixDatagramEndpoint(tk, func() aio.DatagramProtocol {
			return &ackClientProto{p, asyncio.NewQueue[string](0)}
		}, cpath, spath)
		if err != nil {
			return err
		}
		acks := cp.(*ackClientProto).acks
		if err := ct.SendTo([]byte("hello"), nil); err != nil {
			return err
		}
		ack, err := acks.Get(tk)
		if err != nil {
			return err
		}
		p.log("client: ack %s", ack)
		anon, _, err := aio.CreateUnixDatagramEndpoint(tk, func() aio.DatagramProtocol { return nopDatagramProto{} }, "", spath)
		if err != nil {
			return err
		}
		if err := anon.SendTo([]byte("anonymous"), nil); err != nil {
			return err
		}
		if err := asyncio.Sleep(tk, 100*ms); err != nil {
			return err
		}
		if err := ct.SendTo([]byte("again"), nil); err != nil {
			return err
		}
		if ack, err = acks.Get(tk); err != nil {
			return err
		}
		p.log("client: ack %s", ack)
		anon.Close()
		ct.Close()
		st.Close()
		if err := asyncio.Sleep(tk, 0); err != nil {
			return err
		}
		names := func() []string {
			ents, _ := os.ReadDir(d)
			var ns []string
			for _, e := range ents {
				ns = append(ns, e.Name())
			}
			sort.Strings(ns)
			return ns
		}
		p.log("datagram files left: %s", pyStrList(names()))

		upath := filepath.Join(d, "ctl.sock")
		conns := 0
		handle := func(t *asyncio.T, r *aio.StreamReader, w *aio.StreamWriter) error {
			conns++
			line, err := r.ReadLine(t)
			if err != nil {
				return err
			}
			if err := asyncio.Sleep(t, time.Duration(conns)*100*ms); err != nil {
				return err
			}
			if err := w.Write(bytes.ToUpper(line)); err != nil {
				return err
			}
			if err := w.Drain(t); err != nil {
				return err
			}
			w.Close()
			return w.WaitClosed(t)
		}
		server, err := aio.StartUnixServer(tk, handle, upath)
		if err != nil {
			return err
		}
		_, err = os.Stat(upath)
		p.log("server listening, file there: %s", pyBool(err == nil))
		for _, cmd := range []string{"status\n", "reload\n"} {
			r, w, err := aio.OpenUnixConnection(tk, upath)
			if err != nil {
				return err
			}
			if err := w.Write([]byte(cmd)); err != nil {
				return err
			}
			line, err := r.ReadLine(tk)
			if err != nil {
				return err
			}
			rest, err := r.Read(tk, -1)
			if err != nil {
				return err
			}
			p.log("client got %s then %s", pbytes(line), pbytes(rest))
			w.Close()
			if err := w.WaitClosed(tk); err != nil {
				return err
			}
		}
		server.Close()
		if err := server.WaitClosed(tk); err != nil {
			return err
		}
		_, err = os.Stat(upath)
		p.log("server closed, file there: %s", pyBool(err == nil))
		if _, _, err := aio.OpenUnixConnection(tk, upath); errors.Is(err, fs.ErrNotExist) {
			p.log("connect after close: FileNotFoundError")
		} else {
			return fmt.Errorf("connect after close: %v", err)
		}
		for _, f := range names() {
			if err := os.Remove(filepath.Join(d, f)); err != nil {
				return err
			}
		}
		p.log("done")
		return nil
	})
}

// ---------------------------------------------------------------------------
// p202_reuse_address.py

// The bind failure's text is Go's, not OSError's: the same words and
// errno, but no "[Errno 98]" prefix, the address as host:port and the
// errno wrapped as os.SyscallError ("bind: ..."). Not in README's
// "Where Go differs" yet; see the h41 report.
var wantReuseAddressGo = goism(cpythonTrace("p202_reuse_address"),
	[2]string{"0.0 message: [Errno 98] error while attempting to bind on address ('127.0.0.1', PORT): [errno 98] address already in use",
		"0.0 message: error while attempting to bind on address 127.0.0.1:PORT: bind: address already in use"})

func TestPortReuseAddress(t *testing.T) {
	runPort(t, wantReuseAddressGo, func(p *probe, tk *asyncio.T) error {
		p.restart()
		var served []string
		handle := func(t *asyncio.T, r *aio.StreamReader, w *aio.StreamWriter) error {
			line, err := r.ReadLine(t)
			if err != nil {
				return err
			}
			name := strings.TrimSpace(string(line))
			served = append(served, name)
			if err := w.Write([]byte("hi " + name + "\n")); err != nil {
				return err
			}
			if err := w.Drain(t); err != nil {
				return err
			}
			w.Close()
			return w.WaitClosed(t)
		}
		// reuse_address=True is aio's default on Unix, as asyncio's.
		s1, err := aio.StartServer(tk, handle, "127.0.0.1", 0)
		if err != nil {
			return err
		}
		port := s1.Addr().(*net.TCPAddr).Port
		p.log("first server up")
		r, w, err := aio.OpenConnection(tk, "127.0.0.1", port)
		if err != nil {
			return err
		}
		if err := w.Write([]byte("ann\n")); err != nil {
			return err
		}
		line, err := r.ReadLine(tk)
		if err != nil {
			return err
		}
		rest, err := r.Read(tk, -1)
		if err != nil {
			return err
		}
		p.log("client got %s then %s", pbytes(line), pbytes(rest))
		w.Close()
		if err := w.WaitClosed(tk); err != nil {
			return err
		}

		if _, err := aio.StartServer(tk, handle, "127.0.0.1", port); err == nil {
			return fmt.Errorf("second server on port %d started", port)
		} else {
			var errno syscall.Errno
			if !errors.As(err, &errno) || errno != syscall.EADDRINUSE {
				return fmt.Errorf("second server: %v (%T)", err, err)
			}
			p.log("second server: OSError EADDRINUSE")
			p.log("message: %s", strings.ReplaceAll(err.Error(), strconv.Itoa(port), "PORT"))
		}

		if err := asyncio.Sleep(tk, 100*ms); err != nil {
			return err
		}
		s1.Close()
		if err := s1.WaitClosed(tk); err != nil {
			return err
		}
		p.log("first server closed")
		s2, err := aio.StartServer(tk, handle, "127.0.0.1", port)
		if err != nil {
			return err
		}
		p.log("restarted on the same port: %s", pyBool(s2.Addr().(*net.TCPAddr).Port == port))
		r, w, err = aio.OpenConnection(tk, "127.0.0.1", port)
		if err != nil {
			return err
		}
		if err := w.Write([]byte("bob\n")); err != nil {
			return err
		}
		if line, err = r.ReadLine(tk); err != nil {
			return err
		}
		p.log("client got %s", pbytes(line))
		w.Close()
		if err := w.WaitClosed(tk); err != nil {
			return err
		}
		s2.Close()
		if err := s2.WaitClosed(tk); err != nil {
			return err
		}
		p.log("served %s", pyStrList(served))
		return nil
	})
}

// ---------------------------------------------------------------------------
// p203_tls_echo_hostname.py

func TestPortTLSEchoHostname(t *testing.T) {
	serverCfg, clientCfg, _ := portTLSConfigs(t)
	runPort(t, cpythonTrace("p203_tls_echo_hostname"), func(p *probe, tk *asyncio.T) error {
		sim := simLocal(tk)
		var reported []string
		tk.Loop().SetExceptionHandler(func(_ *asyncio.Loop, ctx asyncio.ExceptionContext) {
			reported = append(reported, ctx.Message)
		})
		var handled []string
		echo := func(t *asyncio.T, r *aio.StreamReader, w *aio.StreamWriter) error {
			handled = append(handled, pyBool(w.ExtraInfo("ssl_object") != nil))
			lines := 0
			for {
				line, err := r.ReadLine(t)
				if err != nil {
					return err
				}
				if len(line) == 0 {
					break
				}
				lines++
				if err := w.Write(append([]byte("echo: "), line...)); err != nil {
					return err
				}
				if err := w.Drain(t); err != nil {
					return err
				}
			}
			p.log("server: client EOF after %d lines", lines)
			w.Close()
			return w.WaitClosed(t)
		}
		server, err := aio.StartServer(tk, echo, "127.0.0.1", 0, sim, aio.WithTLS(serverCfg))
		if err != nil {
			return err
		}
		port := server.Addr().(*net.TCPAddr).Port
		wrongCfg := clientCfg.Clone()
		wrongCfg.ServerName = "wrong.example"
		_, _, err = aio.OpenConnection(tk, "127.0.0.1", port, sim, aio.WithTLS(wrongCfg))
		var hostErr x509.HostnameError
		if !errors.As(err, &hostErr) {
			return fmt.Errorf("wrong-host client: %v (%T)", err, err)
		}
		p.restart()
		p.log("wrong-host client: SSLCertVerificationError Hostname mismatch")
		if err := asyncio.Sleep(tk, 100*ms); err != nil {
			return err
		}
		p.log("handler calls %d reported %s", len(handled), pyStrList(reported))

		r, w, err := aio.OpenConnection(tk, "127.0.0.1", port, sim, aio.WithTLS(clientCfg))
		if err != nil {
			return err
		}
		p.restart()
		p.log("client: connected over TLS %s", pyBool(w.ExtraInfo("ssl_object") != nil))
		for i, word := range []string{"alpha", "beta", "gamma"} {
			if err := asyncio.Sleep(tk, time.Duration(i+1)*100*ms); err != nil {
				return err
			}
			if err := w.Write([]byte(word + "\n")); err != nil {
				return err
			}
			line, err := r.ReadLine(tk)
			if err != nil {
				return err
			}
			p.log("client: %s", pbytes(line))
		}
		p.log("client: can_write_eof %s", pyBool(w.CanWriteEOF()))
		w.Close()
		if err := w.WaitClosed(tk); err != nil {
			return err
		}
		if err := asyncio.Sleep(tk, 100*ms); err != nil {
			return err
		}
		p.restart()
		p.log("client closed; handler calls %d over TLS [%s] reported %s", len(handled), strings.Join(handled, ", "), pyStrList(reported))
		server.Close()
		if err := server.WaitClosed(tk); err != nil {
			return err
		}
		p.log("done")
		return nil
	})
}

// ---------------------------------------------------------------------------
// p204_thread_file_copy_log.py

const p204Chunk, p204MaxLog = 4096, 30

// p204CopyFile is copy_file; -1 on progress is the program's None.
func p204CopyFile(src, dst string, loop *asyncio.Loop, progress *asyncio.Queue[int]) (int, error) {
	fi, err := os.Open(src)
	if err != nil {
		return 0, err
	}
	defer fi.Close()
	fo, err := os.Create(dst)
	if err != nil {
		return 0, err
	}
	defer fo.Close()
	total := 0
	buf := make([]byte, p204Chunk)
	for {
		n, err := fi.Read(buf)
		if n > 0 {
			if _, err := fo.Write(buf[:n]); err != nil {
				return total, err
			}
			total += n
			at := total
			loop.CallSoonThreadsafe(func() { progress.PutNowait(at) })
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return total, err
		}
	}
	loop.CallSoonThreadsafe(func() { progress.PutNowait(-1) })
	return total, nil
}

func p204AppendRotating(path, line string) (bool, error) {
	rotated := false
	if st, err := os.Stat(path); err == nil && st.Size()+int64(len(line)) > p204MaxLog {
		if _, err := os.Stat(path + ".1"); err == nil {
			if err := os.Rename(path+".1", path+".2"); err != nil {
				return false, err
			}
		}
		if err := os.Rename(path, path+".1"); err != nil {
			return false, err
		}
		rotated = true
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return rotated, err
	}
	defer f.Close()
	_, err = f.WriteString(line)
	return rotated, err
}

func TestPortThreadFileCopyLog(t *testing.T) {
	d := t.TempDir()
	runPort(t, cpythonTrace("p204_thread_file_copy_log"), func(p *probe, tk *asyncio.T) error {
		loop := tk.Loop()
		p.restart()
		src := filepath.Join(d, "data.bin")
		var data []byte
		for i := 0; i < 256; i++ {
			data = append(data, byte(i))
		}
		data = bytes.Repeat(data, 40)
		//asynciovet:ignore blockingcall the program writes its source file on the loop too (open/write in main)
		if err := os.WriteFile(src, data, 0o644); err != nil {
			return err
		}
		progress := asyncio.NewQueue[int](0)
		records := asyncio.NewQueue[*string](0)
		logpath := filepath.Join(d, "app.log")

		reporter := func(t *asyncio.T) error {
			var seen []string
			for {
				n, err := progress.Get(t)
				if err != nil {
					return err
				}
				if n == -1 {
					break
				}
				seen = append(seen, strconv.Itoa(n))
			}
			p.log("progress [%s]", strings.Join(seen, ", "))
			return nil
		}
		writer := func(t *asyncio.T) (int, error) {
			rotations := 0
			for {
				rec, err := records.Get(t)
				if err != nil {
					return rotations, err
				}
				if rec == nil {
					break
				}
				rotated, err := asyncio.ToThread(t, func(context.Context) (bool, error) { return p204AppendRotating(logpath, *rec+"\n") })
				if err != nil {
					return rotations, err
				}
				if rotated {
					rotations++
					p.log("rotated before '%s'", *rec)
				}
			}
			return rotations, nil
		}
		w := asyncio.CreateTask(tk, writer)
		worker := func(name string, n int, delay time.Duration) func(*asyncio.T) error {
			return func(t *asyncio.T) error {
				for i := 0; i < n; i++ {
					if err := asyncio.Sleep(t, delay); err != nil {
						return err
					}
					rec := fmt.Sprintf("%s step %d", name, i)
					records.PutNowait(&rec)
				}
				return nil
			}
		}
		r := asyncio.CreateTaskErr(tk, reporter)
		copied, err := asyncio.ToThread(tk, func(context.Context) (int, error) {
			return p204CopyFile(src, filepath.Join(d, "copy.bin"), loop, progress)
		})
		if err != nil {
			return err
		}
		if _, err := r.Await(tk); err != nil {
			return err
		}
		//asynciovet:ignore blockingcall the program reads the copy back on the loop too (open/read in main)
		got, err := os.ReadFile(filepath.Join(d, "copy.bin"))
		if err != nil {
			return err
		}
		p.log("copied %d bytes, same: %s", copied, pyBool(bytes.Equal(got, data)))
		_, err = asyncio.ToThread(tk, func(context.Context) (int, error) {
			return p204CopyFile(filepath.Join(d, "missing.bin"), filepath.Join(d, "x"), loop, progress)
		})
		var pathErr *fs.PathError
		if errors.Is(err, fs.ErrNotExist) && errors.As(err, &pathErr) {
			p.log("missing source: FileNotFoundError %s", filepath.Base(pathErr.Path))
		} else {
			return fmt.Errorf("missing source: %v", err)
		}

		workers := []*asyncio.Task[struct{}]{
			asyncio.CreateTaskErr(tk, worker("alpha", 3, 100*ms)),
			asyncio.CreateTaskErr(tk, worker("beta", 2, 210*ms)),
		}
		if _, err := asyncio.Gather(tk, asyncio.Awaitables(workers)...).Await(tk); err != nil {
			return err
		}
		records.PutNowait(nil)
		rotations, err := w.Await(tk)
		if err != nil {
			return err
		}
		p.log("rotations %d", rotations)
		//asynciovet:ignore blockingcall the program lists the directory on the loop too (os.listdir in main)
		ents, err := os.ReadDir(d)
		if err != nil {
			return err
		}
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		sort.Strings(names)
		for _, name := range names {
			if strings.HasPrefix(name, "app.log") {
				//asynciovet:ignore blockingcall the program reads each log file on the loop too (open/read in main)
				b, err := os.ReadFile(filepath.Join(d, name))
				if err != nil {
					return err
				}
				p.log("%s %s", name, pyStrList(strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")))
			}
		}
		return nil
	})
}

// ---------------------------------------------------------------------------
// p205_unix_dgram_peer_gone.py

// pyOSError is type(exc).__name__ and errno.errorcode[exc.errno] for the
// errnos the program meets.
func pyOSError(err error) string {
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		return fmt.Sprintf("%v (%T)", err, err)
	}
	switch errno {
	case syscall.ECONNREFUSED:
		return "ConnectionRefusedError ECONNREFUSED"
	case syscall.ENOTCONN:
		return "OSError ENOTCONN"
	case syscall.ENOENT:
		return "FileNotFoundError ENOENT"
	}
	return fmt.Sprintf("OSError %d", int(errno))
}

type reverseServerProto struct {
	p  *probe
	tr aio.DatagramTransport
}

func (s *reverseServerProto) ConnectionMade(tr aio.DatagramTransport) { s.tr = tr }
func (s *reverseServerProto) DatagramReceived(data []byte, addr net.Addr) {
	s.p.log("server: got %s", pbytes(data))
	rev := slices.Clone(data)
	slices.Reverse(rev)
	s.tr.SendTo(rev, addr)
}
func (s *reverseServerProto) ErrorReceived(error) {}
func (s *reverseServerProto) ConnectionLost(err error) {
	s.p.log("server: lost %s", pyNone(err))
}

type goneClientProto struct {
	p       *probe
	replies *asyncio.Queue[[]byte]
}

func (c *goneClientProto) ConnectionMade(aio.DatagramTransport) {}
func (c *goneClientProto) DatagramReceived(data []byte, _ net.Addr) {
	c.replies.PutNowait(data)
}
func (c *goneClientProto) ErrorReceived(err error) {
	c.p.log("client: error_received %s", pyOSError(err))
}
func (c *goneClientProto) ConnectionLost(err error) {
	c.p.log("client: lost %s", pyNone(err))
}

func TestPortUnixDgramPeerGone(t *testing.T) {
	d := t.TempDir()
	runPort(t, cpythonTrace("p205_unix_dgram_peer_gone"), func(p *probe, tk *asyncio.T) error {
		p.restart()
		spath, cpath := filepath.Join(d, "srv"), filepath.Join(d, "cli")
		st, _, err := aio.CreateUnixDatagramEndpoint(tk, func() aio.DatagramProtocol { return &reverseServerProto{p: p} }, spath, "")
		if err != nil {
			return err
		}
		ct, cpr, err := aio.CreateUnixDatagramEndpoint(tk, func() aio.DatagramProtocol {
			return &goneClientProto{p, asyncio.NewQueue[[]byte](0)}
		}, cpath, spath)
		if err != nil {
			return err
		}
		replies := cpr.(*goneClientProto).replies
		for _, word := range []string{"stressed", "drawer"} {
			if err := asyncio.Sleep(tk, 100*ms); err != nil {
				return err
			}
			if err := ct.SendTo([]byte(word), nil); err != nil {
				return err
			}
			reply, err := replies.Get(tk)
			if err != nil {
				return err
			}
			p.log("client: reply %s", pbytes(reply))
		}
		st.Close()
		if err := asyncio.Sleep(tk, 100*ms); err != nil {
			return err
		}
		_, err = os.Stat(spath)
		p.log("server file left: %s", pyBool(err == nil))
		if err := ct.SendTo([]byte("hello?"), nil); err != nil {
			return err
		}
		if err := asyncio.Sleep(tk, 100*ms); err != nil {
			return err
		}
		if err := os.Remove(spath); err != nil {
			return err
		}
		if err := ct.SendTo([]byte("anyone?"), nil); err != nil {
			return err
		}
		if err := asyncio.Sleep(tk, 100*ms); err != nil {
			return err
		}
		p.log("client closing: %s", pyBool(ct.IsClosing()))
		ct.Close()
		if err := asyncio.Sleep(tk, 0); err != nil {
			return err
		}
		if err := ct.SendTo([]byte("after close"), nil); err != nil {
			return err
		}
		if err := asyncio.Sleep(tk, 100*ms); err != nil {
			return err
		}
		p.log("replies left %d", replies.Len())
		p.log("done")
		return nil
	})
}

// ---------------------------------------------------------------------------
// p206_udp_connected_endpoint.py

type udpEchoProto struct {
	p  *probe
	tr aio.DatagramTransport
}

func (s *udpEchoProto) ConnectionMade(tr aio.DatagramTransport) { s.tr = tr }
func (s *udpEchoProto) DatagramReceived(data []byte, addr net.Addr) {
	s.p.log("server: got %s", pbytes(data))
	s.tr.SendTo(data, addr)
}
func (s *udpEchoProto) ErrorReceived(error)  {}
func (s *udpEchoProto) ConnectionLost(error) {}

type udpEchoClient struct {
	p   *probe
	got *asyncio.Queue[[]byte]
}

func (c *udpEchoClient) ConnectionMade(aio.DatagramTransport)     {}
func (c *udpEchoClient) DatagramReceived(data []byte, _ net.Addr) { c.got.PutNowait(data) }
func (c *udpEchoClient) ErrorReceived(error)                      {}
func (c *udpEchoClient) ConnectionLost(err error)                 { c.p.log("client: lost %s", pyNone(err)) }

func TestPortUDPConnectedEndpoint(t *testing.T) {
	runPort(t, cpythonTrace("p206_udp_connected_endpoint"), func(p *probe, tk *asyncio.T) error {
		p.restart()
		st, _, err := aio.CreateDatagramEndpoint(tk, func() aio.DatagramProtocol { return &udpEchoProto{p: p} },
			&net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)}, nil)
		if err != nil {
			return err
		}
		port := st.ExtraInfo("sockname").(*net.UDPAddr).Port
		ct, cpr, err := aio.CreateDatagramEndpoint(tk, func() aio.DatagramProtocol {
			return &udpEchoClient{p, asyncio.NewQueue[[]byte](0)}
		}, nil, &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: port})
		if err != nil {
			return err
		}
		got := cpr.(*udpEchoClient).got
		peer, _ := ct.ExtraInfo("peername").(*net.UDPAddr)
		p.log("client peer is server: %s", pyBool(peer != nil && peer.IP.Equal(net.IPv4(127, 0, 0, 1)) && peer.Port == port))
		echo := func() error {
			b, err := got.Get(tk)
			if err != nil {
				return err
			}
			p.log("client: echo %s", pbytes(b))
			return nil
		}
		if err := ct.SendTo([]byte("one"), nil); err != nil {
			return err
		}
		if err := echo(); err != nil {
			return err
		}
		if err := asyncio.Sleep(tk, 100*ms); err != nil {
			return err
		}
		if err := ct.SendTo([]byte("two"), nil); err != nil {
			return err
		}
		if err := echo(); err != nil {
			return err
		}
		other := port + 1
		if port == 65535 {
			other = port - 1
		}
		err = ct.SendTo([]byte("three"), &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: other})
		var ve *asyncio.ValueError
		if errors.As(err, &ve) {
			p.log("client: sendto elsewhere: ValueError %s", strings.Split(ve.Msg, ":")[0])
		} else {
			return fmt.Errorf("sendto elsewhere: %v", err)
		}
		if err := asyncio.Sleep(tk, 100*ms); err != nil {
			return err
		}
		if err := ct.SendTo([]byte{}, nil); err != nil {
			return err
		}
		if err := echo(); err != nil {
			return err
		}
		p.log("client still open: %s buffer %d", pyBool(!ct.IsClosing()), ct.WriteBufferSize())
		ct.Close()
		st.Close()
		if err := asyncio.Sleep(tk, 0); err != nil {
			return err
		}
		p.log("done")
		return nil
	})
}

// ---------------------------------------------------------------------------
// p207_unix_dgram_sock_api.py

func TestPortUnixDgramSockAPI(t *testing.T) {
	d := t.TempDir()
	runPort(t, cpythonTrace("p207_unix_dgram_sock_api"), func(p *probe, tk *asyncio.T) error {
		p.restart()
		spath, cpath := filepath.Join(d, "srv"), filepath.Join(d, "cli")
		unixgram := func(path string) net.Addr { return &net.UnixAddr{Name: path, Net: "unixgram"} }
		bound := func(path string) (int, error) {
			fd, err := aio.NewSocket("unixgram")
			if err != nil {
				return -1, err
			}
			if path != "" {
				if err := syscall.Bind(fd, &syscall.SockaddrUnix{Name: path}); err != nil {
					syscall.Close(fd)
					return -1, err
				}
			}
			return fd, nil
		}
		srv, err := bound(spath)
		if err != nil {
			return err
		}
		defer syscall.Close(srv)
		server := asyncio.CreateTaskErr(tk, func(t *asyncio.T) error {
			for {
				data, addr, err := aio.SockRecvFrom(t, srv, 64)
				if err != nil {
					return err
				}
				who := "None"
				if addr != nil {
					who = filepath.Base(addr.(*net.UnixAddr).Name)
				}
				p.log("server: got %s from %s", pbytes(data), who)
				if string(data) == "quit" {
					return nil
				}
				if addr != nil {
					if err := asyncio.Sleep(t, 100*ms); err != nil {
						return err
					}
					if _, err := aio.SockSendTo(t, srv, append([]byte("re: "), data...), addr); err != nil {
						return err
					}
				}
			}
		})
		cli, err := bound(cpath)
		if err != nil {
			return err
		}
		defer syscall.Close(cli)
		if _, err := aio.SockSendTo(tk, cli, []byte("hello there"), unixgram(spath)); err != nil {
			return err
		}
		buf := make([]byte, 16)
		n, addr, err := aio.SockRecvFromInto(tk, cli, buf[:6])
		if err != nil {
			return err
		}
		p.log("client: got %d %s from %s", n, pbytes(buf[:n]), filepath.Base(addr.(*net.UnixAddr).Name))

		anon, err := bound("")
		if err != nil {
			return err
		}
		defer syscall.Close(anon)
		if _, err := aio.SockSendTo(tk, anon, []byte("who am i"), unixgram(spath)); err != nil {
			return err
		}
		if err := asyncio.Sleep(tk, 200*ms); err != nil {
			return err
		}
		if _, err := aio.SockSendTo(tk, anon, []byte("lost"), unixgram(filepath.Join(d, "nobody"))); errors.Is(err, fs.ErrNotExist) {
			p.log("send to nobody: FileNotFoundError")
		} else {
			return fmt.Errorf("send to nobody: %v", err)
		}
		if _, err := aio.SockSendTo(tk, cli, []byte("quit"), unixgram(spath)); err != nil {
			return err
		}
		if _, err := server.Await(tk); err != nil {
			return err
		}
		p.log("done")
		return nil
	})
}

// ---------------------------------------------------------------------------
// p208_tls_handshake_timeout.py

func TestPortTLSHandshakeTimeout(t *testing.T) {
	serverCfg, clientCfg, _ := portTLSConfigs(t)
	runPort(t, cpythonTrace("p208_tls_handshake_timeout"), func(p *probe, tk *asyncio.T) error {
		sim := simLocal(tk)
		var reported []string
		tk.Loop().SetExceptionHandler(func(_ *asyncio.Loop, ctx asyncio.ExceptionContext) {
			reported = append(reported, ctx.Message)
		})
		handled := 0
		hello := func(t *asyncio.T, r *aio.StreamReader, w *aio.StreamWriter) error {
			handled++
			if err := w.Write([]byte("hello over TLS\n")); err != nil {
				return err
			}
			if err := w.Drain(t); err != nil {
				return err
			}
			w.Close()
			return w.WaitClosed(t)
		}
		server, err := aio.StartServer(tk, hello, "127.0.0.1", 0, sim, aio.WithTLS(serverCfg), aio.WithTLSHandshakeTimeout(500*ms))
		if err != nil {
			return err
		}
		port := server.Addr().(*net.TCPAddr).Port
		p.restart()
		silentR, silentW, err := aio.OpenConnection(tk, "127.0.0.1", port, sim)
		if err != nil {
			return err
		}
		p.log("silent client connected")
		if err := asyncio.Sleep(tk, 200*ms); err != nil {
			return err
		}
		r, w, err := aio.OpenConnection(tk, "127.0.0.1", port, sim, aio.WithTLS(clientCfg))
		if err != nil {
			return err
		}
		line, err := r.ReadLine(tk)
		if err != nil {
			return err
		}
		p.log("TLS client: %s handler calls %d", pbytes(line), handled)
		w.Close()
		if err := w.WaitClosed(tk); err != nil {
			return err
		}
		rest, err := silentR.Read(tk, -1)
		if err != nil {
			return err
		}
		p.log("silent client reads %s at EOF %s", pbytes(rest), pyBool(silentR.AtEOF()))
		silentW.Close()
		if err := silentW.WaitClosed(tk); err != nil {
			return err
		}
		if err := asyncio.Sleep(tk, 100*ms); err != nil {
			return err
		}
		p.log("handler calls %d reported %s", handled, pyStrList(reported))
		server.Close()
		if err := server.WaitClosed(tk); err != nil {
			return err
		}
		p.log("done")
		return nil
	})
}

// ---------------------------------------------------------------------------
// p209_tls_client_plain_server.py

func TestPortTLSClientPlainServer(t *testing.T) {
	_, clientCfg, _ := portTLSConfigs(t)
	runPort(t, cpythonTrace("p209_tls_client_plain_server"), func(p *probe, tk *asyncio.T) error {
		sim := simLocal(tk)
		plain := func(t *asyncio.T, r *aio.StreamReader, w *aio.StreamWriter) error {
			data, err := r.Read(t, 5)
			if err != nil {
				return err
			}
			first := "None"
			if len(data) > 0 {
				first = fmt.Sprintf("0x%x", data[0])
			}
			p.log("server: first bytes start with %s", first)
			if err := w.Write([]byte("HTTP/1.0 400 Bad Request\r\n\r\n")); err != nil {
				return err
			}
			if err := w.Drain(t); err != nil {
				return err
			}
			w.Close()
			if err := w.WaitClosed(t); err != nil {
				return err
			}
			p.log("server: closed")
			return nil
		}
		server, err := aio.StartServer(tk, plain, "127.0.0.1", 0, sim)
		if err != nil {
			return err
		}
		port := server.Addr().(*net.TCPAddr).Port
		p.restart()
		_, _, err = aio.OpenConnection(tk, "127.0.0.1", port, sim, aio.WithTLS(clientCfg))
		var certErr *tls.CertificateVerificationError
		var recErr tls.RecordHeaderError
		switch {
		case errors.As(err, &certErr):
			p.log("TLS client: certificate error %v", err)
		case errors.As(err, &recErr):
			p.log("TLS client: SSLError")
		default:
			return fmt.Errorf("TLS client: %v (%T)", err, err)
		}
		if err := asyncio.Sleep(tk, 100*ms); err != nil {
			return err
		}
		r, w, err := aio.OpenConnection(tk, "127.0.0.1", port, sim)
		if err != nil {
			return err
		}
		if err := w.Write([]byte("GET / HTTP/1.0\r\n\r\n")); err != nil {
			return err
		}
		line, err := r.ReadLine(tk)
		if err != nil {
			return err
		}
		p.log("plain client: %s", pbytes(line))
		w.Close()
		if err := w.WaitClosed(tk); err != nil {
			return err
		}
		if err := asyncio.Sleep(tk, 100*ms); err != nil {
			return err
		}
		server.Close()
		if err := server.WaitClosed(tk); err != nil {
			return err
		}
		p.log("done")
		return nil
	})
}

// ---------------------------------------------------------------------------
// p210_unix_server_paths.py

func TestPortUnixServerPaths(t *testing.T) {
	d := t.TempDir()
	runPort(t, cpythonTrace("p210_unix_server_paths"), func(p *probe, tk *asyncio.T) error {
		p.restart()
		path := filepath.Join(d, "svc.sock")
		answer := func(t *asyncio.T, r *aio.StreamReader, w *aio.StreamWriter) error {
			if err := w.Write([]byte("ok\n")); err != nil {
				return err
			}
			if err := w.Drain(t); err != nil {
				return err
			}
			w.Close()
			return w.WaitClosed(t)
		}
		//asynciovet:ignore blockingcall the program writes the regular file on the loop too (open/write in main)
		if err := os.WriteFile(path, []byte("not a socket"), 0o644); err != nil {
			return err
		}
		_, err := aio.StartUnixServer(tk, answer, path)
		var errno syscall.Errno
		if errors.As(err, &errno) && errno == syscall.EADDRINUSE {
			p.log("over a regular file: OSError EADDRINUSE")
		} else {
			return fmt.Errorf("over a regular file: %v", err)
		}
		//asynciovet:ignore blockingcall the program reads the file back on the loop too (open/read in main)
		kept, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		p.log("file kept: %s", kept)
		if err := os.Remove(path); err != nil {
			return err
		}

		stale, err := aio.NewSocket("unix")
		if err != nil {
			return err
		}
		if err := syscall.Bind(stale, &syscall.SockaddrUnix{Name: path}); err != nil {
			return err
		}
		syscall.Close(stale)
		server, err := aio.StartUnixServer(tk, answer, path)
		if err != nil {
			return err
		}
		r, w, err := aio.OpenUnixConnection(tk, path)
		if err != nil {
			return err
		}
		line, err := r.ReadLine(tk)
		if err != nil {
			return err
		}
		p.log("over a stale socket file: client got %s", pbytes(line))
		w.Close()
		if err := w.WaitClosed(tk); err != nil {
			return err
		}
		if err := asyncio.Sleep(tk, 100*ms); err != nil {
			return err
		}
		if err := os.Remove(path); err != nil {
			return err
		}
		if _, _, err := aio.OpenUnixConnection(tk, path); errors.Is(err, fs.ErrNotExist) {
			p.log("file removed, client: FileNotFoundError")
		} else {
			return fmt.Errorf("file removed, client: %v", err)
		}
		server.Close()
		if err := server.WaitClosed(tk); err != nil {
			return err
		}
		p.log("server closed without its file")

		server, err = aio.StartUnixServer(tk, answer, path, aio.WithKeepSocketFile())
		if err != nil {
			return err
		}
		server.Close()
		if err := server.WaitClosed(tk); err != nil {
			return err
		}
		_, err = os.Stat(path)
		p.log("cleanup_socket=False, file left: %s", pyBool(err == nil))
		if err := os.Remove(path); err != nil {
			return err
		}
		p.log("done")
		return nil
	})
}
