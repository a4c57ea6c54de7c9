package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"time"
)

// Files written by webhooks -init. The server trusts hookCAFile through
// LICENTIA_WEBHOOK_CA_FILE; the receiver presents hookCertFile.
const (
	hookCAFile   = "ca.pem"
	hookCAKey    = "ca.key"
	hookCertFile = "receiver.pem"
	hookCertKey  = "receiver.key"
)

// writeHookCerts makes a CA and a certificate for host signed by it in
// dir. The CA's key is kept so that more receiver certificates can be
// signed later; both keys are readable by the owner only.
func writeHookCerts(dir, host string, now time.Time) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	ca := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "loadgen webhook receiver CA"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.AddDate(1, 0, 0),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		return fmt.Errorf("create CA certificate: %w", err)
	}
	ca, err = x509.ParseCertificate(caDER)
	if err != nil {
		return err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	leaf := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: host},
		DNSNames:     []string{host},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.AddDate(1, 0, 0),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	leafDER, err := x509.CreateCertificate(rand.Reader, leaf, ca, &key.PublicKey, caKey)
	if err != nil {
		return fmt.Errorf("create receiver certificate: %w", err)
	}
	return errors.Join(
		writePEM(filepath.Join(dir, hookCAFile), "CERTIFICATE", caDER, 0o644),
		writeKey(filepath.Join(dir, hookCAKey), caKey),
		writePEM(filepath.Join(dir, hookCertFile), "CERTIFICATE", leafDER, 0o644),
		writeKey(filepath.Join(dir, hookCertKey), key),
	)
}

func serial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	return n
}

func writeKey(path string, k *ecdsa.PrivateKey) error {
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		return err
	}
	return writePEM(path, "PRIVATE KEY", der, 0o600)
}

func writePEM(path, typ string, der []byte, mode os.FileMode) error {
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), mode)
}

// loadHookCert reads the receiver's certificate from dir and returns it
// with the host name it was made for.
func loadHookCert(dir string) (tls.Certificate, string, error) {
	cert, err := tls.LoadX509KeyPair(filepath.Join(dir, hookCertFile), filepath.Join(dir, hookCertKey))
	if err != nil {
		return tls.Certificate{}, "", fmt.Errorf("load receiver certificate (run webhooks -init %s first): %w", dir, err)
	}
	if cert.Leaf == nil || len(cert.Leaf.DNSNames) == 0 {
		return tls.Certificate{}, "", fmt.Errorf("receiver certificate in %s names no host", dir)
	}
	return cert, cert.Leaf.DNSNames[0], nil
}
