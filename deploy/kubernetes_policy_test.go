package deploy_test

import (
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/config"
)

// ingressRule is one rule of a NetworkPolicy's ingress: traffic to its
// ports (every port when it lists none) from its peers (every source when
// it lists none).
type ingressRule struct {
	Ports []struct {
		Port     any // a container port's name or number; nil: every port
		EndPort  int `yaml:"endPort"`
		Protocol string
	}
	From []struct {
		PodSelector       *labelSelector `yaml:"podSelector"`
		NamespaceSelector *labelSelector `yaml:"namespaceSelector"`
		IPBlock           *struct {
			CIDR   string
			Except []string
		} `yaml:"ipBlock"`
	}
}

// podListener is a listener of sluice serve that the pod network reaches.
type podListener struct {
	name string // public, admin, envoy
	port int
	// private: for the callers the policy names alone (the admin
	// listener, Envoy's); else open to every source (the public one).
	private bool
}

// podListeners returns the listeners of sluice serve in the Deployment's
// pod: the public and admin ones at the image's -listen and -admin-listen,
// and Envoy's at cfg's envoy.listen when it has one. A listener on a
// loopback address, which only the pod itself reaches, is left out.
func podListeners(t *testing.T, img *builtImage, cfg *config.Config) []podListener {
	t.Helper()
	addrs := []struct {
		name, addr string
		private    bool
	}{{"public", img.imageFlag("-listen"), false}, {"admin", img.imageFlag("-admin-listen"), true}}
	if cfg.Envoy.Enabled {
		addrs = append(addrs, struct {
			name, addr string
			private    bool
		}{"envoy", cfg.Envoy.Listen, true})
	}
	var ls []podListener
	for _, a := range addrs {
		host, port, err := net.SplitHostPort(a.addr)
		if err != nil {
			t.Fatalf("the %s listener's address %q: %v", a.name, a.addr, err)
		}
		n, err := strconv.Atoi(port)
		if err != nil {
			t.Fatalf("the %s listener's address %q has no port number", a.name, a.addr)
		}
		if ip, err := netip.ParseAddr(host); host == "localhost" || err == nil && ip.IsLoopback() {
			continue
		}
		ls = append(ls, podListener{a.name, n, a.private})
	}
	return ls
}

