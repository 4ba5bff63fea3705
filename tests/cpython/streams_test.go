//go:build unix

package cpython

// CPython 3.13 Lib/test/test_asyncio/test_streams.py. The reader's private
// buffer (stream._buffer) is read through the public API: the repr gives
// its length and a Read that cannot suspend takes it, which is then fed
// back (bufferOf). CPython's test server (test_utils.run_test_server, an
// HTTP/1.0 server in a thread) is an aio stream server on the same loop
// here, so that every byte is on loopback and the virtual clock never
// runs ahead of a reply; test_drain_raises keeps its plain-socket server
// on its own goroutine, as CPython keeps it off the loop.

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-asyncio/asyncio"
	"github.com/go-asyncio/asyncio/aio"
)

// streamDATA is StreamTests.DATA.
const streamDATA = "line1\nline2\nline3\n"

var bufferedRE = regexp.MustCompile(`^<StreamReader (\d+) bytes`)

// bufferOf is stream._buffer. The bytes are taken with a Read that
// returns at once (the buffer is not empty) and fed back, so the reader
// is left as it was; after EOF they cannot be fed back, so there it must
// be the test's last look at the reader.
func bufferOf(t *testing.T, tk *asyncio.T, r *aio.StreamReader) string {
	t.Helper()
	m := bufferedRE.FindStringSubmatch(r.String())
	if m == nil {
		return ""
	}
	n, _ := strconv.Atoi(m[1])
	eof := strings.Contains(r.String(), " eof")
	data, err := r.Read(tk, n)
	if err != nil || len(data) != n {
		t.Errorf("reading the %d buffered bytes: %q, %v", n, data, err)
	}
	if !eof {
		r.FeedData(data)
	}
	return string(data)
}

// isValueError is assertRaises(ValueError) for the library's errors.
func isValueError(t *testing.T, err error, pattern string) {
	t.Helper()
	if !errors.Is(err, asyncio.ErrValue) {
		t.Errorf("got %v (%T), want a ValueError", err, err)
		return
	}
	if !regexp.MustCompile(pattern).MatchString(err.Error()) {
		t.Errorf("error %q does not match %q", err.Error(), pattern)
	}
}

// panicOf returns what fn panics with, nil if it returns.
func panicOf(fn func()) (v any) {
	defer func() { v = recover() }()
	fn()
	return nil
}

// readTask is loop.create_task(stream.<read>(...)).
func readTask(tk *asyncio.T, read func(*asyncio.T) ([]byte, error)) *asyncio.Task[[]byte] {
	return asyncio.CreateTask(tk, read)
}

// httpd is test_utils.run_test_server / run_test_unix_server: an HTTP/1.0
// server answering "Test message", and for POST /loop the request body.
type httpd struct {
	srv  *aio.Server
	host string
	port int
	path string // the Unix socket, for the Unix variant
}

// httpHandle serves one request and closes the connection.
func httpHandle(tk *asyncio.T, r *aio.StreamReader, w *aio.StreamWriter) error {
	defer w.Close()
	head, err := r.ReadUntil(tk, []byte("\r\n\r\n"))
	if err != nil {
		return nil
	}
	lines := strings.Split(string(head), "\r\n")
	if f := strings.Fields(lines[0]); len(f) > 1 && f[1] == "/loop" {
		n := 0
		for _, l := range lines[1:] {
			if k, v, ok := strings.Cut(l, ":"); ok && strings.EqualFold(k, "Content-Length") {
				n, _ = strconv.Atoi(strings.TrimSpace(v))
			}
		}
		w.Write([]byte("HTTP/1.0 200 OK\r\nContent-type: text/plain\r\n\r\n"))
		for n > 0 {
			chunk, err := r.Read(tk, min(n, 1<<16))
			if err != nil || len(chunk) == 0 {
				return nil
			}
			w.Write(chunk)
			if err := w.Drain(tk); err != nil {
				return nil
			}
			n -= len(chunk)
		}
		return nil
	}
	w.Write([]byte("HTTP/1.0 200 OK\r\nContent-type: text/plain\r\nContent-Length: 12\r\n\r\nTest message"))
	return nil
}

// runTestServer starts the server (on a Unix socket in a temporary
// directory when unixSocket is set, else on 127.0.0.1); stop ends it.
func runTestServer(t *testing.T, tk *asyncio.T, unixSocket bool, opts ...aio.Option) (*httpd, error) {
	h := &httpd{}
	var err error
	if unixSocket {
		h.path = filepath.Join(t.TempDir(), "sock")
		h.srv, err = aio.StartUnixServer(tk, httpHandle, h.path, opts...)
	} else {
		h.srv, err = aio.StartServer(tk, httpHandle, "127.0.0.1", 0, opts...)
	}
	if err != nil {
		return nil, err
	}
	if !unixSocket {
		a := h.srv.Addr().(*net.TCPAddr)
		h.host, h.port = a.IP.String(), a.Port
	}
	return h, nil
}

func (h *httpd) stop(tk *asyncio.T) error {
	h.srv.Close()
	h.srv.AbortClients()
	return h.srv.WaitClosed(tk)
}

// withServer runs body with a test server (the `with` block).
func withServer(t *testing.T, tk *asyncio.T, unixSocket bool, body func(h *httpd) error, opts ...aio.Option) error {
	h, err := runTestServer(t, tk, unixSocket, opts...)
	if err != nil {
		return err
	}
	berr := body(h)
	if err := h.stop(tk); err != nil {
		return err
	}
	return berr
}

// open is asyncio.open_connection(*httpd.address) or
// open_unix_connection(httpd.address).
func (h *httpd) open(tk *asyncio.T, opts ...aio.Option) (*aio.StreamReader, *aio.StreamWriter, error) {
	if h.path != "" {
		return aio.OpenUnixConnection(tk, h.path, opts...)
	}
	return aio.OpenConnection(tk, h.host, h.port, opts...)
}

