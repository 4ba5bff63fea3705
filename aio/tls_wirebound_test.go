//go:build unix

package aio

import (
	"crypto/tls"
	"io"
	"net"
	"testing"
)

// countingConn counts the bytes written through it.
type countingConn struct {
	net.Conn
	written int
}

func (c *countingConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	c.written += n
	return n, err
}

// tlsWireBound (WithMaxWriteBuffer's estimate over TLS) is never below
// what crypto/tls really sends for a write, from a connection's first
// write (its small, growing records) to past the 128 KiB where records
// become full, for TLS 1.3 and for TLS 1.2 with an AEAD and a CBC suite.
// Counting only full records (the estimate before) undercounted the
// first write of 16,000 bytes (5 records) by some 50–100 bytes.
func TestTLSWireBoundCoversWhatCryptoTLSSends(t *testing.T) {
	clean(t)
	serverCfg, clientCfg := testTLSConfigs(t)
	for _, tc := range []struct {
		name       string
		version    uint16
		suites     []uint16
		dynamicOff bool
	}{
		{"TLS 1.3", tls.VersionTLS13, nil, false},
		{"TLS 1.2 AES-GCM", tls.VersionTLS12, []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256}, false},
		{"TLS 1.2 AES-CBC-SHA256", tls.VersionTLS12, []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256}, false},
		{"TLS 1.2 AES-CBC-SHA256, full records from the start", tls.VersionTLS12, []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc, cc := serverCfg.Clone(), clientCfg.Clone()
			sc.MinVersion, sc.MaxVersion, sc.CipherSuites = tc.version, tc.version, tc.suites
			cc.MinVersion, cc.MaxVersion, cc.CipherSuites = tc.version, tc.version, tc.suites
			cc.ServerName, cc.DynamicRecordSizingDisabled = "localhost", tc.dynamicOff
			a, b := net.Pipe()
			counted := &countingConn{Conn: a}
			client, server := tls.Client(counted, cc), tls.Server(b, sc)
			drained := make(chan error, 1)
			go func() {
				_, err := io.Copy(io.Discard, server)
				server.Close()
				drained <- err
			}()
			if err := client.Handshake(); err != nil {
				t.Fatal(err)
			}
			var sent int64
			for _, n := range []int{16000, 1, 1000, 40000, 70000, 16384, 200000, 3, 16000} {
				before := counted.written
				if _, err := client.Write(make([]byte, n)); err != nil {
					t.Fatal(err)
				}
				wire := counted.written - before
				if bound := tlsWireBound(n, sent, tc.dynamicOff); wire > bound {
					t.Errorf("a write of %d bytes, %d into the connection: %d bytes on the wire, bound %d", n, sent, wire, bound)
				}
				sent += int64(n)
			}
			client.Close()
			if err := <-drained; err != nil {
				t.Errorf("server side: %v", err)
			}
		})
	}
}