// checkNetworkPolicy returns what is wrong with np, the NetworkPolicy of
// the pods of template, whose container c serves listeners:
//   - it selects the pods and isolates them for ingress;
//   - every port it names (by name or number) is a TCP port of c;
//   - every listener is a port of c, and a rule lets traffic in to it: from
//     every source to the public one; to a private one (admin, Envoy's),
//     from peers each named by a label selector — no rule open to every
//     source, no address block, no peer of empty selectors (every pod of a
//     namespace, every namespace) reaches it.
func checkNetworkPolicy(np manifest, templateLabels map[string]string, c container, listeners []podListener) []string {
	var bad []string
	if !np.Spec.PodSelector.selects(templateLabels) {
		bad = append(bad, fmt.Sprintf("its podSelector %v does not pick the pods of the Deployment (labels %v)", np.Spec.PodSelector.MatchLabels, templateLabels))
	}
	if !slices.Contains(np.Spec.PolicyTypes, "Ingress") {
		bad = append(bad, fmt.Sprintf("its policyTypes %q lack Ingress: the pods are not isolated", np.Spec.PolicyTypes))
	}

	portByName := map[string]int{}
	var numbers []int
	for _, p := range c.Ports {
		if p.Protocol == "" || p.Protocol == "TCP" {
			portByName[p.Name] = p.ContainerPort
			numbers = append(numbers, p.ContainerPort)
		}
	}
	// covers reports whether rule r lets traffic in to port n.
	covers := func(r ingressRule, n int) bool {
		if len(r.Ports) == 0 {
			return true
		}
		for _, p := range r.Ports {
			switch v := p.Port.(type) {
			case nil:
				return true
			case string:
				if portByName[v] == n {
					return true
				}
			case int:
				if v == n || p.EndPort != 0 && v <= n && n <= p.EndPort {
					return true
				}
			}
		}
		return false
	}
	for i, r := range np.Spec.Ingress {
		for _, p := range r.Ports {
			if p.Protocol != "" && p.Protocol != "TCP" {
				bad = append(bad, fmt.Sprintf("ingress[%d] names protocol %s: sluice listens on TCP alone", i, p.Protocol))
			}
			switch v := p.Port.(type) {
			case string:
				if _, ok := portByName[v]; !ok {
					bad = append(bad, fmt.Sprintf("ingress[%d] names port %q, which the container does not have (its ports: %v)", i, v, portByName))
				}
			case int:
				if !slices.ContainsFunc(numbers, func(n int) bool { return n == v || p.EndPort != 0 && v <= n && n <= p.EndPort }) {
					bad = append(bad, fmt.Sprintf("ingress[%d] names port %d, which no container port is (%v)", i, v, numbers))
				}
			}
		}
	}

	for _, l := range listeners {
		if !slices.Contains(numbers, l.port) {
			bad = append(bad, fmt.Sprintf("the %s listener's port %d is no TCP port of the container (%v)", l.name, l.port, portByName))
		}
		var rules []int
		for i, r := range np.Spec.Ingress {
			if covers(r, l.port) {
				rules = append(rules, i)
			}
		}
		if len(rules) == 0 {
			bad = append(bad, fmt.Sprintf("no rule lets anyone in to the %s listener's port %d", l.name, l.port))
			continue
		}
		if !l.private {
			if !slices.ContainsFunc(rules, func(i int) bool { return len(np.Spec.Ingress[i].From) == 0 }) {
				bad = append(bad, fmt.Sprintf("no rule lets every source in to the %s listener's port %d (rules %v name their peers)", l.name, l.port, rules))
			}
			continue
		}
		for _, i := range rules {
			r := np.Spec.Ingress[i]
			if len(r.From) == 0 {
				bad = append(bad, fmt.Sprintf("ingress[%d] lets every source in to the %s listener's port %d", i, l.name, l.port))
			}
			for j, peer := range r.From {
				switch {
				case peer.IPBlock != nil:
					bad = append(bad, fmt.Sprintf("ingress[%d].from[%d] lets the addresses %s in to the %s listener: name its callers by label", i, j, peer.IPBlock.CIDR, l.name))
				case peer.PodSelector.empty() && peer.NamespaceSelector.empty():
					what := "every pod of sluice's namespace"
					if peer.NamespaceSelector != nil {
						what = "every pod of the cluster"
					}
					bad = append(bad, fmt.Sprintf("ingress[%d].from[%d] lets %s in to the %s listener: give it a selector with labels", i, j, what, l.name))
				}
			}
		}
	}
	return bad
}

// servedConfig parses the ConfigMap's sluice.yaml as sluice serve would.
func servedConfig(t *testing.T, cm manifest) *config.Config {
	t.Helper()
	cfg, err := config.Parse("configmap.yaml:sluice.yaml", []byte(cm.Data["sluice.yaml"]))
	if err != nil {
		t.Fatalf("the ConfigMap's sluice.yaml: %v", err)
	}
	return cfg
}

// TestKubernetesNetworkPolicyKeepsTheAdminListenerToNamedCallers: the
// NetworkPolicy of deploy/kubernetes picks sluice's pods, lets every source
// in to the public listener and only pods named by label in to the admin
// listener, and every port it names is a port of the container and a
// listener of sluice serve, as the image runs it on the ConfigMap.
func TestKubernetesNetworkPolicyKeepsTheAdminListenerToNamedCallers(t *testing.T) {
	t.Parallel()
	kinds := readManifests(t)
	pod := kinds["Deployment"].Spec.Template
	c := pod.Spec.Containers[0]
	listeners := podListeners(t, theImage(t), servedConfig(t, kinds["ConfigMap"]))
	if !slices.ContainsFunc(listeners, func(l podListener) bool { return l.private }) {
		t.Fatalf("the pod has no private listener beyond loopback (%v): the test checks nothing", listeners)
	}
	for _, problem := range checkNetworkPolicy(kinds["NetworkPolicy"], pod.Metadata.Labels, c, listeners) {
		t.Errorf("kubernetes/networkpolicy.yaml: %s", problem)
	}
}