// testCerts are test_utils.simple_server_sslcontext and a client context
// that does not verify (dummy_ssl_context / simple_client_sslcontext).
func testCerts(t *testing.T) (server, client *tls.Config) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "localhost"},
		DNSNames:     []string{"localhost"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		NotBefore:    time.Unix(0, 0),
		NotAfter:     time.Unix(1<<32, 0),
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert := tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
	return &tls.Config{Certificates: []tls.Certificate{cert}}, &tls.Config{InsecureSkipVerify: true}
}

func basetestOpenConnection(t *testing.T, unixSocket bool) {
	run(t, func(tk *asyncio.T) error {
		messages := (&recorder{}).handle(tk.Loop())
		return withServer(t, tk, unixSocket, func(h *httpd) error {
			reader, writer, err := h.open(tk)
			if err != nil {
				return err
			}
			writer.Write([]byte("GET / HTTP/1.0\r\n\r\n"))
			data, err := reader.ReadLine(tk)
			noErr(t, err)
			eq(t, string(data), "HTTP/1.0 200 OK\r\n")
			data, err = reader.Read(tk, -1)
			noErr(t, err)
			check(t, strings.HasSuffix(string(data), "\r\n\r\nTest message"), string(data))
			writer.Close()
			eq(t, messages.messages(), []string(nil))
			return nil
		})
	})
}

func TestStreams_test_open_connection(t *testing.T) { basetestOpenConnection(t, false) }

func TestStreams_test_open_unix_connection(t *testing.T) { basetestOpenConnection(t, true) }

func basetestOpenConnectionSSL(t *testing.T, unixSocket bool) {
	serverCfg, clientCfg := testCerts(t)
	run(t, func(tk *asyncio.T) error {
		messages := (&recorder{}).handle(tk.Loop())
		return withServer(t, tk, unixSocket, func(h *httpd) error {
			reader, writer, err := h.open(tk, aio.WithTLS(clientCfg))
			if err != nil {
				return err
			}
			writer.Write([]byte("GET / HTTP/1.0\r\n\r\n"))
			data, err := reader.Read(tk, -1)
			noErr(t, err)
			check(t, strings.HasSuffix(string(data), "\r\n\r\nTest message"), string(data))
			writer.Close()
			eq(t, messages.messages(), []string(nil))
			return nil
		}, aio.WithTLS(serverCfg))
	})
}

func TestStreams_test_open_connection_no_loop_ssl(t *testing.T) {
	basetestOpenConnectionSSL(t, false)
}

func TestStreams_test_open_unix_connection_no_loop_ssl(t *testing.T) {
	basetestOpenConnectionSSL(t, true)
}

func basetestOpenConnectionError(t *testing.T, unixSocket bool) {
	run(t, func(tk *asyncio.T) error {
		messages := (&recorder{}).handle(tk.Loop())
		return withServer(t, tk, unixSocket, func(h *httpd) error {
			reader, writer, err := h.open(tk)
			if err != nil {
				return err
			}
			writer.Transport().Protocol().ConnectionLost(exc("ZeroDivisionError"))
			_, err = reader.Read(tk, -1)
			raises(t, err, "ZeroDivisionError")
			writer.Close()
			asyncio.Sleep(tk, 0) // run_briefly
			asyncio.Sleep(tk, 0)
			eq(t, messages.messages(), []string(nil))
			return nil
		})
	})
}

func TestStreams_test_open_connection_error(t *testing.T) { basetestOpenConnectionError(t, false) }

func TestStreams_test_open_unix_connection_error(t *testing.T) {
	basetestOpenConnectionError(t, true)
}

func TestStreams_test_feed_empty_data(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		stream := aio.NewStreamReader(tk, aio.DefaultStreamLimit)
		stream.FeedData([]byte(""))
		eq(t, bufferOf(t, tk, stream), "")
		return nil
	})
}

func TestStreams_test_feed_nonempty_data(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		stream := aio.NewStreamReader(tk, aio.DefaultStreamLimit)
		stream.FeedData([]byte(streamDATA))
		eq(t, bufferOf(t, tk, stream), streamDATA)
		return nil
	})
}

func TestStreams_test_read_zero(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		// Read zero bytes.
		stream := aio.NewStreamReader(tk, aio.DefaultStreamLimit)
		stream.FeedData([]byte(streamDATA))
		data, err := stream.Read(tk, 0)
		noErr(t, err)
		eq(t, string(data), "")
		eq(t, bufferOf(t, tk, stream), streamDATA)
		return nil
	})
}

func TestStreams_test_read(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		// Read bytes.
		stream := aio.NewStreamReader(tk, aio.DefaultStreamLimit)
		readTask := readTask(tk, func(tk *asyncio.T) ([]byte, error) { return stream.Read(tk, 30) })
		tk.Loop().CallSoon(func() { stream.FeedData([]byte(streamDATA)) })
		data, err := readTask.Await(tk)
		noErr(t, err)
		eq(t, string(data), streamDATA)
		eq(t, bufferOf(t, tk, stream), "")
		return nil
	})
}

func TestStreams_test_read_line_breaks(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		// Read bytes without line breaks.
		stream := aio.NewStreamReader(tk, aio.DefaultStreamLimit)
		stream.FeedData([]byte("line1"))
		stream.FeedData([]byte("line2"))
		data, err := stream.Read(tk, 5)
		noErr(t, err)
		eq(t, string(data), "line1")
		eq(t, bufferOf(t, tk, stream), "line2")
		return nil
	})
}

func TestStreams_test_read_eof(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		// Read bytes, stop at eof.
		stream := aio.NewStreamReader(tk, aio.DefaultStreamLimit)
		readTask := readTask(tk, func(tk *asyncio.T) ([]byte, error) { return stream.Read(tk, 1024) })
		tk.Loop().CallSoon(stream.FeedEOF)
		data, err := readTask.Await(tk)
		noErr(t, err)
		eq(t, string(data), "")
		eq(t, bufferOf(t, tk, stream), "")
		return nil
	})
}

