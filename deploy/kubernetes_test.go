package deploy_test

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/sluice-dev/sluice/internal/realtest"
	"github.com/sluice-dev/sluice/internal/redistest"
)

// manifest is the part of a Kubernetes object the tests read.
type manifest struct {
	Kind     string
	Metadata struct{ Name string }
	Data     map[string]string // ConfigMap
	Spec     struct {
		Selector any  // Service: labels; Deployment, PodDisruptionBudget: matchLabels
		Replicas *int // Deployment
		Ports    []struct {
			Name       string
			Port       int
			TargetPort any `yaml:"targetPort"`
		}
		// PodDisruptionBudget: each an int or a percentage.
		MaxUnavailable             any    `yaml:"maxUnavailable"`
		MinAvailable               any    `yaml:"minAvailable"`
		UnhealthyPodEvictionPolicy string `yaml:"unhealthyPodEvictionPolicy"`
		// NetworkPolicy.
		PodSelector labelSelector `yaml:"podSelector"`
		PolicyTypes []string      `yaml:"policyTypes"`
		Ingress     []ingressRule
		Template    struct {
			Metadata struct{ Labels map[string]string }
			Spec     podSpec
		}
	}
}

// podSpec is the part of a pod template's spec the tests read.
type podSpec struct {
	SecurityContext struct {
		RunAsUser      int  `yaml:"runAsUser"`
		RunAsNonRoot   bool `yaml:"runAsNonRoot"`
		SeccompProfile *struct {
			Type string
		} `yaml:"seccompProfile"`
	} `yaml:"securityContext"`
	AutomountServiceAccountToken  *bool `yaml:"automountServiceAccountToken"`
	HostNetwork                   bool  `yaml:"hostNetwork"`
	HostPID                       bool  `yaml:"hostPID"`
	HostIPC                       bool  `yaml:"hostIPC"`
	TerminationGracePeriodSeconds *int  `yaml:"terminationGracePeriodSeconds"`
	TopologySpreadConstraints     []struct {
		MaxSkew           int           `yaml:"maxSkew"`
		TopologyKey       string        `yaml:"topologyKey"`
		WhenUnsatisfiable string        `yaml:"whenUnsatisfiable"`
		LabelSelector     labelSelector `yaml:"labelSelector"`
		MatchLabelKeys    []string      `yaml:"matchLabelKeys"`
		NodeTaintsPolicy  string        `yaml:"nodeTaintsPolicy"`
	} `yaml:"topologySpreadConstraints"`
	Affinity *struct {
		PodAntiAffinity *struct {
			Required []any `yaml:"requiredDuringSchedulingIgnoredDuringExecution"`
		} `yaml:"podAntiAffinity"`
	}
	Containers []container
	Volumes    []struct {
		Name      string
		ConfigMap *struct {
			Name  string
			Items []struct{ Key, Path string }
		} `yaml:"configMap"`
		Other map[string]any `yaml:",inline"` // any other source
	}
}

// labelSelector is a Kubernetes label selector.
type labelSelector struct {
	MatchLabels      map[string]string `yaml:"matchLabels"`
	MatchExpressions []any             `yaml:"matchExpressions"`
}

// empty reports whether s selects everything: no labels, no expressions.
func (s *labelSelector) empty() bool {
	return s == nil || len(s.MatchLabels) == 0 && len(s.MatchExpressions) == 0
}

// selects reports whether s, labels alone, picks a pod carrying labels.
func (s *labelSelector) selects(labels map[string]string) bool {
	if s.empty() || len(s.MatchExpressions) > 0 {
		return false
	}
	for k, v := range s.MatchLabels {
		if labels[k] != v {
			return false
		}
	}
	return true
}

