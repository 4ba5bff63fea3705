//go:build unix

package cpython

// test_events.py's TLS tests: create_connection and create_server with
// ssl=. test_utils.ONLYCERT/ONLYKEY is testCerts' self-signed
// certificate; SIGNED_CERTFILE and SIGNING_CA are signedCerts', made the
// same way: a CA and a certificate it signed for "localhost" only.

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"math/big"
	"net"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-asyncio/asyncio"
	"github.com/go-asyncio/asyncio/aio"
)

// signedCerts is SIGNED_CERTFILE (the server's config) and SIGNING_CA (a
// pool with the CA).
func signedCerts(t *testing.T) (*tls.Config, *x509.CertPool) {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "Our Fake CA"},
		NotBefore: time.Unix(0, 0), NotAfter: time.Unix(1<<32, 0),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "localhost"},
		DNSNames:  []string{"localhost"},
		NotBefore: time.Unix(0, 0), NotAfter: time.Unix(1<<32, 0),
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	return &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}, pool
}

// checkSSLExtraInfo is check_ssl_extra_info. peercert: CPython's
// getpeercert() is {} when the chain was not verified and the decoded
// certificate when it was; PeerCert is nil and the certificate: peerCN
// "" is the unverified case.
func checkSSLExtraInfo(t *testing.T, client aio.Transport, checkSockname bool, peername net.Addr, peerCN string) {
	t.Helper()
	if checkSockname {
		check(t, aio.SockName(client) != nil, "get_extra_info('sockname')")
	}
	if peername != nil {
		eq(t, aio.PeerName(client).String(), peername.String(), "peername")
	} else {
		check(t, aio.PeerName(client) != nil, "get_extra_info('peername')")
	}
	if peerCN != "" {
		if c := aio.PeerCert(client); check2(t, c != nil, "peercert") {
			eq(t, c.Subject.CommonName, peerCN)
		}
	} else {
		check(t, aio.PeerCert(client) == nil, "peercert of an unverified peer: ", aio.PeerCert(client))
	}
	// test SSL cipher
	cipher, ok := aio.Cipher(client)
	check(t, ok && cipher.Name != "" && cipher.Version != "" && cipher.SecretBits > 0, "cipher: ", cipher)
	// test SSL object
	sslobj := aio.TLSConn(client)
	if check2(t, sslobj != nil, "ssl_object") {
		eq(t, tls.CipherSuiteName(sslobj.ConnectionState().CipherSuite), cipher.Name, "sslobj.cipher() == cipher")
	}
}

func basetestCreateSSLConnection(t *testing.T, tk *asyncio.T, pr *myProto, tr aio.Transport, err error, checkSockname bool, peername net.Addr) error {
	if err != nil {
		return err
	}
	check(t, aio.TLSConn(tr) != nil, "an SSL transport")
	checkSSLExtraInfo(t, tr, checkSockname, peername, "")
	if _, err := pr.done.Await(tk); err != nil {
		return err
	}
	check(t, pr.nbytes > 0, "pr.nbytes > 0")
	tr.Close()
	return nil
}

func testCreateSSLConnection(t *testing.T, unixSocket bool) {
	serverCfg, clientCfg := testCerts(t)
	run(t, func(tk *asyncio.T) error {
		(&recorder{}).handle(tk.Loop()) // the failed handshake's report
		return withServer(t, tk, unixSocket, func(h *httpd) error {
			createConnection := func(cfg *tls.Config) (*myProto, aio.Transport, error) {
				pr := newMyProto(t, tk)
				factory := func() aio.Protocol { return pr }
				var tr aio.Transport
				var err error
				if unixSocket {
					cfg = cfg.Clone()
					cfg.ServerName = "127.0.0.1" // server_hostname='127.0.0.1'
					tr, _, err = aio.CreateUnixConnection(tk, factory, h.path, aio.WithTLS(cfg))
				} else {
					tr, _, err = aio.CreateConnection(tk, factory, h.host, h.port, aio.WithTLS(cfg))
				}
				return pr, tr, err
			}
			var peername net.Addr = h.address()
			if unixSocket {
				peername = &net.UnixAddr{Name: h.path, Net: "unix"}
			}
			pr, tr, err := createConnection(clientCfg) // ssl=test_utils.dummy_ssl_context()
			if err := basetestCreateSSLConnection(t, tk, pr, tr, err, true, peername); err != nil {
				return err
			}
			// (ssl=True with ssl.create_default_context mocked to return a
			// context that does not verify: the same as above here.)

			// With the real default context, certificate validation will
			// fail
			_, _, err = createConnection(&tls.Config{})
			check(t, isCertVerificationError(err), "CERTIFICATE_VERIFY_FAILED: ", err)
			return nil
		}, aio.WithTLS(serverCfg))
	})
}