func TestStreams_test_read_until_eof(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		// Read all bytes until eof.
		stream := aio.NewStreamReader(tk, aio.DefaultStreamLimit)
		readTask := readTask(tk, func(tk *asyncio.T) ([]byte, error) { return stream.Read(tk, -1) })
		tk.Loop().CallSoon(func() {
			stream.FeedData([]byte("chunk1\n"))
			stream.FeedData([]byte("chunk2"))
			stream.FeedEOF()
		})
		data, err := readTask.Await(tk)
		noErr(t, err)
		eq(t, string(data), "chunk1\nchunk2")
		eq(t, bufferOf(t, tk, stream), "")
		return nil
	})
}

func TestStreams_test_read_exception(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		stream := aio.NewStreamReader(tk, aio.DefaultStreamLimit)
		stream.FeedData([]byte("line\n"))
		data, err := stream.Read(tk, 2)
		noErr(t, err)
		eq(t, string(data), "li")
		stream.SetException(exc("ValueError"))
		_, err = stream.Read(tk, 2)
		raises(t, err, "ValueError")
		return nil
	})
}

func TestStreams_test_invalid_limit(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		for _, limit := range []int{0, -1} {
			v := panicOf(func() { aio.NewStreamReader(tk, limit) })
			err, _ := v.(error)
			isValueError(t, err, "imit")
		}
		return nil
	})
}

func TestStreams_test_read_limit(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		stream := aio.NewStreamReader(tk, 3)
		stream.FeedData([]byte("chunk"))
		data, err := stream.Read(tk, 5)
		noErr(t, err)
		eq(t, string(data), "chunk")
		eq(t, bufferOf(t, tk, stream), "")
		return nil
	})
}

func TestStreams_test_readline(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		// Read one line. 'readline' will need to wait for the data to
		// come from 'cb'.
		stream := aio.NewStreamReader(tk, aio.DefaultStreamLimit)
		stream.FeedData([]byte("chunk1 "))
		readTask := readTask(tk, stream.ReadLine)
		tk.Loop().CallSoon(func() {
			stream.FeedData([]byte("chunk2 "))
			stream.FeedData([]byte("chunk3 "))
			stream.FeedData([]byte("\n chunk4"))
		})
		line, err := readTask.Await(tk)
		noErr(t, err)
		eq(t, string(line), "chunk1 chunk2 chunk3 \n")
		eq(t, bufferOf(t, tk, stream), " chunk4")
		return nil
	})
}

func TestStreams_test_readline_limit_with_existing_data(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		// Read one line. The data is in StreamReader's buffer before the
		// event loop is run.
		stream := aio.NewStreamReader(tk, 3)
		stream.FeedData([]byte("li"))
		stream.FeedData([]byte("ne1\nline2\n"))
		_, err := stream.ReadLine(tk)
		isValueError(t, err, "")
		// The buffer should contain the remaining data after exception.
		eq(t, bufferOf(t, tk, stream), "line2\n")

		stream = aio.NewStreamReader(tk, 3)
		stream.FeedData([]byte("li"))
		stream.FeedData([]byte("ne1"))
		stream.FeedData([]byte("li"))
		_, err = stream.ReadLine(tk)
		isValueError(t, err, "")
		// No "\n" at the end: readline consumes the whole buffer.
		eq(t, bufferOf(t, tk, stream), "")
		return nil
	})
}

func TestStreams_test_at_eof(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		stream := aio.NewStreamReader(tk, aio.DefaultStreamLimit)
		check(t, !stream.AtEOF(), "not at eof")
		stream.FeedData([]byte("some data\n"))
		check(t, !stream.AtEOF(), "not at eof after data")
		_, err := stream.ReadLine(tk)
		noErr(t, err)
		check(t, !stream.AtEOF(), "not at eof after readline")
		stream.FeedData([]byte("some data\n"))
		stream.FeedEOF()
		_, err = stream.ReadLine(tk)
		noErr(t, err)
		check(t, stream.AtEOF(), "at eof")
		return nil
	})
}

func TestStreams_test_readline_limit(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		// Read one line. StreamReaders are fed with data after their
		// 'readline' methods are called.
		stream := aio.NewStreamReader(tk, 7)
		tk.Loop().CallSoon(func() {
			stream.FeedData([]byte("chunk1"))
			stream.FeedData([]byte("chunk2"))
			stream.FeedData([]byte("chunk3\n"))
			stream.FeedEOF()
		})
		_, err := stream.ReadLine(tk)
		isValueError(t, err, "")
		// The buffer had just one line of data, and after raising a
		// ValueError it should be empty.
		eq(t, bufferOf(t, tk, stream), "")

		stream = aio.NewStreamReader(tk, 7)
		tk.Loop().CallSoon(func() {
			stream.FeedData([]byte("chunk1"))
			stream.FeedData([]byte("chunk2\n"))
			stream.FeedData([]byte("chunk3\n"))
			stream.FeedEOF()
		})
		_, err = stream.ReadLine(tk)
		isValueError(t, err, "")
		eq(t, bufferOf(t, tk, stream), "chunk3\n")

		// check strictness of the limit
		stream = aio.NewStreamReader(tk, 7)
		stream.FeedData([]byte("1234567\n"))
		line, err := stream.ReadLine(tk)
		noErr(t, err)
		eq(t, string(line), "1234567\n")
		eq(t, bufferOf(t, tk, stream), "")

		stream.FeedData([]byte("12345678\n"))
		_, err = stream.ReadLine(tk)
		isValueError(t, err, "")
		eq(t, bufferOf(t, tk, stream), "")

		stream.FeedData([]byte("12345678"))
		_, err = stream.ReadLine(tk)
		isValueError(t, err, "")
		eq(t, bufferOf(t, tk, stream), "")
		return nil
	})
}

