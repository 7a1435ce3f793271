package deploy_test

import (
	"crypto/tls"
	"net"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/sluice-dev/sluice/internal/realtest"
	"github.com/sluice-dev/sluice/internal/redistest"
	"github.com/sluice-dev/sluice/internal/testpki"
)

// probeSpec is a probe as docs/operations.md shows it.
type probeSpec struct {
	HTTPGet *struct {
		Path, Port, Scheme string
	} `yaml:"httpGet"`
	TCPSocket *struct{ Port string } `yaml:"tcpSocket"`
}

// TestKubernetesProbesWithAdminTLS: the probes docs/operations.md gives for
// an admin listener with admin.tls, and for one that also asks its
// callers for a client certificate (admin.tls.client_ca_file), succeed as
// the kubelet makes them — HTTPS without verifying the certificate and
// without one of its own — on the image's binary serving the ConfigMap's
// configuration so changed; and the deployment's probes, plain HTTP, do
// not. Without those probes every probe fails once admin.tls is on, and the
// kubelet restarts every pod.
func TestKubernetesProbesWithAdminTLS(t *testing.T) {
	t.Parallel()
	doc := readFile(t, "../docs/operations.md")
	start := strings.Index(doc, "\n## Kubernetes\n")
	if start < 0 {
		t.Fatal("docs/operations.md has no ## Kubernetes section")
	}
	section := doc[start+1:]
	if end := strings.Index(section[3:], "\n## "); end >= 0 {
		section = section[:end+3]
	}
	var withTLS, withClientCA map[string]probeSpec
	for _, m := range regexp.MustCompile("(?ms)^ *```yaml\n(.*?)^ *```").FindAllStringSubmatch(section, -1) {
		var probes map[string]probeSpec
		if err := yaml.Unmarshal([]byte(m[1]), &probes); err != nil || probes["livenessProbe"] == (probeSpec{}) {
			continue
		}
		if strings.Contains(m[1], "tcpSocket") {
			withClientCA = probes
		} else if strings.Contains(m[1], "scheme: HTTPS") {
			withTLS = probes
		}
	}
	if withTLS == nil || withClientCA == nil {
		t.Fatalf("docs/operations.md's Kubernetes section shows the probes for admin.tls (HTTPS): %v, and for admin.tls.client_ca_file (the kubelet presents no certificate): %v; want both",
			withTLS != nil, withClientCA != nil)
	}

	kinds := readManifests(t)
	img := theImage(t)
	redis := redistest.Standalone(t)
	dir := t.TempDir()
	ca := testpki.New(t, "admin CA")
	certPEM, keyPEM := serverPEM(t, ca, "admin")
	writeSecret(t, dir+"/admin.crt", certPEM)
	writeSecret(t, dir+"/admin.key", keyPEM)
	writeSecret(t, dir+"/admin-ca.crt", []byte(readFile(t, ca.File("ca"))))
	c := kinds["Deployment"].Spec.Template.Spec.Containers[0]

	for _, tc := range []struct {
		name   string
		tls    string
		probes map[string]probeSpec
	}{
		{"admin.tls", "{cert_file: " + dir + "/admin.crt, key_file: " + dir + "/admin.key}", withTLS},
		{"admin.tls.client_ca_file", "{cert_file: " + dir + "/admin.crt, key_file: " + dir + "/admin.key, client_ca_file: " + dir + "/admin-ca.crt}", withClientCA},
	} {
		cfg := realtest.Replace(t, "the ConfigMap's sluice.yaml", kinds["ConfigMap"].Data["sluice.yaml"],
			`addresses: ["redis.default.svc.cluster.local:6379"]`, `addresses: ["`+redis.Addr+`"]`,
			"  loopback_scopes: []", "  loopback_scopes: []\n  tls: "+tc.tls)
		public, admin := realtest.FreeAddr(t), realtest.FreeAddr(t)
		realtest.Start(t, "sluice", "", nil, admin, img.command(t, writeFile(t, "sluice.yaml", cfg), public, admin)...)
		addrs := map[string]string{"http": public, "admin": admin}
		for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			if code, _, _ := get(t, "http://"+public+"/healthz", ""); code == http.StatusOK {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: the public listener does not answer /healthz", tc.name)
			}
		}
		for name, p := range tc.probes {
			if err := kubeletProbe(p, addrs); err != nil {
				t.Errorf("with %s, the %s docs/operations.md gives fails: %v", tc.name, name, err)
			}
		}
		for name, p := range map[string]*probe{"livenessProbe": c.LivenessProbe, "readinessProbe": c.ReadinessProbe} {
			if p == nil || p.HTTPGet == nil {
				continue
			}
			port, _ := p.HTTPGet.Port.(string)
			shipped := probeSpec{HTTPGet: &struct{ Path, Port, Scheme string }{Path: p.HTTPGet.Path, Port: port}}
			if err := kubeletProbe(shipped, addrs); err == nil && port == "admin" {
				t.Errorf("with %s, deployment.yaml's %s (plain HTTP on the admin port) succeeds: want it to fail, as the docs say", tc.name, name)
			}
		}
	}
}

// kubeletProbe probes addrs (by port name) as the kubelet does: an HTTP GET
// answered 2xx or 3xx, over TLS it does not verify and without a client
// certificate for scheme HTTPS; or a TCP connection.
func kubeletProbe(p probeSpec, addrs map[string]string) error {
	switch {
	case p.TCPSocket != nil:
		conn, err := net.DialTimeout("tcp", addrs[p.TCPSocket.Port], time.Second)
		if err == nil {
			conn.Close()
		}
		return err
	case p.HTTPGet != nil:
		scheme := strings.ToLower(p.HTTPGet.Scheme)
		if scheme == "" {
			scheme = "http"
		}
		c := http.Client{Timeout: 3 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
		resp, err := c.Get(scheme + "://" + addrs[p.HTTPGet.Port] + p.HTTPGet.Path)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode < 200 || resp.StatusCode >= 400 {
			return &probeStatus{resp.Status}
		}
		return nil
	}
	return &probeStatus{"neither httpGet nor tcpSocket"}
}

// probeStatus is a probe's failure that is no error of the connection.
type probeStatus struct{ what string }

func (p *probeStatus) Error() string { return p.what }