type container struct {
	Name, Image   string
	Command, Args []string
	Ports         []struct {
		Name          string
		ContainerPort int `yaml:"containerPort"`
		Protocol      string
	}
	Env []struct {
		Name, Value string
		ValueFrom   *envSource `yaml:"valueFrom"`
	}
	Resources struct {
		Requests, Limits map[string]string
	}
	SecurityContext struct {
		AllowPrivilegeEscalation *bool `yaml:"allowPrivilegeEscalation"`
		ReadOnlyRootFilesystem   bool  `yaml:"readOnlyRootFilesystem"`
		Privileged               bool
		RunAsUser                *int `yaml:"runAsUser"`
		Capabilities             struct{ Add, Drop []string }
		SeccompProfile           *struct {
			Type string
		} `yaml:"seccompProfile"`
	} `yaml:"securityContext"`
	LivenessProbe  *probe `yaml:"livenessProbe"`
	ReadinessProbe *probe `yaml:"readinessProbe"`
	VolumeMounts   []struct {
		Name      string
		MountPath string `yaml:"mountPath"`
		SubPath   string `yaml:"subPath"`
	} `yaml:"volumeMounts"`
}

// envSource is where a variable's value comes from.
type envSource struct {
	ResourceFieldRef *resourceFieldRef `yaml:"resourceFieldRef"`
}

// resourceFieldRef names a resource of the container, as a number of
// divisors (1 by default).
type resourceFieldRef struct {
	Resource string
	Divisor  any
}

type probe struct {
	HTTPGet *struct {
		Path string
		Port any
	} `yaml:"httpGet"`
	TimeoutSeconds *int `yaml:"timeoutSeconds"` // 1 by default
}