func TestStreams_test_readline_nolimit_nowait(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		// All needed data for the first 'readline' call will be in the
		// buffer.
		stream := aio.NewStreamReader(tk, aio.DefaultStreamLimit)
		stream.FeedData([]byte(streamDATA[:6]))
		stream.FeedData([]byte(streamDATA[6:]))
		line, err := stream.ReadLine(tk)
		noErr(t, err)
		eq(t, string(line), "line1\n")
		eq(t, bufferOf(t, tk, stream), "line2\nline3\n")
		return nil
	})
}

func TestStreams_test_readline_eof(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		stream := aio.NewStreamReader(tk, aio.DefaultStreamLimit)
		stream.FeedData([]byte("some data"))
		stream.FeedEOF()
		line, err := stream.ReadLine(tk)
		noErr(t, err)
		eq(t, string(line), "some data")
		return nil
	})
}

func TestStreams_test_readline_empty_eof(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		stream := aio.NewStreamReader(tk, aio.DefaultStreamLimit)
		stream.FeedEOF()
		line, err := stream.ReadLine(tk)
		noErr(t, err)
		eq(t, string(line), "")
		return nil
	})
}

func TestStreams_test_readline_read_byte_count(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		stream := aio.NewStreamReader(tk, aio.DefaultStreamLimit)
		stream.FeedData([]byte(streamDATA))
		_, err := stream.ReadLine(tk)
		noErr(t, err)
		data, err := stream.Read(tk, 7)
		noErr(t, err)
		eq(t, string(data), "line2\nl")
		eq(t, bufferOf(t, tk, stream), "ine3\n")
		return nil
	})
}

func TestStreams_test_readline_exception(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		stream := aio.NewStreamReader(tk, aio.DefaultStreamLimit)
		stream.FeedData([]byte("line\n"))
		data, err := stream.ReadLine(tk)
		noErr(t, err)
		eq(t, string(data), "line\n")
		stream.SetException(exc("ValueError"))
		_, err = stream.ReadLine(tk)
		raises(t, err, "ValueError")
		eq(t, bufferOf(t, tk, stream), "")
		return nil
	})
}

func TestStreams_test_readuntil_separator(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		stream := aio.NewStreamReader(tk, aio.DefaultStreamLimit)
		_, err := stream.ReadUntil(tk, []byte(""))
		isValueError(t, err, "Separator should be")
		_, err = stream.ReadUntil(tk, [][]byte{[]byte("")}...)
		isValueError(t, err, "Separator should be")
		_, err = stream.ReadUntil(tk)
		isValueError(t, err, "Separator should contain")
		return nil
	})
}

func TestStreams_test_readuntil_multi_chunks(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		stream := aio.NewStreamReader(tk, aio.DefaultStreamLimit)
		for _, c := range []struct{ feed, want, rest string }{
			{"lineAAA", "lineAAA", ""},
			{"lineAAA", "lineAAA", ""},
			{"lineAAAxxx", "lineAAA", "xxx"},
		} {
			stream.FeedData([]byte(c.feed))
			data, err := stream.ReadUntil(tk, []byte("AAA"))
			noErr(t, err)
			eq(t, string(data), c.want)
			eq(t, bufferOf(t, tk, stream), c.rest)
		}
		return nil
	})
}

func TestStreams_test_readuntil_multi_chunks_1(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		stream := aio.NewStreamReader(tk, aio.DefaultStreamLimit)
		for _, c := range []struct {
			feeds []string
			want  string
		}{
			{[]string{"QWEaa", "XYaa", "a"}, "QWEaaXYaaa"},
			{[]string{"QWEaa", "XYa", "aa"}, "QWEaaXYaaa"},
			{[]string{"aaa"}, "aaa"},
			{[]string{"Xaaa"}, "Xaaa"},
			{[]string{"XXX", "a", "a", "a"}, "XXXaaa"},
		} {
			for _, f := range c.feeds {
				stream.FeedData([]byte(f))
			}
			data, err := stream.ReadUntil(tk, []byte("aaa"))
			noErr(t, err)
			eq(t, string(data), c.want)
			eq(t, bufferOf(t, tk, stream), "")
		}
		return nil
	})
}

func TestStreams_test_readuntil_eof(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		stream := aio.NewStreamReader(tk, aio.DefaultStreamLimit)
		data := "some dataAA"
		stream.FeedData([]byte(data))
		stream.FeedEOF()
		_, err := stream.ReadUntil(tk, []byte("AAA"))
		var ire *aio.IncompleteReadError
		if check(t, errors.As(err, &ire), "IncompleteReadError: ", err); ire != nil {
			check(t, strings.Contains(err.Error(), "undefined expected bytes"), err)
			eq(t, string(ire.Partial), data)
			eq(t, ire.Expected, -1, "expected is None")
		}
		eq(t, bufferOf(t, tk, stream), "")
		return nil
	})
}

// limitOverrun is assertRaisesRegex(LimitOverrunError, pattern).
func limitOverrun(t *testing.T, err error, pattern string) {
	t.Helper()
	var loe *aio.LimitOverrunError
	if !errors.As(err, &loe) {
		t.Errorf("got %v (%T), want a LimitOverrunError", err, err)
		return
	}
	check(t, regexp.MustCompile(pattern).MatchString(err.Error()), err.Error(), " matches ", pattern)
}

func TestStreams_test_readuntil_limit_found_sep(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		stream := aio.NewStreamReader(tk, 3)
		stream.FeedData([]byte("some dataAA"))
		_, err := stream.ReadUntil(tk, []byte("AAA"))
		limitOverrun(t, err, "not found")
		eq(t, bufferOf(t, tk, stream), "some dataAA")

		stream.FeedData([]byte("A"))
		_, err = stream.ReadUntil(tk, []byte("AAA"))
		limitOverrun(t, err, "is found")
		eq(t, bufferOf(t, tk, stream), "some dataAAA")
		return nil
	})
}

