//go:build unix

package aio

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"math/big"
	"testing"
	"time"

	"github.com/go-asyncio/asyncio"
)

// testClientCert is a self-signed client certificate ("client", for
// client authentication) and a pool that trusts it.
func testClientCert(t *testing.T) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: "client"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, pool
}

// describeCert is what a test logs of get_extra_info("peercert") and of
// the certificates the peer sent.
func describeCert(x ExtraInfoer) string {
	c := PeerCert(x)
	sent := TLSConn(x).ConnectionState().PeerCertificates
	s := "peercert nil"
	if c != nil {
		s = "peercert " + c.Subject.CommonName
	}
	if extra := x.ExtraInfo("peercert"); c == nil && extra != nil || c != nil && extra != any(c) {
		s += fmt.Sprintf(" (ExtraInfo differs: %v)", extra)
	}
	if c != nil && (len(sent) == 0 || !c.Equal(sent[0])) {
		s += " (not the leaf sent)"
	}
	if len(sent) > 0 {
		s += ", sent " + sent[0].Subject.CommonName
	}
	return s
}

// PeerCert (get_extra_info("peercert")) is the peer's certificate once
// crypto/tls verified it, nil when it did not, as ssl's getpeercert() is
// {} for a certificate it did not validate: a client that skips
// verification (InsecureSkipVerify, also with a VerifyPeerCertificate of
// its own) and a server that takes any client certificate
// (RequireAnyClientCert) get nil; a verifying client and a server that
// verifies client certificates get the leaf. The certificates as sent
// stay reachable through TLSConn's ConnectionState. It was the sent leaf
// whether or not it was verified.
func TestPeerCertOnlyVerified(t *testing.T) {
	t.Parallel()
	serverCfg, verifying := testTLSConfigs(t)
	clientCert, clientPool := testClientCert(t)
	var log []string
	runNet(t, func(at *asyncio.T) error {
		for _, c := range []struct {
			name       string
			client     *tls.Config
			clientAuth tls.ClientAuthType
		}{
			{"verified", verifying, tls.NoClientCert},
			{"InsecureSkipVerify", &tls.Config{InsecureSkipVerify: true}, tls.NoClientCert},
			{"InsecureSkipVerify+VerifyPeerCertificate", &tls.Config{InsecureSkipVerify: true,
				VerifyPeerCertificate: func([][]byte, [][]*x509.Certificate) error { return nil }}, tls.NoClientCert},
			{"client cert verified", &tls.Config{RootCAs: verifying.RootCAs, Certificates: []tls.Certificate{clientCert}}, tls.RequireAndVerifyClientCert},
			{"client cert not verified", &tls.Config{RootCAs: verifying.RootCAs, Certificates: []tls.Certificate{clientCert}}, tls.RequireAnyClientCert},
		} {
			scfg := serverCfg.Clone()
			scfg.ClientAuth, scfg.ClientCAs = c.clientAuth, clientPool
			seen := asyncio.NewFuture[string](at)
			srv, err := StartServer(at, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
				seen.SetResult(describeCert(w))
				w.Close()
				return nil
			}, "127.0.0.1", 0, WithTLS(scfg))
			if err != nil {
				return err
			}
			_, w, err := OpenConnection(at, "127.0.0.1", serverPort(srv), WithTLS(c.client))
			if err != nil {
				return fmt.Errorf("%s: %w", c.name, err)
			}
			server, err := seen.Await(at)
			if err != nil {
				return err
			}
			log = append(log, fmt.Sprintf("%s: client's %s; server's %s", c.name, describeCert(w), server))
			w.Close()
			srv.Close()
			if err := srv.WaitClosed(at); err != nil {
				return err
			}
		}
		return nil
	})
	expectLog(t, []string{
		"verified: client's peercert localhost, sent localhost; server's peercert nil",
		"InsecureSkipVerify: client's peercert nil, sent localhost; server's peercert nil",
		"InsecureSkipVerify+VerifyPeerCertificate: client's peercert nil, sent localhost; server's peercert nil",
		"client cert verified: client's peercert localhost, sent localhost; server's peercert client, sent client",
		"client cert not verified: client's peercert localhost, sent localhost; server's peercert nil, sent client",
	}, log)
}
