package server_test

import (
	"net/http"
	"os"
	"testing"

	"github.com/sluice-dev/sluice/internal/testpki"
)

// A certificate file sluice reads for each new connection (here Redis's
// client certificate) that cannot be read at a scrape has no expiry to
// export, and an alert on the expiry cannot fire on a series that is not
// there: sluice_tls_certificate_unreadable says 1 for it, and 0 again once
// the file is back.
func TestAnUnreadableCertificateFileIsExported(t *testing.T) {
	ca := testpki.New(t, "unreadable CA")
	ca.Client(t, "redis-client")
	srv, _ := loadServer(t, t.TempDir(), `
store:
  type: redis
  redis:
    addresses: ["127.0.0.1:1"]
    tls: {ca_file: `+ca.File("ca")+`, cert_file: `+ca.File("redis-client")+`, key_file: `+ca.KeyFile("redis-client")+`}
plans:
  free: {limits: [{name: m, algorithm: gcra, quantity: 10, window: 1m}]}
`)
	addrs := serveOn(t, srv)
	scrape := func() map[string]float64 {
		t.Helper()
		resp, err := http.Get("http://" + addrs.admin + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		return parseMetrics(t, resp.Body)
	}
	const client, bundle = `sluice_tls_certificate_unreadable{use="redis-client"}`, `sluice_tls_certificate_unreadable{use="redis-ca"}`
	got := scrape()
	for _, s := range []string{client, bundle} {
		if v, ok := got[s]; !ok || v != 0 {
			t.Errorf("with every file readable, %s = %v (exported: %v), want 0", s, v, ok)
		}
	}

	pem, err := os.ReadFile(ca.File("redis-client"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(ca.File("redis-client")); err != nil {
		t.Fatal(err)
	}
	got = scrape()
	if v, ok := got[client]; !ok || v != 1 {
		t.Errorf("with Redis's client certificate gone, %s = %v (exported: %v), want 1", client, v, ok)
	}
	if v, ok := got[expirySeries("redis-client")]; ok {
		t.Errorf("with Redis's client certificate gone, %s = %v, want no series", expirySeries("redis-client"), v)
	}
	if v := got[bundle]; v != 0 {
		t.Errorf("%s = %v with the CA file untouched, want 0", bundle, v)
	}

	// A file with no certificate in it is as unreadable.
	if err := os.WriteFile(ca.File("redis-client"), []byte("not a certificate\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if v := scrape()[client]; v != 1 {
		t.Errorf("with no certificate in the file, %s = %v, want 1", client, v)
	}
	if err := os.WriteFile(ca.File("redis-client"), pem, 0o600); err != nil {
		t.Fatal(err)
	}
	got = scrape()
	if v := got[client]; v != 0 {
		t.Errorf("with the file back, %s = %v, want 0", client, v)
	}
	if _, ok := got[expirySeries("redis-client")]; !ok {
		t.Errorf("with the file back, no %s", expirySeries("redis-client"))
	}
}