func TestStreams_test_readuntil_multi_separator(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		stream := aio.NewStreamReader(tk, aio.DefaultStreamLimit)
		// Simple case
		stream.FeedData([]byte("line 1\nline 2\r"))
		data, err := stream.ReadUntil(tk, []byte("\r"), []byte("\n"))
		noErr(t, err)
		eq(t, string(data), "line 1\n")
		data, err = stream.ReadUntil(tk, []byte("\r"), []byte("\n"))
		noErr(t, err)
		eq(t, string(data), "line 2\r")
		eq(t, bufferOf(t, tk, stream), "")

		// First end position matches, even if that's a longer match
		stream.FeedData([]byte("ABCDEFG"))
		data, err = stream.ReadUntil(tk, []byte("DEF"), []byte("BCDE"))
		noErr(t, err)
		eq(t, string(data), "ABCDE")
		eq(t, bufferOf(t, tk, stream), "FG")
		return nil
	})
}

func TestStreams_test_readuntil_multi_separator_limit(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		stream := aio.NewStreamReader(tk, 3)
		stream.FeedData([]byte("some dataA"))
		_, err := stream.ReadUntil(tk, []byte("A"), []byte("ome dataA"))
		limitOverrun(t, err, "is found")
		eq(t, bufferOf(t, tk, stream), "some dataA")
		return nil
	})
}

func TestStreams_test_readuntil_multi_separator_negative_offset(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		// If the buffer is big enough for the smallest separator (but
		// does not contain it) but too small for the largest, `offset`
		// must not become negative.
		stream := aio.NewStreamReader(tk, aio.DefaultStreamLimit)
		stream.FeedData([]byte("data"))
		readuntilTask := readTask(tk, func(tk *asyncio.T) ([]byte, error) {
			return stream.ReadUntil(tk, []byte("A"), []byte("long sep"))
		})
		tk.Loop().CallSoon(func() { stream.FeedData([]byte("Z")) })
		tk.Loop().CallSoon(func() { stream.FeedData([]byte("Aaaa")) })
		data, err := readuntilTask.Await(tk)
		noErr(t, err)
		eq(t, string(data), "dataZA")
		eq(t, bufferOf(t, tk, stream), "aaa")
		return nil
	})
}

func TestStreams_test_readuntil_bytearray(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		stream := aio.NewStreamReader(tk, aio.DefaultStreamLimit)
		stream.FeedData([]byte("some data\r\n"))
		sep := make([]byte, 0, 8) // a growable buffer, as bytearray is
		sep = append(sep, "\r\n"...)
		data, err := stream.ReadUntil(tk, sep)
		noErr(t, err)
		eq(t, string(data), "some data\r\n")
		eq(t, bufferOf(t, tk, stream), "")
		return nil
	})
}

func TestStreams_test_readexactly_zero_or_less(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		// Read exact number of bytes (zero or less).
		stream := aio.NewStreamReader(tk, aio.DefaultStreamLimit)
		stream.FeedData([]byte(streamDATA))
		data, err := stream.ReadExactly(tk, 0)
		noErr(t, err)
		eq(t, string(data), "")
		eq(t, bufferOf(t, tk, stream), streamDATA)
		_, err = stream.ReadExactly(tk, -1)
		isValueError(t, err, "less than zero")
		eq(t, bufferOf(t, tk, stream), streamDATA)
		return nil
	})
}

func TestStreams_test_readexactly(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		// Read exact number of bytes.
		stream := aio.NewStreamReader(tk, aio.DefaultStreamLimit)
		n := 2 * len(streamDATA)
		readTask := readTask(tk, func(tk *asyncio.T) ([]byte, error) { return stream.ReadExactly(tk, n) })
		tk.Loop().CallSoon(func() {
			stream.FeedData([]byte(streamDATA))
			stream.FeedData([]byte(streamDATA))
			stream.FeedData([]byte(streamDATA))
		})
		data, err := readTask.Await(tk)
		noErr(t, err)
		eq(t, string(data), streamDATA+streamDATA)
		eq(t, bufferOf(t, tk, stream), streamDATA)
		return nil
	})
}

func TestStreams_test_readexactly_limit(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		stream := aio.NewStreamReader(tk, 3)
		stream.FeedData([]byte("chunk"))
		data, err := stream.ReadExactly(tk, 5)
		noErr(t, err)
		eq(t, string(data), "chunk")
		eq(t, bufferOf(t, tk, stream), "")
		return nil
	})
}

func TestStreams_test_readexactly_eof(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		// Read exact number of bytes (eof).
		stream := aio.NewStreamReader(tk, aio.DefaultStreamLimit)
		n := 2 * len(streamDATA)
		readTask := readTask(tk, func(tk *asyncio.T) ([]byte, error) { return stream.ReadExactly(tk, n) })
		tk.Loop().CallSoon(func() {
			stream.FeedData([]byte(streamDATA))
			stream.FeedEOF()
		})
		_, err := readTask.Await(tk)
		var ire *aio.IncompleteReadError
		if check(t, errors.As(err, &ire), "IncompleteReadError: ", err); ire != nil {
			eq(t, string(ire.Partial), streamDATA)
			eq(t, ire.Expected, n)
			eq(t, err.Error(), "18 bytes read on a total of 36 expected bytes")
		}
		eq(t, bufferOf(t, tk, stream), "")
		return nil
	})
}

func TestStreams_test_readexactly_exception(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		stream := aio.NewStreamReader(tk, aio.DefaultStreamLimit)
		stream.FeedData([]byte("line\n"))
		data, err := stream.ReadExactly(tk, 2)
		noErr(t, err)
		eq(t, string(data), "li")
		stream.SetException(exc("ValueError"))
		_, err = stream.ReadExactly(tk, 2)
		raises(t, err, "ValueError")
		return nil
	})
}

func TestStreams_test_exception(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		stream := aio.NewStreamReader(tk, aio.DefaultStreamLimit)
		check(t, stream.Err() == nil, "no exception")
		e := exc("ValueError")
		stream.SetException(e)
		check(t, stream.Err() == e, "the same exception")
		return nil
	})
}