func TestEvents_test_create_ssl_connection(t *testing.T) { testCreateSSLConnection(t, false) }

func TestEvents_test_create_ssl_unix_connection(t *testing.T) { testCreateSSLConnection(t, true) }

// myBaseProto is MyBaseProto: MyProto without the GET it sends.
type myBaseProto struct{ *myProto }

func (p *myBaseProto) ConnectionMade(tr aio.Transport) {
	p.transport = tr
	p.assertState("INITIAL")
	p.state = "CONNECTED"
	p.connected.SetResult(struct{}{})
}

// makeSSLServer is _make_ssl_server (unixPath "") or
// _make_ssl_unix_server.
func makeSSLServer(t *testing.T, tk *asyncio.T, proto *myProto, cfg *tls.Config, unixSocket bool) (server *aio.Server, path string, err error) {
	factory := func() aio.Protocol { return proto }
	if unixSocket {
		path = filepath.Join(t.TempDir(), "sock")
		server, err = aio.CreateUnixServer(tk, factory, path, aio.WithTLS(cfg))
		return server, path, err
	}
	server, err = aio.CreateServer(tk, factory, "127.0.0.1", 0, aio.WithTLS(cfg))
	if err == nil {
		host, _ := getsockname(t, server.Sockets()[0])
		eq(t, host, "127.0.0.1")
	}
	return server, "", err
}

func testCreateServerSSL(t *testing.T, unixSocket bool) {
	serverCfg, clientCfg := testCerts(t)
	run(t, func(tk *asyncio.T) error {
		proto := newMyProto(t, tk)
		server, path, err := makeSSLServer(t, tk, proto, serverCfg, unixSocket)
		if err != nil {
			return err
		}
		pr := &myBaseProto{newMyProto(t, tk)}
		var client aio.Transport
		if unixSocket {
			client, _, err = aio.CreateUnixConnection(tk, func() aio.Protocol { return pr }, path, aio.WithTLS(clientCfg))
		} else {
			a := server.Addr().(*net.TCPAddr)
			client, _, err = aio.CreateConnection(tk, func() aio.Protocol { return pr }, a.IP.String(), a.Port, aio.WithTLS(clientCfg))
		}
		if err != nil {
			return err
		}
		noErr(t, client.Write([]byte("xxx")))
		if _, err := proto.connected.Await(tk); err != nil {
			return err
		}
		eq(t, proto.state, "CONNECTED")
		if err := runUntilTask(tk, func() bool { return proto.nbytes > 0 }); err != nil {
			return err
		}
		eq(t, proto.nbytes, 3)
		if !unixSocket {
			// extra info is available
			checkSSLExtraInfo(t, client, true, server.Addr(), "")
		}
		// close connection
		proto.transport.Close()
		if _, err := proto.done.Await(tk); err != nil {
			return err
		}
		eq(t, proto.state, "CLOSED")
		client.Close()
		// stop serving
		server.Close()
		return server.WaitClosed(tk)
	})
}

func TestEvents_test_create_server_ssl(t *testing.T) { testCreateServerSSL(t, false) }

func TestEvents_test_create_unix_server_ssl(t *testing.T) { testCreateServerSSL(t, true) }

