package deploy_test

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/internal/realtest"
	"github.com/sluice-dev/sluice/internal/redistest"
)

// TestKubernetesPodStopsWithinItsGracePeriod runs the image's command on the
// ConfigMap's configuration and sends it SIGTERM, as the kubelet does, with
// a request in flight that its upstream answers after shutdown.delay: during
// the delay /readyz answers 503 while the public listener still serves; the
// request in flight is answered in full; and the process exits, with
// status 0, before terminationGracePeriodSeconds, when the kubelet would
// SIGKILL it.
func TestKubernetesPodStopsWithinItsGracePeriod(t *testing.T) {
	t.Parallel()
	kinds := readManifests(t)
	img := theImage(t)
	grace := 30 * time.Second
	if g := kinds["Deployment"].Spec.Template.Spec.TerminationGracePeriodSeconds; g != nil {
		grace = time.Duration(*g) * time.Second
	}
	sd := servedConfig(t, kinds["ConfigMap"]).Shutdown
	if sd.Delay <= 0 || sd.Drain <= time.Second {
		t.Fatalf("the ConfigMap's shutdown is %+v: want a delay and a drain of more than a second", sd)
	}
	// The request in flight at SIGTERM is answered within the drain that
	// follows the delay.
	slow := sd.Delay + sd.Drain/4
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			time.Sleep(slow)
		}
		w.Write([]byte("answered"))
	}))
	t.Cleanup(upstream.Close)

	redis := redistest.Standalone(t)
	cfg := realtest.Replace(t, "the ConfigMap's sluice.yaml", kinds["ConfigMap"].Data["sluice.yaml"],
		`addresses: ["redis.default.svc.cluster.local:6379"]`, `addresses: ["`+redis.Addr+`"]`,
		"upstream: http://api.default.svc.cluster.local:8000", "upstream: "+upstream.URL)
	public, admin := realtest.FreeAddr(t), realtest.FreeAddr(t)
	args := img.command(t, writeFile(t, "sluice.yaml", cfg), public, admin)
	cmd := exec.Command(args[0], args[1:]...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
		if t.Failed() {
			t.Logf("sluice output:\n%s", out.String())
		}
	})
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if code, _, _ := get(t, "http://"+admin+"/readyz", ""); code == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("sluice serve not ready within 15 s")
		}
	}

	type answer struct {
		code int
		body string
	}
	inFlight := make(chan answer, 1)
	go func() {
		code, body, _ := get(t, "http://"+public+"/slow", "")
		inFlight <- answer{code, body}
	}()
	time.Sleep(500 * time.Millisecond) // the request reaches the upstream
	start := time.Now()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}

	time.Sleep(sd.Delay / 2)
	if code, body, _ := get(t, "http://"+admin+"/readyz", ""); code != http.StatusServiceUnavailable {
		t.Errorf("during shutdown.delay, /readyz answered %d %q, want 503 (the Service must drop the pod)", code, body)
	}
	if code, body, _ := get(t, "http://"+public+"/fast", ""); code != http.StatusOK {
		t.Errorf("during shutdown.delay, a new request was answered %d %q, want 200 (the nodes still route to the pod)", code, body)
	}

	select {
	case err := <-exited:
		exited <- err
		took := time.Since(start)
		if err != nil {
			t.Errorf("after SIGTERM, sluice exited with %v after %v, want status 0", err, took.Round(time.Millisecond))
		}
		if took >= grace {
			t.Errorf("after SIGTERM, sluice exited after %v, past terminationGracePeriodSeconds %v", took.Round(time.Millisecond), grace)
		}
		t.Logf("after SIGTERM, sluice exited after %v (grace %v)", took.Round(time.Millisecond), grace)
	case <-time.After(grace):
		t.Fatalf("sluice still runs %v after SIGTERM: the kubelet SIGKILLs it there", grace)
	}
	if a := <-inFlight; a.code != http.StatusOK || a.body != "answered" {
		t.Errorf("the request in flight at SIGTERM was answered %d %q, want 200 \"answered\"", a.code, a.body)
	}
}