func TestStreams_test_exception_waiter(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		stream := aio.NewStreamReader(tk, aio.DefaultStreamLimit)
		t1 := readTask(tk, stream.ReadLine)
		t2 := readTask(tk, func(*asyncio.T) ([]byte, error) {
			stream.SetException(exc("ValueError"))
			return nil, nil
		})
		_, _, err := asyncio.Wait(tk, []*asyncio.Task[[]byte]{t1, t2}, asyncio.Never, asyncio.AllCompleted)
		noErr(t, err)
		_, err = t1.Result()
		raises(t, err, "ValueError")
		return nil
	})
}

func TestStreams_test_exception_cancel(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		stream := aio.NewStreamReader(tk, aio.DefaultStreamLimit)
		task := readTask(tk, stream.ReadLine)
		asyncio.Sleep(tk, 0) // run_briefly
		task.Cancel()
		asyncio.Sleep(tk, 0)
		// The following line fails if SetException isn't careful.
		stream.SetException(exc("RuntimeError", "message"))
		asyncio.Sleep(tk, 0)
		check(t, !strings.Contains(stream.String(), "waiter="), "no waiter: ", stream)
		cancelled(t, task.Err())
		return nil
	})
}

// echoLine is MyServer.handle_client: echo one line and close.
func echoLine(tk *asyncio.T, r *aio.StreamReader, w *aio.StreamWriter) error {
	data, err := r.ReadLine(tk)
	if err != nil {
		return err
	}
	w.Write(data)
	if err := w.Drain(tk); err != nil {
		return err
	}
	w.Close()
	return w.WaitClosed(tk)
}

// echoLineCallback is MyServer.handle_client_callback: a plain function
// that starts handle_client as a task and returns.
func echoLineCallback(tk *asyncio.T, r *aio.StreamReader, w *aio.StreamWriter) error {
	asyncio.CreateTaskErr(tk, func(tk *asyncio.T) error { return echoLine(tk, r, w) })
	return nil
}

// helloClient is test_start_server's client: send a line, read it back.
func helloClient(tk *asyncio.T, r *aio.StreamReader, w *aio.StreamWriter, err error) ([]byte, error) {
	if err != nil {
		return nil, err
	}
	w.Write([]byte("hello world!\n"))
	msgback, err := r.ReadLine(tk)
	if err != nil {
		return nil, err
	}
	w.Close()
	return msgback, w.WaitClosed(tk)
}

func TestStreams_test_start_server(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		messages := (&recorder{}).handle(tk.Loop())
		// the server variant with a coroutine as client handler, then
		// with a callback as client handler
		for _, handler := range []func(*asyncio.T, *aio.StreamReader, *aio.StreamWriter) error{echoLine, echoLineCallback} {
			server, err := aio.StartServer(tk, handler, "127.0.0.1", 0)
			if err != nil {
				return err
			}
			addr := server.Addr().(*net.TCPAddr)
			client := asyncio.CreateTask(tk, func(tk *asyncio.T) ([]byte, error) {
				r, w, err := aio.OpenConnection(tk, addr.IP.String(), addr.Port)
				return helloClient(tk, r, w, err)
			})
			msg, err := client.Await(tk)
			noErr(t, err)
			server.Close()
			noErr(t, server.WaitClosed(tk))
			eq(t, string(msg), "hello world!\n")
		}
		eq(t, messages.messages(), []string(nil))
		return nil
	})
}

func TestStreams_test_start_unix_server(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		messages := (&recorder{}).handle(tk.Loop())
		for _, handler := range []func(*asyncio.T, *aio.StreamReader, *aio.StreamWriter) error{echoLine, echoLineCallback} {
			path := filepath.Join(t.TempDir(), "sock")
			server, err := aio.StartUnixServer(tk, handler, path)
			if err != nil {
				return err
			}
			client := asyncio.CreateTask(tk, func(tk *asyncio.T) ([]byte, error) {
				r, w, err := aio.OpenUnixConnection(tk, path)
				return helloClient(tk, r, w, err)
			})
			msg, err := client.Await(tk)
			noErr(t, err)
			server.Close()
			noErr(t, server.WaitClosed(tk))
			eq(t, string(msg), "hello world!\n")
		}
		eq(t, messages.messages(), []string(nil))
		return nil
	})
}

func TestStreams_test_start_tls(t *testing.T) {
	serverCfg, clientCfg := testCerts(t)
	run(t, func(tk *asyncio.T) error {
		messages := (&recorder{}).handle(tk.Loop())
		handleClient := func(tk *asyncio.T, r *aio.StreamReader, w *aio.StreamWriter) error {
			data1, err := r.ReadLine(tk)
			if err != nil {
				return err
			}
			w.Write(data1)
			if err := w.Drain(tk); err != nil {
				return err
			}
			check(t, w.ExtraInfo("sslcontext") == nil, "server: no sslcontext before start_tls")
			if err := w.StartTLS(tk, serverCfg, ""); err != nil {
				return err
			}
			check(t, w.ExtraInfo("sslcontext") != nil, "server: an sslcontext after start_tls")
			data2, err := r.ReadLine(tk)
			if err != nil {
				return err
			}
			w.Write(data2)
			if err := w.Drain(tk); err != nil {
				return err
			}
			w.Close()
			return w.WaitClosed(tk)
		}
		server, err := aio.StartServer(tk, handleClient, "127.0.0.1", 0)
		if err != nil {
			return err
		}
		addr := server.Addr().(*net.TCPAddr)
		reader, writer, err := aio.OpenConnection(tk, addr.IP.String(), addr.Port)
		if err != nil {
			return err
		}
		writer.Write([]byte("hello world 1!\n"))
		noErr(t, writer.Drain(tk))
		msg1, err := reader.ReadLine(tk)
		noErr(t, err)
		check(t, writer.ExtraInfo("sslcontext") == nil, "client: no sslcontext before start_tls")
		noErr(t, writer.StartTLS(tk, clientCfg, ""))
		check(t, writer.ExtraInfo("sslcontext") != nil, "client: an sslcontext after start_tls")
		writer.Write([]byte("hello world 2!\n"))
		noErr(t, writer.Drain(tk))
		msg2, err := reader.ReadLine(tk)
		noErr(t, err)
		writer.Close()
		noErr(t, writer.WaitClosed(tk))
		server.Close()
		noErr(t, server.WaitClosed(tk))

		eq(t, messages.messages(), []string(nil))
		eq(t, string(msg1), "hello world 1!\n")
		eq(t, string(msg2), "hello world 2!\n")
		return nil
	})
}

