package deploy_test

import (
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/internal/realtest"
	"github.com/sluice-dev/sluice/internal/redistest"
)

// TestKubernetesConfigMapUpdateIsReloaded runs the image's command on the
// ConfigMap's configuration mounted as the kubelet mounts the Deployment's
// volume (sluice.yaml a link to ..data/sluice.yaml, ..data a link to a
// folder of the version, swapped by a rename at each update of the
// ConfigMap, the old folder then removed), and updates it as the kubelet
// does: the process reloads the new configuration by itself, as the
// ConfigMap's header promises, with no SIGHUP (which nothing sends in a
// pod).
func TestKubernetesConfigMapUpdateIsReloaded(t *testing.T) {
	t.Parallel()
	kinds := readManifests(t)
	vols := kinds["Deployment"].Spec.Template.Spec.Volumes
	if len(vols) != 1 || vols[0].ConfigMap == nil || vols[0].ConfigMap.Name != kinds["ConfigMap"].Metadata.Name {
		t.Fatalf("the Deployment's volumes are %+v, want the ConfigMap's alone", vols)
	}
	img := theImage(t)
	redis := redistest.Standalone(t)
	cfg := realtest.Replace(t, "the ConfigMap's sluice.yaml", kinds["ConfigMap"].Data["sluice.yaml"],
		`addresses: ["redis.default.svc.cluster.local:6379"]`, `addresses: ["`+redis.Addr+`"]`)

	mount := t.TempDir()
	version := func(name, text string) {
		t.Helper()
		if err := os.Mkdir(filepath.Join(mount, name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(mount, name, "sluice.yaml"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	link := func(target, name string) { // as the kubelet's atomic writer: a new link renamed over the old
		t.Helper()
		if err := os.Symlink(target, filepath.Join(mount, name+"_tmp")); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(filepath.Join(mount, name+"_tmp"), filepath.Join(mount, name)); err != nil {
			t.Fatal(err)
		}
	}
	version("..2026_12_05_01", cfg)
	link("..2026_12_05_01", "..data")
	link("..data/sluice.yaml", "sluice.yaml")

	public, admin := realtest.FreeAddr(t), realtest.FreeAddr(t)
	serveWith(t, public, admin, img.command(t, filepath.Join(mount, "sluice.yaml"), public, admin)...)
	configInfo := regexp.MustCompile(`sluice_config_info\{sha256="([0-9a-f]+)"\} 1`)
	digest := func() (string, string) {
		code, body, _ := get(t, "http://"+admin+"/metrics", exampleToken)
		if code != http.StatusOK {
			t.Fatalf("/metrics with the Prometheus token: %d", code)
		}
		m := configInfo.FindStringSubmatch(body)
		if m == nil {
			t.Fatalf("/metrics has no sluice_config_info:\n%s", grepLines(body, "sluice_config"))
		}
		return m[1], grepLines(body, "sluice_config_")
	}
	before, _ := digest()

	// The ConfigMap updated long after the pod started: past the start of
	// the watch.
	time.Sleep(time.Second)
	updated := realtest.Replace(t, "the ConfigMap's sluice.yaml", cfg,
		"{name: per-minute, algorithm: sliding-window-counter, quantity: 60, window: 1m}",
		"{name: per-minute, algorithm: sliding-window-counter, quantity: 30, window: 1m}")
	version("..2026_12_05_02", updated)
	link("..2026_12_05_02", "..data")
	if err := os.RemoveAll(filepath.Join(mount, "..2026_12_05_01")); err != nil {
		t.Fatal(err)
	}
	swapped := time.Now()
	for deadline := swapped.Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		after, lines := digest()
		if after != before && strings.Contains(lines, `sluice_config_reloads_total{result="ok"} 1`) &&
			strings.Contains(lines, "sluice_config_last_reload_successful 1") {
			t.Logf("the update in force %v after the swap", time.Since(swapped).Round(10*time.Millisecond))
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("10 s after the ConfigMap's update, the configuration in force is still %s, want the update's:\n%s", before, lines)
		}
	}
}
