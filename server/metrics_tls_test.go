package server_test

import (
	"bufio"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/internal/testpki"
)

// expirySeries is the series of the expiry of the certificates of use.
func expirySeries(use string) string {
	return `sluice_tls_certificate_expiry_timestamp_seconds{use="` + use + `"}`
}

// sluice_tls_certificate_expiry_timestamp_seconds says, for each use of a
// certificate the configuration names, when it expires: the NotAfter of
// the certificate each listener serves, of the client certificates sluice
// presents to the upstream and to Redis, and the earliest of each bundle
// of CAs it trusts. Each follows a renewal: the public listener's once its
// files are rewritten (the watcher reloads them), Redis's client
// certificate once its file is (it is read for each new connection).
func TestCertificateExpiryIsExported(t *testing.T) {
	ca := testpki.New(t, "expiry CA")
	// x509 validity has whole seconds: certificates issued a second apart
	// expire a second apart, so that no use can be taken for another.
	admin := leafOf(t, ca.Server(t, "admin"))
	time.Sleep(1100 * time.Millisecond)
	public := leafOf(t, ca.Server(t, "public"))
	upstreamClient := leafOf(t, ca.ClientUntil(t, "upstream-client", time.Now().Add(3*time.Hour)))
	redisClient := leafOf(t, ca.ClientUntil(t, "redis-client", time.Now().Add(4*time.Hour)))
	scraper := ca.Client(t, "prometheus")
	caCert := readCert(t, ca.File("ca"))
	// The upstream's bundle: the CA and another that expires sooner,
	// which is the bundle's expiry.
	sooner := time.Now().Add(30 * time.Minute).Truncate(time.Second)
	bundle := filepath.Join(ca.Dir, "upstream-bundle.pem")
	writeBundle(t, bundle, ca.File("ca"), selfSigned(t, "sooner CA", sooner))

	dir := t.TempDir()
	srv, _ := loadServer(t, dir, `
tls: {cert_file: `+ca.File("public")+`, key_file: `+ca.KeyFile("public")+`}
admin:
  tls: {cert_file: `+ca.File("admin")+`, key_file: `+ca.KeyFile("admin")+`, client_ca_file: `+ca.File("ca")+`}
  callers: [{name: prometheus, certificate: prometheus, scopes: [read]}]
upstream: https://127.0.0.1:1
upstream_tls: {ca_file: `+bundle+`, cert_file: `+ca.File("upstream-client")+`, key_file: `+ca.KeyFile("upstream-client")+`}
store:
  type: redis
  redis:
    addresses: ["127.0.0.1:1"]
    tls: {ca_file: `+ca.File("ca")+`, cert_file: `+ca.File("redis-client")+`, key_file: `+ca.KeyFile("redis-client")+`}
plans:
  free: {limits: [{name: m, algorithm: gcra, quantity: 10, window: 1m}]}
`, true)
	addrs := serveOn(t, srv)
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: ca.Pool, Certificates: []tls.Certificate{scraper}, MinVersion: tls.VersionTLS12}}}
	t.Cleanup(client.CloseIdleConnections)
	scrapeTLS := func() map[string]float64 {
		t.Helper()
		resp, err := client.Get("https://" + addrs.admin + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("/metrics: %s", resp.Status)
		}
		return parseMetrics(t, resp.Body)
	}

	got := scrapeTLS()
	for use, want := range map[string]time.Time{
		"public": public.NotAfter, "admin": admin.NotAfter, "admin-client-ca": caCert.NotAfter,
		"upstream-client": upstreamClient.NotAfter, "upstream-ca": sooner,
		"redis-client": redisClient.NotAfter, "redis-ca": caCert.NotAfter,
	} {
		if v, ok := got[expirySeries(use)]; !ok || v != float64(want.Unix()) {
			t.Errorf("%s = %v (exported: %v), want %d (%s)", expirySeries(use), v, ok, want.Unix(), want.UTC())
		}
	}

	// The public listener's certificate renewed in place (certbot): the
	// series follows once the listener serves the new one.
	time.Sleep(1100 * time.Millisecond)
	renewed := leafOf(t, ca.Server(t, "public"))
	if renewed.NotAfter.Equal(public.NotAfter) {
		t.Fatal("the renewed certificate expires when the first does")
	}
	deadline := time.Now().Add(10 * time.Second)
	for got := scrapeTLS()[expirySeries("public")]; got != float64(renewed.NotAfter.Unix()); got = scrapeTLS()[expirySeries("public")] {
		if time.Now().After(deadline) {
			t.Fatalf("10 s after the public certificate was renewed, %s = %v, want %d", expirySeries("public"), got, renewed.NotAfter.Unix())
		}
		time.Sleep(50 * time.Millisecond)
	}
	// A certificate file that does not go with its key: the reload is
	// refused, the listener serves the certificate it served, and the
	// series says when that one expires, not the file's.
	adminPEM, err := os.ReadFile(ca.File("admin"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ca.File("public"), adminPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	deadline = time.Now().Add(10 * time.Second)
	for scrapeTLS()["sluice_config_last_reload_successful"] != 0 {
		if time.Now().After(deadline) {
			t.Fatal("10 s after the public certificate was replaced by one of another key, the reload was not refused")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if v := scrapeTLS()[expirySeries("public")]; v != float64(renewed.NotAfter.Unix()) {
		t.Errorf("after a refused reload, %s = %v, want %d: the certificate still served", expirySeries("public"), v, renewed.NotAfter.Unix())
	}
	// Redis's client certificate renewed on disk: the next connection
	// presents it, and the next scrape says so.
	redisRenewed := leafOf(t, ca.ClientUntil(t, "redis-client", time.Now().Add(5*time.Hour)))
	if v := scrapeTLS()[expirySeries("redis-client")]; v != float64(redisRenewed.NotAfter.Unix()) {
		t.Errorf("after Redis's client certificate was renewed, %s = %v, want %d", expirySeries("redis-client"), v, redisRenewed.NotAfter.Unix())
	}
}

// Without TLS anywhere, no certificate's expiry is exported: an alert on
// it has nothing to fire on.
func TestCertificateExpiryIsAbsentWithoutTLS(t *testing.T) {
	f := newFixture(t, testConfig)
	if m := readAll(t, f.do(t, "GET", "/metrics", "", nil)); strings.Contains(m, "sluice_tls_certificate_expiry_timestamp_seconds{") {
		t.Errorf("/metrics exports certificate expiries without TLS:\n%s", grepLines(m, "sluice_tls_certificate_expiry_timestamp_seconds"))
	}
}

// leafOf returns the parsed leaf of c.
func leafOf(t *testing.T, c tls.Certificate) *x509.Certificate {
	t.Helper()
	leaf, err := x509.ParseCertificate(c.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	return leaf
}

// readCert parses the first certificate of the PEM file name.
func readCert(t *testing.T, name string) *x509.Certificate {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(b)
	if block == nil {
		t.Fatalf("%s holds no PEM block", name)
	}
	c, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// selfSigned returns the PEM of a self-signed CA certificate named name
// that expires at notAfter.
func selfSigned(t *testing.T, name string, notAfter time.Time) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: notAfter,
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

// writeBundle writes to name the PEM file first followed by more.
func writeBundle(t *testing.T, name, first string, more ...[]byte) {
	t.Helper()
	b, err := os.ReadFile(first)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range more {
		b = append(b, m...)
	}
	if err := os.WriteFile(name, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// parseMetrics reads a /metrics answer into series → value.
func parseMetrics(t *testing.T, r io.Reader) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			t.Fatalf("/metrics line %q: %v", line, err)
		}
		out[line[:i]] = v
	}
	return out
}
