//go:build unix

package aio

import (
	"crypto/tls"
	"crypto/x509"
	"net"
	"os"
	"strings"
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
// true, or -1 and false if the transport is not over a socket. Once the
// transport has closed its socket the descriptor is -1 (and true), as
// asyncio's TransportSocket.fileno() is then.
func Socket(x ExtraInfoer) (int, bool) {
	fd, ok := x.ExtraInfo("socket").(int)
	if !ok {
		return -1, false
	}
	return fd, true
}

// PeerCert is get_extra_info("peercert"): the peer's leaf certificate on a
// TLS connection once crypto/tls verified it (the leaf of its first
// verified chain), nil without TLS, when the peer sent none, and when it
// was not verified: a client's *tls.Config with InsecureSkipVerify (even
// with a VerifyPeerCertificate of its own), a server's with a ClientAuth
// that does not verify (RequestClientCert, RequireAnyClientCert). asyncio
// gives ssl's getpeercert(), an empty dict for a certificate it did not
// validate; a nil certificate is that here, so that code cannot take an
// unverified certificate for the peer's identity. The certificates as
// the peer sent them, verified or not, are
// TLSConn(x).ConnectionState().PeerCertificates.
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

// TLSCipher is get_extra_info("cipher") of a TLS connection: asyncio's
// (name, version, secret bits) triple of ssl's SSLObject.cipher(), as
// ('TLS_AES_128_GCM_SHA256', 'TLSv1.3', 128).
type TLSCipher struct {
	// Name is the suite's IANA name (tls.CipherSuiteName). For TLS 1.3
	// it is OpenSSL's name too; for TLS 1.2 OpenSSL, and so ssl, names
	// the suites its own way ("ECDHE-RSA-AES128-GCM-SHA256" for
	// "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256").
	Name string
	// Version is the protocol as ssl spells it: "TLSv1.3", "TLSv1.2",
	// "TLSv1.1", "TLSv1".
	Version string
	// SecretBits is the strength of the suite's cipher (128 for AES-128,
	// 256 for AES-256 and ChaCha20, 112 for 3DES).
	SecretBits int
}

// Cipher is get_extra_info("cipher"): the suite a TLS connection
// negotiated, and false without TLS.
func Cipher(x ExtraInfoer) (TLSCipher, bool) {
	c, ok := x.ExtraInfo("cipher").(TLSCipher)
	return c, ok
}

// cipherOf is the TLSCipher of a finished handshake.
func cipherOf(cs tls.ConnectionState) TLSCipher {
	name := tls.CipherSuiteName(cs.CipherSuite)
	bits := 0
	switch {
	case strings.Contains(name, "AES_128"), strings.Contains(name, "RC4_128"):
		bits = 128
	case strings.Contains(name, "AES_256"), strings.Contains(name, "CHACHA20"):
		bits = 256
	case strings.Contains(name, "3DES"):
		bits = 112
	}
	version := map[uint16]string{
		tls.VersionTLS13: "TLSv1.3", tls.VersionTLS12: "TLSv1.2",
		tls.VersionTLS11: "TLSv1.1", tls.VersionTLS10: "TLSv1",
	}[cs.Version]
	if version == "" {
		version = tls.VersionName(cs.Version)
	}
	return TLSCipher{Name: name, Version: version, SecretBits: bits}
}
