package deploy_test

import (
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/internal/realtest"
	"github.com/sluice-dev/sluice/internal/testpki"
)

// tlsScrapeLines matches the lines of deploy/prometheus/prometheus.yml,
// commented out, that scrape an admin listener with admin.tls.
var tlsScrapeLines = regexp.MustCompile(`(?m)^(\s*)# ((?:scheme|tls_config):.*)$`)

// TestPrometheusScrapesAnAdminListenerOverTLS: the lines prometheus.yml
// keeps for an admin listener with admin.tls (scheme https, the CA that
// signs its certificate), uncommented, make a real Prometheus scrape the
// image's binary serving deploy/sluice.yaml with admin.tls: up is 1. A
// scrape over plain HTTP is answered 400 and SluiceDown fires for every
// instance.
func TestPrometheusScrapesAnAdminListenerOverTLS(t *testing.T) {
	t.Parallel()
	text := readFile(t, "prometheus/prometheus.yml")
	if n := len(tlsScrapeLines.FindAllString(text, -1)); n != 2 {
		t.Fatalf("prometheus/prometheus.yml has %d commented lines for an admin listener with admin.tls, want scheme: https and tls_config", n)
	}
	dir := t.TempDir()
	ca := testpki.New(t, "admin CA")
	certPEM, keyPEM := serverPEM(t, ca, "admin")
	cert, key := filepath.Join(dir, "admin.crt"), filepath.Join(dir, "admin.key")
	writeSecret(t, cert, certPEM)
	writeSecret(t, key, keyPEM)
	text = tlsScrapeLines.ReplaceAllString(text, "$1$2")
	text = regexp.MustCompile(`ca_file: \S+?\}`).ReplaceAllString(text, "ca_file: "+ca.File("ca")+"}")

	img := theImage(t)
	cfg := realtest.Replace(t, "deploy/sluice.yaml", readFile(t, "sluice.yaml"),
		"  loopback_scopes: []", "  loopback_scopes: []\n  tls: {cert_file: "+cert+", key_file: "+key+"}")
	public, admin := realtest.FreeAddr(t), realtest.FreeAddr(t)
	realtest.Start(t, "sluice", "", nil, admin, img.command(t, writeFile(t, "sluice.yaml", cfg), public, admin)...)

	rules, err := filepath.Abs(rulesFile)
	if err != nil {
		t.Fatal(err)
	}
	promAddr := realtest.FreeAddr(t)
	realtest.Prometheus(t, promAddr, prometheusConfigOf(t, text, rules, writeFile(t, "token", exampleToken), admin))
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(time.Second) {
		n, err := promQuery("http://"+promAddr, `up{job="sluice"} == 1`)
		if err != nil {
			t.Fatal(err)
		}
		if n == 1 {
			break
		}
		if time.Now().After(deadline) {
			down, _ := promQuery("http://"+promAddr, `up{job="sluice"} == 0`)
			t.Fatalf("after 30 s, Prometheus with prometheus.yml's lines for admin.tls does not scrape the admin listener over TLS (%d targets down)", down)
		}
	}
}