// TestNetworkPolicyCheckRefusesLeaks: checkNetworkPolicy, on the shipped
// policy broken one way at a time, names each way the admin listener would
// leak or a listener be cut off.
func TestNetworkPolicyCheckRefusesLeaks(t *testing.T) {
	t.Parallel()
	kinds := readManifests(t)
	pod := kinds["Deployment"].Spec.Template
	shipped := []podListener{{"public", 8080, false}, {"admin", 9090, true}}
	adminRule := func(np *manifest) *ingressRule {
		for i, r := range np.Spec.Ingress {
			if len(r.From) > 0 {
				return &np.Spec.Ingress[i]
			}
		}
		t.Fatal("the policy has no rule with peers")
		return nil
	}
	for _, tc := range []struct {
		name      string
		breakIt   func(np *manifest, c *container) []podListener
		complaint string
	}{
		{"an admin rule without peers lets every source in", func(np *manifest, c *container) []podListener {
			adminRule(np).From = nil
			return shipped
		}, "lets every source in to the admin listener"},
		{"a peer of an empty namespace selector alone is every pod of the cluster", func(np *manifest, c *container) []podListener {
			r := adminRule(np)
			r.From = r.From[:1]
			r.From[0].PodSelector, r.From[0].NamespaceSelector = nil, &labelSelector{}
			return shipped
		}, "lets every pod of the cluster in to the admin listener"},
		{"a peer of an empty pod selector alone is every pod of the namespace", func(np *manifest, c *container) []podListener {
			r := adminRule(np)
			r.From = r.From[:1]
			r.From[0].PodSelector, r.From[0].NamespaceSelector = &labelSelector{}, nil
			return shipped
		}, "lets every pod of sluice's namespace in"},
		{"an open rule of every port takes the admin listener too", func(np *manifest, c *container) []podListener {
			np.Spec.Ingress[0].Ports = nil
			return shipped
		}, "lets every source in to the admin listener"},
		{"a port the container does not name", func(np *manifest, c *container) []podListener {
			adminRule(np).Ports[0].Port = "metrics"
			return shipped
		}, `names port "metrics"`},
		{"a port number no container port is", func(np *manifest, c *container) []podListener {
			np.Spec.Ingress[0].Ports[0].Port = 80
			return shipped
		}, "names port 80, which no container port is"},
		{"an Envoy listener the container does not publish", func(np *manifest, c *container) []podListener {
			return append(shipped, podListener{"envoy", 8081, true})
		}, "the envoy listener's port 8081 is no TCP port of the container"},
		{"an Envoy listener published but in no rule", func(np *manifest, c *container) []podListener {
			c.Ports = append(c.Ports, c.Ports[0])
			c.Ports[len(c.Ports)-1].Name, c.Ports[len(c.Ports)-1].ContainerPort = "envoy", 8081
			return append(shipped, podListener{"envoy", 8081, true})
		}, "no rule lets anyone in to the envoy listener's port 8081"},
		{"a public listener kept to named peers", func(np *manifest, c *container) []podListener {
			np.Spec.Ingress[0].From = adminRule(np).From
			return shipped
		}, "no rule lets every source in to the public listener"},
		{"a policy that picks other pods", func(np *manifest, c *container) []podListener {
			np.Spec.PodSelector = labelSelector{MatchLabels: map[string]string{"app.kubernetes.io/name": "other"}}
			return shipped
		}, "does not pick the pods"},
		{"a policy of egress alone isolates nothing coming in", func(np *manifest, c *container) []podListener {
			np.Spec.PolicyTypes = []string{"Egress"}
			return shipped
		}, "lack Ingress"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Each case breaks its own copy: decode the manifests again.
			np := readManifests(t)["NetworkPolicy"]
			c := readManifests(t)["Deployment"].Spec.Template.Spec.Containers[0]
			listeners := tc.breakIt(&np, &c)
			problems := checkNetworkPolicy(np, pod.Metadata.Labels, c, listeners)
			if !slices.ContainsFunc(problems, func(p string) bool { return strings.Contains(p, tc.complaint) }) {
				t.Errorf("problems %q, want one saying %q", problems, tc.complaint)
			}
		})
	}
	if problems := checkNetworkPolicy(kinds["NetworkPolicy"], pod.Metadata.Labels, pod.Spec.Containers[0], shipped); len(problems) > 0 {
		t.Errorf("the shipped policy, unbroken: %q", problems)
	}
}
