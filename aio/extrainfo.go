//go:build unix

package aio

import (
	"crypto/tls"
	"crypto/x509"
	"net"
	"os"
)

// Typed forms of the common get_extra_info keys. Each takes anything with
// an ExtraInfo method: a Transport, a DatagramTransport, a StreamWriter.

// ExtraInfoer is what has get_extra_info: transports and StreamWriter.
type ExtraInfoer interface {
	ExtraInfo(name string) any
}

// PeerName is get_extra_info("peername"): the remote address, nil if the
// transport has none (an unconnected datagram endpoint, a pipe).
func PeerName(x ExtraInfoer) net.Addr {
	a, _ := x.ExtraInfo("peername").(net.Addr)
	return a
}

// SockName is get_extra_info("sockname"): the local address, or nil.
func SockName(x ExtraInfoer) net.Addr {
	a, _ := x.ExtraInfo("sockname").(net.Addr)
	return a
}

// Socket is get_extra_info("socket"): the socket's file descriptor and
// true, or -1 and false if the transport is not over a socket.
func Socket(x ExtraInfoer) (int, bool) {
	fd, ok := x.ExtraInfo("socket").(int)
	if !ok {
		return -1, false
	}
	return fd, true
}

// PeerCert is get_extra_info("peercert"): the peer's leaf certificate on a
// TLS connection, nil without TLS or when the peer sent none.
func PeerCert(x ExtraInfoer) *x509.Certificate {
	c, _ := x.ExtraInfo("peercert").(*x509.Certificate)
	return c
}

// TLSConn is get_extra_info("ssl_object"): the *tls.Conn of a TLS
// connection, or nil.
func TLSConn(x ExtraInfoer) *tls.Conn {
	c, _ := x.ExtraInfo("ssl_object").(*tls.Conn)
	return c
}

// PipeFile is get_extra_info("pipe"): the *os.File a pipe transport drives
// (the file given to ConnectReadPipe or ConnectWritePipe, or the parent's
// end of a child's pipe, SubprocessTransport.PipeTransport), or nil for a
// transport that is not a pipe's. The transport owns the file: it closes
// it after ConnectionLost, and the caller must not close it or read or
// write through it (the descriptor is non-blocking).
func PipeFile(x ExtraInfoer) *os.File {
	f, _ := x.ExtraInfo("pipe").(*os.File)
	return f
}
