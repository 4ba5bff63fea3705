// Package aio is a stub of github.com/go-asyncio/asyncio/aio for the
// analyzers' tests.
package aio

import (
	"net"
	"time"

	"github.com/go-asyncio/asyncio"
)

type Option func(*options)

type options struct{}

type StreamReader struct{}

func (r *StreamReader) Read(t *asyncio.T, n int) ([]byte, error)        { return nil, nil }
func (r *StreamReader) ReadLine(t *asyncio.T) ([]byte, error)           { return nil, nil }
func (r *StreamReader) ReadExactly(t *asyncio.T, n int) ([]byte, error) { return nil, nil }
func (r *StreamReader) AtEOF() bool                                     { return false }

type StreamWriter struct{}

func (w *StreamWriter) Write(b []byte) error          { return nil }
func (w *StreamWriter) Drain(t *asyncio.T) error      { return nil }
func (w *StreamWriter) Close()                        {}
func (w *StreamWriter) WaitClosed(t *asyncio.T) error { return nil }

func OpenConnection(t *asyncio.T, host string, port int, opts ...Option) (*StreamReader, *StreamWriter, error) {
	return nil, nil, nil
}

type Server struct{}

func StartServer(t *asyncio.T, cb func(t *asyncio.T, r *StreamReader, w *StreamWriter) error, host string, port int, opts ...Option) (*Server, error) {
	return nil, nil
}
func (s *Server) Close()                          {}
func (s *Server) Addr() net.Addr                  { return nil }
func (s *Server) ServeForever(t *asyncio.T) error { return nil }
func (s *Server) WaitClosed(t *asyncio.T) error   { return nil }

// Conn is a net.Conn whose Read and Write suspend only the calling task.
type Conn struct{}

func DialConn(t *asyncio.T, network, address string, opts ...Option) (*Conn, error) { return nil, nil }
func (c *Conn) Read(p []byte) (int, error)                                          { return 0, nil }
func (c *Conn) Write(p []byte) (int, error)                                         { return 0, nil }
func (c *Conn) Close() error                                                        { return nil }
func (c *Conn) LocalAddr() net.Addr                                                 { return nil }
func (c *Conn) RemoteAddr() net.Addr                                                { return nil }
func (c *Conn) SetDeadline(tm time.Time) error                                      { return nil }
func (c *Conn) SetReadDeadline(tm time.Time) error                                  { return nil }
func (c *Conn) SetWriteDeadline(tm time.Time) error                                 { return nil }

var _ net.Conn = (*Conn)(nil)

type Process struct{}

func CreateSubprocessExec(t *asyncio.T, program string, args []string, opts ...Option) (*Process, error) {
	return nil, nil
}
func (p *Process) Wait(t *asyncio.T) (int, error) { return 0, nil }
func (p *Process) Communicate(t *asyncio.T, input []byte) (stdout, stderr []byte, err error) {
	return nil, nil, nil
}
func (p *Process) Kill() error { return nil }

// Added by the hostile probe h31.
func WithServer(t *asyncio.T, srv *Server, fn func() error) error { return nil }

type Transport interface {
	Write(data []byte)
	Close()
}

type Protocol interface {
	ConnectionMade(tr Transport)
	DataReceived(data []byte)
	EOFReceived() bool
	ConnectionLost(err error)
}

type BaseProtocol struct{}

func (BaseProtocol) ConnectionMade(Transport) {}
func (BaseProtocol) DataReceived([]byte)      {}
func (BaseProtocol) EOFReceived() bool        { return false }
func (BaseProtocol) ConnectionLost(error)     {}

func CreateServer(t *asyncio.T, factory func() Protocol, host string, port int, opts ...Option) (*Server, error) {
	return nil, nil
}
