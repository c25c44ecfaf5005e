package mailertest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"time"
)

// TB is what the test servers need of a test: *testing.T and
// *testing.B are one; the mailfakes command has its own, so browser
// tests run the same servers.
type TB interface {
	Helper()
	Fatal(args ...any)
	Cleanup(func())
}

// Cert is a certificate for 127.0.0.1 and localhost, signed by a test
// certificate authority of its own: servers present TLS, clients trust
// Roots.
type Cert struct {
	TLS   tls.Certificate
	Leaf  *x509.Certificate
	Roots *x509.CertPool
	// CAPEM is the authority's certificate in PEM, for a process that
	// reads its roots from a file.
	CAPEM []byte
	key   *ecdsa.PrivateKey
}

// NewCert generates a certificate authority and a server certificate
// for 127.0.0.1, ::1 and localhost (and the extra DNS names given).
func NewCert(t TB, dnsNames ...string) *Cert {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	ca := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "contactbook test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, _ := x509.ParseCertificate(caDER)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	leaf := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "localhost"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		DNSNames:    append([]string{"localhost"}, dnsNames...),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("::1")},
		KeyUsage:    x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, leaf, caCert, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	leafCert, _ := x509.ParseCertificate(der)
	roots := x509.NewCertPool()
	roots.AddCert(caCert)
	return &Cert{
		TLS:  tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leafCert},
		Leaf: leafCert, Roots: roots, key: key,
		CAPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
	}
}

// ServerConfig is a TLS configuration presenting the certificate.
func (c *Cert) ServerConfig() *tls.Config {
	return &tls.Config{Certificates: []tls.Certificate{c.TLS}, MinVersion: tls.VersionTLS12}
}

// LeafPEM is the server certificate in PEM.
func (c *Cert) LeafPEM() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Leaf.Raw})
}