func TestStreams_test_read_all_from_pipe_reader(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		// The reader's limit is such that twice it is less than the size
		// of the data written.
		rf, wf, err := os.Pipe()
		if err != nil {
			return err
		}
		reader := aio.NewStreamReader(tk, 1)
		protocol := aio.NewStreamReaderProtocol(reader)
		transport, _, err := aio.ConnectReadPipe(tk, func() aio.Protocol { return protocol }, rf)
		if err != nil {
			return err
		}
		defer transport.Close()
		// The child writes b'data' to the inherited write end (fd 3).
		proc, err := aio.CreateSubprocessExec(tk, "/bin/sh", []string{"-c", "printf data >&3; exec 3>&-"},
			aio.WithCmd(func(cmd *exec.Cmd) { cmd.ExtraFiles = []*os.File{wf} }))
		if err != nil {
			wf.Close()
			return err
		}
		_, err = proc.Wait(tk)
		noErr(t, err)
		wf.Close()
		data, err := reader.Read(tk, -1)
		noErr(t, err)
		eq(t, string(data), "data")
		return nil
	})
}

func TestStreams_test_multiple_drain(t *testing.T) {
	// See https://github.com/python/cpython/issues/74116
	run(t, func(tk *asyncio.T) error {
		// FlowControlMixin is the stream protocol's; a StreamWriter over
		// a pipe gives its _drain_helper (Drain).
		rf, wf, err := os.Pipe()
		if err != nil {
			return err
		}
		defer rf.Close()
		protocol := aio.NewStreamReaderProtocol(aio.NewStreamReader(tk, aio.DefaultStreamLimit))
		tr, _, err := aio.ConnectWritePipe(tk, func() aio.Protocol { return protocol }, wf)
		if err != nil {
			return err
		}
		defer tr.Close()
		stream := aio.NewStreamWriter(tr, protocol, nil)
		drained := 0
		drainer := func(tk *asyncio.T) (struct{}, error) {
			if err := stream.Drain(tk); err != nil {
				return struct{}{}, err
			}
			drained++
			return struct{}{}, nil
		}
		protocol.(aio.WriteFlowControl).PauseWriting()
		tk.Loop().CallLater(100*ms, protocol.(aio.WriteFlowControl).ResumeWriting)
		fns := make([]func(*asyncio.T) (struct{}, error), 10)
		for i := range fns {
			fns[i] = drainer
		}
		_, err = asyncio.GatherFuncs(tk, fns...).Await(tk)
		noErr(t, err)
		eq(t, drained, 10)
		return nil
	})
}

func TestStreams_test_drain_raises(t *testing.T) {
	// See http://bugs.python.org/issue25441. The server is not on the
	// loop: the point is a drain() that never gives up the loop while
	// the socket is closed on the server side.
	ln, err := net.Listen("tcp", "localhost:0")
	if err != nil {
		t.Fatal(err)
	}
	serverDone := make(chan struct{})
	go func() {
		defer close(serverDone)
		defer ln.Close()
		clt, err := ln.Accept()
		if err == nil {
			clt.Close()
		}
	}()
	addr := ln.Addr().(*net.TCPAddr)
	run(t, func(tk *asyncio.T) error {
		messages := (&recorder{}).handle(tk.Loop())
		client := func(tk *asyncio.T) error {
			_, writer, err := aio.OpenConnection(tk, addr.IP.String(), addr.Port)
			if err != nil {
				return err
			}
			defer writer.Close()
			for {
				if err := writer.Write([]byte("foo\n")); err != nil {
					return err
				}
				if err := writer.Drain(tk); err != nil {
					return err
				}
			}
		}
		// Should not be stuck in an infinite loop.
		err := client(tk)
		check(t, errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNABORTED) || errors.Is(err, syscall.EPIPE),
			"ConnectionResetError, ConnectionAbortedError or BrokenPipeError: ", err)
		asyncio.Sleep(tk, 0) // the ConnectionLost the Close above scheduled
		eq(t, messages.messages(), []string(nil))
		return nil
	})
	ln.Close() // ends an Accept still waiting if the client never came
	<-serverDone
}

func TestStreams_test___repr__(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		eq(t, aio.NewStreamReader(tk, aio.DefaultStreamLimit).String(), "<StreamReader>")
		return nil
	})
}

func TestStreams_test___repr__nondefault_limit(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		eq(t, aio.NewStreamReader(tk, 123).String(), "<StreamReader limit=123>")
		return nil
	})
}

func TestStreams_test___repr__eof(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		stream := aio.NewStreamReader(tk, aio.DefaultStreamLimit)
		stream.FeedEOF()
		eq(t, stream.String(), "<StreamReader eof>")
		return nil
	})
}

func TestStreams_test___repr__data(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		stream := aio.NewStreamReader(tk, aio.DefaultStreamLimit)
		stream.FeedData([]byte("data"))
		eq(t, stream.String(), "<StreamReader 4 bytes>")
		return nil
	})
}

func TestStreams_test___repr__exception(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		stream := aio.NewStreamReader(tk, aio.DefaultStreamLimit)
		e := exc("RuntimeError")
		stream.SetException(e)
		// The error's text stands for Python's repr of the exception.
		eq(t, stream.String(), "<StreamReader exception=RuntimeError>")
		return nil
	})
}