// testCreateServerSSLFails is test_create_server_ssl_verify_failed (no CA
// loaded), test_create_unix_server_ssl_verify_failed (server_hostname
// 'invalid') and test_create_server_ssl_match_failed (the CA, but
// 127.0.0.1 is not the certificate's name).
func testCreateServerSSLFails(t *testing.T, unixSocket bool, clientCfg *tls.Config, serverCfg *tls.Config, want func(error) bool) {
	run(t, func(tk *asyncio.T) error {
		(&recorder{}).handle(tk.Loop()) // call_exception_handler mocked
		proto := newMyProto(t, tk)
		server, path, err := makeSSLServer(t, tk, proto, serverCfg, unixSocket)
		if err != nil {
			return err
		}
		factory := func() aio.Protocol { return newMyProto(t, tk) }
		if unixSocket {
			_, _, err = aio.CreateUnixConnection(tk, factory, path, aio.WithTLS(clientCfg))
		} else {
			a := server.Addr().(*net.TCPAddr)
			_, _, err = aio.CreateConnection(tk, factory, a.IP.String(), a.Port, aio.WithTLS(clientCfg))
		}
		check(t, want(err), "the handshake failed: ", err)
		// execute the loop to log the connection error
		noErr(t, asyncio.Sleep(tk, 0))
		noErr(t, asyncio.Sleep(tk, 0))
		// close connection
		check(t, proto.transport == nil, "proto.transport is None")
		server.Close()
		server.AbortClients()
		return server.WaitClosed(tk)
	})
}

func TestEvents_test_create_server_ssl_verify_failed(t *testing.T) {
	serverCfg, _ := signedCerts(t)
	// no CA loaded
	testCreateServerSSLFails(t, false, &tls.Config{}, serverCfg, isCertVerificationError)
}

func TestEvents_test_create_unix_server_ssl_verify_failed(t *testing.T) {
	serverCfg, _ := signedCerts(t)
	// no CA loaded
	testCreateServerSSLFails(t, true, &tls.Config{ServerName: "invalid"}, serverCfg, isCertVerificationError)
}

func TestEvents_test_create_server_ssl_match_failed(t *testing.T) {
	serverCfg, ca := signedCerts(t)
	// incorrect server_hostname
	testCreateServerSSLFails(t, false, &tls.Config{RootCAs: ca}, serverCfg, func(err error) bool {
		var he x509.HostnameError
		return errors.As(err, &he) && he.Host == "127.0.0.1"
	})
}

func testCreateServerSSLVerified(t *testing.T, unixSocket bool) {
	serverCfg, ca := signedCerts(t)
	run(t, func(tk *asyncio.T) error {
		proto := newMyProto(t, tk)
		server, path, err := makeSSLServer(t, tk, proto, serverCfg, unixSocket)
		if err != nil {
			return err
		}
		// Connection succeeds with correct CA and server hostname.
		clientCfg := &tls.Config{RootCAs: ca, ServerName: "localhost"}
		pr := newMyProto(t, tk)
		var client aio.Transport
		if unixSocket {
			client, _, err = aio.CreateUnixConnection(tk, func() aio.Protocol { return pr }, path, aio.WithTLS(clientCfg))
		} else {
			a := server.Addr().(*net.TCPAddr)
			client, _, err = aio.CreateConnection(tk, func() aio.Protocol { return pr }, a.IP.String(), a.Port, aio.WithTLS(clientCfg))
		}
		if err != nil {
			return err
		}
		if _, err := proto.connected.Await(tk); err != nil {
			return err
		}
		if !unixSocket {
			// extra info is available (peercert=test_utils.PEERCERT)
			checkSSLExtraInfo(t, client, true, server.Addr(), "localhost")
		}
		// close connection
		proto.transport.Close()
		client.Close()
		server.Close()
		if _, err := proto.done.Await(tk); err != nil {
			return err
		}
		return server.WaitClosed(tk)
	})
}

func TestEvents_test_create_unix_server_ssl_verified(t *testing.T) {
	testCreateServerSSLVerified(t, true)
}

func TestEvents_test_create_server_ssl_verified(t *testing.T) { testCreateServerSSLVerified(t, false) }