// readManifests decodes every document of the YAML files of
// deploy/kubernetes but the kustomization, by kind, and checks that the
// kustomization lists each file.
func readManifests(t *testing.T) map[string]manifest {
	t.Helper()
	files, err := filepath.Glob("kubernetes/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var kustomization struct{ Resources []string }
	byKind := map[string]manifest{}
	var listed []string
	for _, f := range files {
		if path.Base(f) == "kustomization.yaml" {
			if err := yaml.Unmarshal([]byte(readFile(t, f)), &kustomization); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			continue
		}
		listed = append(listed, path.Base(f))
		dec := yaml.NewDecoder(bytes.NewReader([]byte(readFile(t, f))))
		for {
			var m manifest
			err := dec.Decode(&m)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if _, dup := byKind[m.Kind]; dup {
				t.Fatalf("%s: a second %s", f, m.Kind)
			}
			byKind[m.Kind] = m
		}
	}
	slices.Sort(listed)
	slices.Sort(kustomization.Resources)
	if !slices.Equal(listed, kustomization.Resources) {
		t.Errorf("kubernetes/kustomization.yaml lists %q, the directory holds %q", kustomization.Resources, listed)
	}
	for _, kind := range []string{"ConfigMap", "Deployment", "Service", "PodDisruptionBudget", "NetworkPolicy"} {
		if _, ok := byKind[kind]; !ok {
			t.Fatalf("deploy/kubernetes has no %s", kind)
		}
	}
	return byKind
}

// matchLabels returns a selector's labels: the map itself (Service) or its
// matchLabels (Deployment, PodDisruptionBudget).
func matchLabels(sel any) map[string]string {
	m, _ := sel.(map[string]any)
	if inner, ok := m["matchLabels"].(map[string]any); ok {
		m = inner
	}
	labels := map[string]string{}
	for k, v := range m {
		labels[k], _ = v.(string)
	}
	return labels
}

// TestKubernetesManifestsNameWhatSluiceServes reads deploy/kubernetes and
// runs the image's binary on the ConfigMap's configuration (its Redis
// address pointed at a real redis-server) as the Deployment runs it: every
// port the manifests name is one the image exposes and a listener of
// sluice serves, and every probe's path answers 200 from sluice itself.
func TestKubernetesManifestsNameWhatSluiceServes(t *testing.T) {
	t.Parallel()
	kinds := readManifests(t)
	img := theImage(t)
	dep := kinds["Deployment"]
	pod := dep.Spec.Template
	if len(pod.Spec.Containers) != 1 {
		t.Fatalf("the Deployment has %d containers, want 1", len(pod.Spec.Containers))
	}
	c := pod.Spec.Containers[0]
	if len(c.Command) > 0 || len(c.Args) > 0 {
		t.Errorf("the container overrides the image's command (%q %q): the image's flags bind the listeners its ports name", c.Command, c.Args)
	}

	// Labels: the Deployment's selector, the Service's and the budget's
	// all pick the pods the template makes.
	for _, sel := range []struct {
		kind string
		sel  any
	}{{"Deployment", dep.Spec.Selector}, {"Service", kinds["Service"].Spec.Selector}, {"PodDisruptionBudget", kinds["PodDisruptionBudget"].Spec.Selector}} {
		labels := matchLabels(sel.sel)
		if len(labels) == 0 {
			t.Errorf("the %s selects nothing", sel.kind)
		}
		for k, v := range labels {
			if pod.Metadata.Labels[k] != v {
				t.Errorf("the %s selects %s=%s, which the pod template does not carry", sel.kind, k, v)
			}
		}
	}
	uid, _, _ := strings.Cut(img.config.User, ":")
	if !pod.Spec.SecurityContext.RunAsNonRoot || strconv.Itoa(pod.Spec.SecurityContext.RunAsUser) != uid {
		t.Errorf("the pod runs as user %d (runAsNonRoot %v), the image's user is %s",
			pod.Spec.SecurityContext.RunAsUser, pod.Spec.SecurityContext.RunAsNonRoot, uid)
	}

	// The configuration: the ConfigMap's key lands where the image reads it.
	cm := kinds["ConfigMap"]
	cfgPath := img.imageFlag("-config")
	found := false
	for _, v := range pod.Spec.Volumes {
		if v.ConfigMap == nil || v.ConfigMap.Name != cm.Metadata.Name {
			continue
		}
		for _, vm := range c.VolumeMounts {
			if vm.Name != v.Name {
				continue
			}
			for _, it := range v.ConfigMap.Items {
				if _, ok := cm.Data[it.Key]; ok && path.Join(vm.MountPath, it.Path) == cfgPath {
					found = true
				}
			}
		}
	}
	if !found {
		t.Fatalf("no volume mounts a key of ConfigMap %s at %s, the image's -config", cm.Metadata.Name, cfgPath)
	}

	// Serve as the pod does: the image's :8080 and :9090 become two free
	// loopback addresses.
	redis := redistest.Standalone(t)
	cfg := realtest.Replace(t, "the ConfigMap's sluice.yaml", cm.Data["sluice.yaml"],
		`addresses: ["redis.default.svc.cluster.local:6379"]`, `addresses: ["`+redis.Addr+`"]`)
	// The container's environment, as the kubelet resolves it.
	var env []string
	for _, e := range c.Env {
		v, _, err := envValue(c, e.Name)
		if err != nil {
			t.Fatal(err)
		}
		env = append(env, e.Name+"="+v)
	}
	public, admin := realtest.FreeAddr(t), realtest.FreeAddr(t)
	serveWithEnv(t, env, public, admin, img.command(t, writeFile(t, "sluice.yaml", cfg), public, admin)...)
	addrOf := map[int]string{}
	for flag, addr := range map[string]string{"-listen": public, "-admin-listen": admin} {
		_, port, _ := strings.Cut(img.imageFlag(flag), ":")
		p, err := strconv.Atoi(port)
		if err != nil {
			t.Fatalf("the image's %s %q has no port", flag, img.imageFlag(flag))
		}
		addrOf[p] = addr
	}

	// Ports: each container port is one the image exposes and binds.
	portByName := map[string]int{}
	for _, p := range c.Ports {
		if _, ok := img.config.ExposedPorts[strconv.Itoa(p.ContainerPort)+"/tcp"]; !ok || addrOf[p.ContainerPort] == "" {
			t.Errorf("container port %s %d is not a port the image exposes and binds a listener to", p.Name, p.ContainerPort)
		}
		portByName[p.Name] = p.ContainerPort
	}
	resolve := func(what string, port any) string {
		var n int
		switch p := port.(type) {
		case string:
			n = portByName[p]
		case int:
			n = p
		}
		if addrOf[n] == "" {
			t.Errorf("%s names port %v, which is no listener of sluice serve", what, port)
		}
		return addrOf[n]
	}
	for _, p := range kinds["Service"].Spec.Ports {
		if addr := resolve("Service port "+p.Name, p.TargetPort); addr != "" {
			if code, _, _ := get(t, "http://"+addr+"/healthz", ""); code != http.StatusOK {
				t.Errorf("Service port %s → %v: /healthz %d", p.Name, p.TargetPort, code)
			}
		}
	}

	// Probes: each path answers 200 with sluice's own body (not an
	// upstream's, which the public listener would proxy any other path to);
	// readiness's may go on to say the store did not answer its PING in
	// time (a loaded machine, the ConfigMap's 50 ms timeout): still ready.
	for _, pr := range []struct {
		name  string
		probe *probe
		body  string
	}{{"liveness", c.LivenessProbe, "ok\n"}, {"readiness", c.ReadinessProbe, "ready"}} {
		if pr.probe == nil || pr.probe.HTTPGet == nil {
			t.Errorf("the container has no HTTP %s probe", pr.name)
			continue
		}
		addr := resolve(pr.name+" probe", pr.probe.HTTPGet.Port)
		if addr == "" {
			continue
		}
		code, body, _ := get(t, "http://"+addr+pr.probe.HTTPGet.Path, "")
		if code != http.StatusOK || !strings.HasPrefix(body, pr.body) {
			t.Errorf("%s probe GET %s on port %v: %d %q, want 200 %q…", pr.name, pr.probe.HTTPGet.Path, pr.probe.HTTPGet.Port, code, body, pr.body)
		}
	}

	// GOMEMLIMIT: the Go runtime took the container's value as the soft
	// limit TestKubernetesGoMemoryLimitLeavesHeadroom reads it as.
	v, ok, _ := envValue(c, "GOMEMLIMIT")
	want, err := goMemLimit(v)
	if !ok || err != nil {
		t.Fatalf("the container's GOMEMLIMIT %q: %v", v, err)
	}
	code, body, _ := get(t, "http://"+admin+"/metrics", exampleToken)
	m := regexp.MustCompile(`(?m)^go_gc_gomemlimit_bytes (\S+)$`).FindStringSubmatch(body)
	if code != http.StatusOK || m == nil {
		t.Fatalf("/metrics with the Prometheus token: %d, no go_gc_gomemlimit_bytes:\n%s", code, grepLines(body, "go_gc"))
	}
	if got, err := strconv.ParseFloat(m[1], 64); err != nil || got != float64(want) {
		t.Errorf("the running binary's go_gc_gomemlimit_bytes is %s, want %d (GOMEMLIMIT=%s)", m[1], want, v)
	}
}

// TestKubernetesAdminPortStaysInTheCluster: no Service of deploy/kubernetes
// publishes the admin listener outside the cluster (a LoadBalancer, a
// NodePort, external IPs): its callers are your services and Prometheus.
func TestKubernetesAdminPortStaysInTheCluster(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("kubernetes/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	services := 0
	for _, f := range files {
		dec := yaml.NewDecoder(bytes.NewReader([]byte(readFile(t, f))))
		for {
			var svc struct {
				Kind     string
				Metadata struct{ Name string }
				Spec     struct {
					Type        string
					ExternalIPs []string `yaml:"externalIPs"`
					Ports       []struct {
						Name       string
						TargetPort any `yaml:"targetPort"`
					}
				}
			}
			err := dec.Decode(&svc)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if svc.Kind != "Service" {
				continue
			}
			services++
			public := svc.Spec.Type == "LoadBalancer" || svc.Spec.Type == "NodePort" || len(svc.Spec.ExternalIPs) > 0
			for _, p := range svc.Spec.Ports {
				admin := p.TargetPort == "admin" || p.TargetPort == 9090
				if public && admin {
					t.Errorf("%s: Service %s (type %q, external IPs %q) publishes the admin port %s outside the cluster",
						f, svc.Metadata.Name, svc.Spec.Type, svc.Spec.ExternalIPs, p.Name)
				}
			}
		}
	}
	if services == 0 {
		t.Fatal("deploy/kubernetes has no Service")
	}
}