func TestStreams_test___repr__waiter(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		stream := aio.NewStreamReader(tk, aio.DefaultStreamLimit)
		// stream._waiter is set by a read waiting for data.
		read := readTask(tk, func(tk *asyncio.T) ([]byte, error) { return stream.Read(tk, 1) })
		asyncio.Sleep(tk, 0)
		check(t, regexp.MustCompile(`^<StreamReader waiter=<Future pending[\S ]*>>$`).MatchString(stream.String()), stream)
		read.Cancel()
		_, err := read.Await(tk)
		cancelled(t, err)
		eq(t, stream.String(), "<StreamReader>")
		return nil
	})
}

func TestStreams_test___repr__transport(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		// stream._transport is set by the protocol a transport feeds.
		rf, wf, err := os.Pipe()
		if err != nil {
			return err
		}
		defer wf.Close()
		stream := aio.NewStreamReader(tk, aio.DefaultStreamLimit)
		tr, _, err := aio.ConnectReadPipe(tk, func() aio.Protocol { return aio.NewStreamReaderProtocol(stream) }, rf)
		if err != nil {
			return err
		}
		defer tr.Close()
		eq(t, stream.String(), fmt.Sprintf("<StreamReader transport=%v>", tr))
		return nil
	})
}

// clientGET is the client of the wait_closed tests: a GET, the status
// line, and (withBody) the rest.
func clientGET(t *testing.T, tk *asyncio.T, h *httpd, withBody bool) (*aio.StreamReader, *aio.StreamWriter, error) {
	rd, wr, err := h.open(tk)
	if err != nil {
		return nil, nil, err
	}
	wr.Write([]byte("GET / HTTP/1.0\r\n\r\n"))
	data, err := rd.ReadLine(tk)
	noErr(t, err)
	eq(t, string(data), "HTTP/1.0 200 OK\r\n")
	if withBody {
		data, err = rd.Read(tk, -1)
		noErr(t, err)
		check(t, strings.HasSuffix(string(data), "\r\n\r\nTest message"), string(data))
	}
	return rd, wr, nil
}

func TestStreams_test_wait_closed_on_close(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		return withServer(t, tk, false, func(h *httpd) error {
			_, wr, err := clientGET(t, tk, h, true)
			if err != nil {
				return err
			}
			check(t, !wr.IsClosing(), "not closing")
			wr.Close()
			check(t, wr.IsClosing(), "closing")
			noErr(t, wr.WaitClosed(tk))
			return nil
		})
	})
}

func TestStreams_test_wait_closed_on_close_with_unread_data(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		return withServer(t, tk, false, func(h *httpd) error {
			_, wr, err := clientGET(t, tk, h, false)
			if err != nil {
				return err
			}
			wr.Close()
			noErr(t, wr.WaitClosed(tk))
			return nil
		})
	})
}

func TestStreams_test_async_writer_api(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		messages := (&recorder{}).handle(tk.Loop())
		err := withServer(t, tk, false, func(h *httpd) error {
			_, wr, err := clientGET(t, tk, h, true)
			if err != nil {
				return err
			}
			wr.Close()
			return wr.WaitClosed(tk)
		})
		eq(t, messages.messages(), []string(nil))
		return err
	})
}

func TestStreams_test_async_writer_api_exception_after_close(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		messages := (&recorder{}).handle(tk.Loop())
		err := withServer(t, tk, false, func(h *httpd) error {
			_, wr, err := clientGET(t, tk, h, true)
			if err != nil {
				return err
			}
			wr.Close()
			err = wr.Write([]byte("data"))
			if err == nil {
				err = wr.Drain(tk)
			}
			check(t, errors.Is(err, syscall.ECONNRESET), "ConnectionResetError: ", err)
			return nil
		})
		eq(t, messages.messages(), []string(nil))
		return err
	})
}

func TestStreams_test_eof_feed_when_closing_writer(t *testing.T) {
	// See http://bugs.python.org/issue35065
	run(t, func(tk *asyncio.T) error {
		messages := (&recorder{}).handle(tk.Loop())
		err := withServer(t, tk, false, func(h *httpd) error {
			rd, wr, err := h.open(tk)
			if err != nil {
				return err
			}
			wr.Close()
			noErr(t, wr.WaitClosed(tk))
			check(t, rd.AtEOF(), "at eof")
			data, err := rd.Read(tk, -1)
			noErr(t, err)
			eq(t, string(data), "")
			return nil
		})
		eq(t, messages.messages(), []string(nil))
		return err
	})
}

// basetestUnhandledExceptions runs a server with handleEcho and a client
// that sends one message, and returns what the exception handler got.
func basetestUnhandledExceptions(t *testing.T, handleEcho func(*asyncio.T, *aio.StreamReader, *aio.StreamWriter) error) []asyncio.ExceptionContext {
	messages := &recorder{}
	run(t, func(tk *asyncio.T) error {
		messages.handle(tk.Loop())
		server, err := aio.StartServer(tk, handleEcho, "localhost", 0)
		if err != nil {
			return err
		}
		server.StartServing()
		addr := server.Addr().(*net.TCPAddr)
		// client()
		_, wr, err := aio.OpenConnection(tk, "localhost", addr.Port)
		if err != nil {
			return err
		}
		wr.Write([]byte("test msg"))
		noErr(t, wr.Drain(tk))
		wr.Close()
		noErr(t, wr.WaitClosed(tk))
		server.Close()
		return server.WaitClosed(tk)
	})
	return messages.contexts
}

func TestStreams_test_unhandled_exception(t *testing.T) {
	messages := basetestUnhandledExceptions(t, func(*asyncio.T, *aio.StreamReader, *aio.StreamWriter) error {
		return exc("Exception", "test")
	})
	if check(t, len(messages) > 0, "a message"); len(messages) > 0 {
		eq(t, messages[0].Message, "Unhandled exception in client_connected_cb")
		raises(t, messages[0].Err, "Exception")
	}
}

func TestStreams_test_unhandled_cancel(t *testing.T) {
	messages := basetestUnhandledExceptions(t, func(tk *asyncio.T, _ *aio.StreamReader, w *aio.StreamWriter) error {
		w.Close()
		tk.Cancel()
		return nil
	})
	eq(t, len(messages), 0, "messages")
}
