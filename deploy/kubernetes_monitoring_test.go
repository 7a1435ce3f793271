package deploy_test

import (
	"net"
	"strconv"
	"testing"

	"go.yaml.in/yaml/v3"
)

// podMonitorFile is the Prometheus Operator's scrape of the Deployment's
// pods, outside the kustomization (it needs the operator's CRDs).
const podMonitorFile = "kubernetes/monitoring/podmonitor.yaml"

// TestKubernetesPodMonitorScrapesTheAdminListener: on a cluster whose
// Prometheus the Prometheus Operator runs (kube-prometheus-stack, the
// Prometheus networkpolicy.yaml lets in), the PodMonitor scrapes /metrics
// of every pod of the Deployment on the image's admin listener, with a
// bearer token from a Secret (/metrics needs the read scope), under the
// job the rules name (SluiceDown reads up{job="sluice"}).
func TestKubernetesPodMonitorScrapesTheAdminListener(t *testing.T) {
	t.Parallel()
	var pm struct {
		APIVersion string `yaml:"apiVersion"`
		Kind       string
		Spec       struct {
			JobLabel            string `yaml:"jobLabel"`
			Selector            any
			PodMetricsEndpoints []struct {
				Port, Path, Scheme string
				Authorization      *struct {
					Type        string
					Credentials struct{ Name, Key string }
				}
			} `yaml:"podMetricsEndpoints"`
		}
	}
	if err := yaml.Unmarshal([]byte(readFile(t, podMonitorFile)), &pm); err != nil {
		t.Fatalf("%s: %v", podMonitorFile, err)
	}
	if pm.APIVersion != "monitoring.coreos.com/v1" || pm.Kind != "PodMonitor" {
		t.Fatalf("%s: %s %s, want a monitoring.coreos.com/v1 PodMonitor", podMonitorFile, pm.APIVersion, pm.Kind)
	}
	dep := readManifests(t)["Deployment"]
	pod := dep.Spec.Template
	sel := labelSelector{MatchLabels: matchLabels(pm.Spec.Selector)}
	if sel.empty() || !sel.selects(pod.Metadata.Labels) {
		t.Errorf("%s: selector %v does not select the Deployment's pods %v", podMonitorFile, sel.MatchLabels, pod.Metadata.Labels)
	}
	// The job label is the value of the pod label jobLabel names; without
	// one, the operator names the job namespace/name, which no rule reads.
	var prom struct {
		ScrapeConfigs []struct {
			JobName string `yaml:"job_name"`
		} `yaml:"scrape_configs"`
	}
	if err := yaml.Unmarshal([]byte(readFile(t, "prometheus/prometheus.yml")), &prom); err != nil || len(prom.ScrapeConfigs) != 1 {
		t.Fatalf("prometheus/prometheus.yml: %v (want one scrape config)", err)
	}
	if job := pod.Metadata.Labels[pm.Spec.JobLabel]; pm.Spec.JobLabel == "" || job != prom.ScrapeConfigs[0].JobName {
		t.Errorf("%s: jobLabel %q gives the pods' series job %q, the rules read job %q", podMonitorFile, pm.Spec.JobLabel, job, prom.ScrapeConfigs[0].JobName)
	}
	if len(pm.Spec.PodMetricsEndpoints) != 1 {
		t.Fatalf("%s: %d podMetricsEndpoints, want one (the admin listener)", podMonitorFile, len(pm.Spec.PodMetricsEndpoints))
	}
	ep := pm.Spec.PodMetricsEndpoints[0]
	if ep.Path != "/metrics" || ep.Scheme != "" && ep.Scheme != "http" {
		t.Errorf("%s: scrapes %s %s, want http /metrics", podMonitorFile, ep.Scheme, ep.Path)
	}
	if a := ep.Authorization; a == nil || a.Type != "" && a.Type != "Bearer" || a.Credentials.Name == "" || a.Credentials.Key == "" {
		t.Errorf("%s: authorization %+v, want a Bearer token from a Secret's key (/metrics needs the read scope)", podMonitorFile, a)
	}
	img := theImage(t)
	_, adminPort, err := net.SplitHostPort(img.imageFlag("-admin-listen"))
	if err != nil {
		t.Fatalf("the image's -admin-listen: %v", err)
	}
	port := -1
	for _, c := range pod.Spec.Containers {
		for _, p := range c.Ports {
			if p.Name == ep.Port {
				port = p.ContainerPort
			}
		}
	}
	if strconv.Itoa(port) != adminPort {
		t.Errorf("%s: scrapes port %q (container port %d), want the admin listener's %s", podMonitorFile, ep.Port, port, adminPort)
	}
}
