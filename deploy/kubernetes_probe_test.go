package deploy_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/internal/faultproxy"
	"github.com/sluice-dev/sluice/internal/realtest"
	"github.com/sluice-dev/sluice/internal/redistest"
)

// TestKubernetesReadinessProbeOutwaitsAStoreThatDoesNotAnswer runs the
// image's binary on the ConfigMap's configuration, its Redis behind a proxy
// that then stops passing Redis's answers on (a partition, a node gone
// without a reset, not a refused connection). /readyz waits for the store's
// PING — within store.redis.timeout, and never more than sluice's own cap
// on a probe, whatever the timeout — then answers 200 (on_store_error local
// decides meanwhile). The readiness probe's timeoutSeconds must outlast the
// longest of those waits, so the store's timeout is raised here to 10s, an
// operator's edit the probe must survive: shorter, the kubelet counts each
// probe as failed, every replica leaves the Service at once, and a Redis
// outage becomes an outage of the API.
func TestKubernetesReadinessProbeOutwaitsAStoreThatDoesNotAnswer(t *testing.T) {
	t.Parallel()
	kinds := readManifests(t)
	img := theImage(t)
	pr := kinds["Deployment"].Spec.Template.Spec.Containers[0].ReadinessProbe
	if pr == nil || pr.HTTPGet == nil {
		t.Fatal("the container has no HTTP readiness probe")
	}
	// TestKubernetesManifestsNameWhatSluiceServes checks that the probe is
	// on the admin listener.
	timeout := time.Second
	if pr.TimeoutSeconds != nil {
		timeout = time.Duration(*pr.TimeoutSeconds) * time.Second
	}

	redis := redistest.Standalone(t)
	proxy, err := faultproxy.New(redis.Addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { proxy.Close() })
	cfg := realtest.Replace(t, "the ConfigMap's sluice.yaml", kinds["ConfigMap"].Data["sluice.yaml"],
		`addresses: ["redis.default.svc.cluster.local:6379"]`, `addresses: ["`+proxy.Addr()+`"]`,
		"timeout: 50ms", "timeout: 10s")
	public, admin := realtest.FreeAddr(t), realtest.FreeAddr(t)
	serveWith(t, public, admin, img.command(t, writeFile(t, "sluice.yaml", cfg), public, admin)...)

	proxy.SetLatency(time.Hour)
	start := time.Now()
	code, body, _ := get(t, "http://"+admin+pr.HTTPGet.Path, "")
	took := time.Since(start)
	if !strings.Contains(body, "not reachable") {
		t.Fatalf("GET %s with Redis not answering: %d %q after %v; want an answer that the store is not reachable", pr.HTTPGet.Path, code, body, took)
	}
	if code != http.StatusOK {
		t.Errorf("GET %s with Redis not answering: %d %q, want 200: on_store_error local decides meanwhile", pr.HTTPGet.Path, code, body)
	}
	if took >= timeout {
		t.Errorf("GET %s took %v with Redis not answering: the readiness probe's timeoutSeconds (%v) must outlast it, or every replica turns unready when Redis stops answering",
			pr.HTTPGet.Path, took.Round(time.Millisecond), timeout)
	}
	t.Logf("GET %s with Redis not answering: %d %q after %v (probe timeout %v)", pr.HTTPGet.Path, code, body, took.Round(time.Millisecond), timeout)
}
