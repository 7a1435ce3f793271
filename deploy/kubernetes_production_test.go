package deploy_test

import (
	"fmt"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// quantityBytes reads a Kubernetes memory quantity ("512Mi", "1G",
// "134217728") as bytes, rounded up as the kubelet rounds it.
func quantityBytes(q string) (int64, error) {
	units := []struct {
		suffix string
		factor int64
	}{
		{"Ki", 1 << 10}, {"Mi", 1 << 20}, {"Gi", 1 << 30}, {"Ti", 1 << 40}, {"Pi", 1 << 50}, {"Ei", 1 << 60},
		{"k", 1e3}, {"M", 1e6}, {"G", 1e9}, {"T", 1e12}, {"P", 1e15}, {"E", 1e18},
	}
	num, factor := q, int64(1)
	for _, u := range units {
		if n, ok := strings.CutSuffix(q, u.suffix); ok {
			num, factor = n, u.factor
			break
		}
	}
	r, ok := new(big.Rat).SetString(num)
	if !ok || r.Sign() < 0 || strings.ContainsAny(num, "eE/") {
		return 0, fmt.Errorf("%q is not a memory quantity (e.g. 512Mi)", q)
	}
	r.Mul(r, new(big.Rat).SetInt64(factor))
	n := new(big.Int).Quo(r.Num(), r.Denom())
	if !r.IsInt() {
		n.Add(n, big.NewInt(1))
	}
	return n.Int64(), nil
}

// goMemLimit reads a GOMEMLIMIT value as the Go runtime does: a whole
// number of bytes, with an optional unit B, KiB, MiB, GiB or TiB (the
// runtime refuses anything else, "512Mi" or "512M", and exits at start).
func goMemLimit(v string) (int64, error) {
	num, factor := v, int64(1)
	for _, u := range []struct {
		suffix string
		factor int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40}, {"B", 1}} {
		if n, ok := strings.CutSuffix(v, u.suffix); ok {
			num, factor = n, u.factor
			break
		}
	}
	n, err := strconv.ParseUint(num, 10, 63)
	if err != nil || num == "" || num[0] == '+' {
		return 0, fmt.Errorf("GOMEMLIMIT %q is not a size the Go runtime reads (digits and B, KiB, MiB, GiB or TiB)", v)
	}
	return int64(n) * factor, nil
}

// envValue is the value Kubernetes gives the container's variable name: its
// value, or the resource its resourceFieldRef names divided by the divisor
// (1 by default) and rounded up, as the kubelet computes it.
func envValue(c container, name string) (string, bool, error) {
	for _, e := range c.Env {
		if e.Name != name {
			continue
		}
		if e.ValueFrom == nil {
			return e.Value, true, nil
		}
		ref := e.ValueFrom.ResourceFieldRef
		if ref == nil {
			return "", true, fmt.Errorf("%s comes from a source the test does not resolve", name)
		}
		kind, res, _ := strings.Cut(ref.Resource, ".")
		q := map[string]map[string]string{"limits": c.Resources.Limits, "requests": c.Resources.Requests}[kind][res]
		v, err := quantityBytes(q)
		if err != nil || res != "memory" {
			return "", true, fmt.Errorf("%s: resource %s (%q) is not a memory quantity the test resolves", name, ref.Resource, q)
		}
		divisor := int64(1)
		if ref.Divisor != nil {
			if divisor, err = quantityBytes(fmt.Sprint(ref.Divisor)); err != nil || divisor == 0 {
				return "", true, fmt.Errorf("%s: divisor %v: %v", name, ref.Divisor, err)
			}
		}
		return strconv.FormatInt((v+divisor-1)/divisor, 10), true, nil
	}
	return "", false, nil
}

// checkMemory returns what is wrong with the container's memory settings:
// GOMEMLIMIT, the Go runtime's soft limit, must sit below the cgroup's hard
// limit (limits.memory) with headroom — at most 95% of it, commonly 90%:
// the runtime's own memory (goroutine stacks, freed pages not yet returned)
// is outside the heap it bounds, and at the hard limit the kernel kills the
// process — and above half of it (lower, the collector runs far more often
// than the memory requires). The memory request must cover it, so that the
// node keeps for the pod what its heap may reach.
func checkMemory(c container) []string {
	limit, err := quantityBytes(c.Resources.Limits["memory"])
	if err != nil {
		return []string{fmt.Sprintf("limits.memory: %v", err)}
	}
	v, ok, err := envValue(c, "GOMEMLIMIT")
	switch {
	case err != nil:
		return []string{err.Error()}
	case !ok:
		return []string{"no GOMEMLIMIT: the Go heap may grow until the kernel kills the process at limits.memory"}
	}
	soft, err := goMemLimit(v)
	if err != nil {
		return []string{err.Error()}
	}
	var bad []string
	share := float64(soft) / float64(limit)
	if share > 0.95 || share < 0.5 {
		bad = append(bad, fmt.Sprintf("GOMEMLIMIT %s is %.1f%% of limits.memory %s: want 50%% to 95%% (commonly 90%%), headroom under the hard limit",
			v, 100*share, c.Resources.Limits["memory"]))
	}
	if req, err := quantityBytes(c.Resources.Requests["memory"]); err != nil || req < soft {
		bad = append(bad, fmt.Sprintf("requests.memory %q is below GOMEMLIMIT %s: the node would not keep for the pod what its heap may reach", c.Resources.Requests["memory"], v))
	}
	return bad
}

// TestKubernetesGoMemoryLimitLeavesHeadroom: the container's GOMEMLIMIT is
// one the Go runtime reads, below the container's memory limit with
// headroom, and within its memory request. (TestKubernetesManifestsNameWhatSluiceServes
// reads the limit back from the running binary's go_gc_gomemlimit_bytes.)
func TestKubernetesGoMemoryLimitLeavesHeadroom(t *testing.T) {
	t.Parallel()
	c := readManifests(t)["Deployment"].Spec.Template.Spec.Containers[0]
	for _, problem := range checkMemory(c) {
		t.Errorf("kubernetes/deployment.yaml: %s", problem)
	}

	// What the check refuses, on the shipped container altered one way at a time.
	for _, tc := range []struct {
		name      string
		alter     func(c *container)
		complaint string
	}{
		{"the whole limit from the downward API leaves no headroom", func(c *container) {
			c.Env[0].Value = ""
			c.Env[0].ValueFrom = &envSource{ResourceFieldRef: &resourceFieldRef{Resource: "limits.memory"}}
		}, "is 100.0% of limits.memory"},
		{"a divisor of 1Mi gives a number the runtime reads as bytes", func(c *container) {
			c.Env[0].Value = ""
			c.Env[0].ValueFrom = &envSource{ResourceFieldRef: &resourceFieldRef{Resource: "limits.memory", Divisor: "1Mi"}}
		}, "want 50% to 95%"},
		{"Kubernetes' unit is not Go's", func(c *container) { c.Env[0].Value, c.Env[0].ValueFrom = "460Mi", nil }, "not a size the Go runtime reads"},
		{"a request below the soft limit", func(c *container) { c.Resources.Requests = map[string]string{"memory": "128Mi"} }, "requests.memory"},
	} {
		c := readManifests(t)["Deployment"].Spec.Template.Spec.Containers[0]
		if len(c.Env) == 0 || c.Env[0].Name != "GOMEMLIMIT" {
			t.Fatalf("the container's first variable is not GOMEMLIMIT: %+v", c.Env)
		}
		tc.alter(&c)
		problems := checkMemory(c)
		if !slices.ContainsFunc(problems, func(p string) bool { return strings.Contains(p, tc.complaint) }) {
			t.Errorf("%s: problems %q, want one saying %q", tc.name, problems, tc.complaint)
		}
	}
}

// TestKubernetesPodMeetsTheRestrictedPodSecurityStandard: the pod passes
// Kubernetes' "restricted" Pod Security Standard (a namespace labelled
// pod-security.kubernetes.io/enforce: restricted admits it) and more: a
// read-only root filesystem and no service-account token, which sluice,
// writing nothing and calling no Kubernetes API, never needs.
func TestKubernetesPodMeetsTheRestrictedPodSecurityStandard(t *testing.T) {
	t.Parallel()
	spec := readManifests(t)["Deployment"].Spec.Template.Spec
	sc := spec.SecurityContext
	if !sc.RunAsNonRoot || sc.RunAsUser == 0 {
		t.Errorf("the pod's runAsNonRoot %v, runAsUser %d: want true and a user other than root", sc.RunAsNonRoot, sc.RunAsUser)
	}
	if spec.HostNetwork || spec.HostPID || spec.HostIPC {
		t.Error("the pod shares a namespace of the host (hostNetwork, hostPID or hostIPC)")
	}
	if spec.AutomountServiceAccountToken == nil || *spec.AutomountServiceAccountToken {
		t.Error("the pod mounts a service-account token: want automountServiceAccountToken: false")
	}
	restricted := []string{"configMap", "csi", "downwardAPI", "emptyDir", "ephemeral", "persistentVolumeClaim", "projected", "secret"}
	for _, v := range spec.Volumes {
		for source := range v.Other {
			if !slices.Contains(restricted, source) {
				t.Errorf("volume %s is a %s, which the restricted standard refuses", v.Name, source)
			}
		}
	}
	seccomp := func(p *struct{ Type string }) bool {
		return p != nil && (p.Type == "RuntimeDefault" || p.Type == "Localhost")
	}
	for _, c := range spec.Containers {
		cs := c.SecurityContext
		if cs.AllowPrivilegeEscalation == nil || *cs.AllowPrivilegeEscalation {
			t.Errorf("container %s: want allowPrivilegeEscalation: false", c.Name)
		}
		if cs.Privileged {
			t.Errorf("container %s is privileged", c.Name)
		}
		if cs.RunAsUser != nil && *cs.RunAsUser == 0 {
			t.Errorf("container %s runs as root", c.Name)
		}
		if !slices.Contains(cs.Capabilities.Drop, "ALL") || slices.ContainsFunc(cs.Capabilities.Add, func(c string) bool { return c != "NET_BIND_SERVICE" }) {
			t.Errorf("container %s drops capabilities %q and adds %q: want ALL dropped and at most NET_BIND_SERVICE added", c.Name, cs.Capabilities.Drop, cs.Capabilities.Add)
		}
		if !seccomp(sc.SeccompProfile) && !seccomp(cs.SeccompProfile) {
			t.Errorf("container %s has no seccomp profile (RuntimeDefault), in its securityContext or the pod's", c.Name)
		}
		if !cs.ReadOnlyRootFilesystem {
			t.Errorf("container %s: want readOnlyRootFilesystem: true (sluice writes no file)", c.Name)
		}
	}
}

// disruptionsAllowed is how many of replicas pods a PodDisruptionBudget
// lets an eviction take at once: maxUnavailable, or replicas less
// minAvailable, each a number or a percentage of replicas rounded up.
func disruptionsAllowed(t *testing.T, pdb manifest, replicas int) int {
	t.Helper()
	count := func(v any) int {
		switch v := v.(type) {
		case int:
			return v
		case string:
			p, err := strconv.Atoi(strings.TrimSuffix(v, "%"))
			if err == nil && strings.HasSuffix(v, "%") {
				return int(math.Ceil(float64(p) * float64(replicas) / 100))
			}
		}
		t.Fatalf("the PodDisruptionBudget's %v is not a number or a percentage", v)
		return 0
	}
	switch {
	case pdb.Spec.MaxUnavailable != nil && pdb.Spec.MinAvailable == nil:
		return count(pdb.Spec.MaxUnavailable)
	case pdb.Spec.MinAvailable != nil && pdb.Spec.MaxUnavailable == nil:
		return replicas - count(pdb.Spec.MinAvailable)
	}
	t.Fatal("the PodDisruptionBudget wants one of maxUnavailable and minAvailable")
	return 0
}

// TestKubernetesReplicasSpreadAcrossNodesAndSurviveDrains: the replicas
// are spread one to a node as far as the nodes allow, without a constraint
// that can leave a pod unschedulable on a cluster that has room; a node
// drain evicts some but never all of them, and never waits on one that is
// not ready; and the ConfigMap's Redis store divides each quota among as
// many instances as there are replicas while Redis is down.
func TestKubernetesReplicasSpreadAcrossNodesAndSurviveDrains(t *testing.T) {
	t.Parallel()
	kinds := readManifests(t)
	dep := kinds["Deployment"]
	pod := dep.Spec.Template
	replicas := 1
	if dep.Spec.Replicas != nil {
		replicas = *dep.Spec.Replicas
	}
	if replicas < 2 {
		t.Fatalf("the Deployment runs %d replica: a node's loss, or a rollout, is an outage", replicas)
	}

	hostSpread := false
	for i, tsc := range pod.Spec.TopologySpreadConstraints {
		if !tsc.LabelSelector.selects(pod.Metadata.Labels) {
			t.Errorf("topologySpreadConstraints[%d]'s labelSelector %v does not pick the pods it spreads (labels %v)", i, tsc.LabelSelector.MatchLabels, pod.Metadata.Labels)
		}
		// A node without the key is no candidate for a hard constraint:
		// every node has a hostname, not every cluster has zones.
		if tsc.WhenUnsatisfiable == "DoNotSchedule" && tsc.TopologyKey != "kubernetes.io/hostname" {
			t.Errorf("topologySpreadConstraints[%d] on %s is DoNotSchedule: on a cluster whose nodes lack that label no pod would schedule (make it ScheduleAnyway)", i, tsc.TopologyKey)
		}
		if tsc.TopologyKey == "kubernetes.io/hostname" && tsc.WhenUnsatisfiable == "DoNotSchedule" && tsc.MaxSkew == 1 {
			hostSpread = true
			// Without it, the old ReplicaSet's pods count too: a rollout's
			// new pods may pile onto the nodes the old ones leave.
			if !slices.Contains(tsc.MatchLabelKeys, "pod-template-hash") {
				t.Errorf("topologySpreadConstraints[%d] has matchLabelKeys %q: want pod-template-hash, so that each rollout's pods are spread among themselves", i, tsc.MatchLabelKeys)
			}
			// By default a node the pod does not tolerate counts, with no
			// replica: on two workers and a tainted control plane, the
			// third replica could go nowhere.
			if tsc.NodeTaintsPolicy != "Honor" {
				t.Errorf("topologySpreadConstraints[%d] has nodeTaintsPolicy %q: want Honor, so that nodes the pod cannot run on are not counted as nodes without a replica", i, tsc.NodeTaintsPolicy)
			}
		}
	}
	if !hostSpread {
		t.Error("no topologySpreadConstraint on kubernetes.io/hostname, maxSkew 1, DoNotSchedule: the replicas may all land on one node")
	}
	if a := pod.Spec.Affinity; a != nil && a.PodAntiAffinity != nil && len(a.PodAntiAffinity.Required) > 0 {
		t.Error("a required podAntiAffinity: a rollout's surge pod needs a node with no replica, which a cluster of as many nodes as replicas lacks")
	}

	pdb := kinds["PodDisruptionBudget"]
	if n := disruptionsAllowed(t, pdb, replicas); n < 1 || n >= replicas {
		t.Errorf("the PodDisruptionBudget lets a drain evict %d of %d replicas: want at least one (else drains never end) and fewer than all", n, replicas)
	}
	if pdb.Spec.UnhealthyPodEvictionPolicy != "AlwaysAllow" {
		t.Errorf("the PodDisruptionBudget's unhealthyPodEvictionPolicy is %q: want AlwaysAllow, so that a pod that is not ready never blocks a drain", pdb.Spec.UnhealthyPodEvictionPolicy)
	}

	cfg := servedConfig(t, kinds["ConfigMap"])
	if cfg.Store.Type == "redis" && cfg.Store.Redis.OnStoreError == "local" && cfg.Store.Redis.Instances != replicas {
		t.Errorf("the ConfigMap's store.redis.instances is %d, the Deployment's replicas %d: while Redis is down each replica gives 1/instances of each quota", cfg.Store.Redis.Instances, replicas)
	}
}

// TestKubernetesGracePeriodHoldsTheShutdown: the pod's grace period holds
// what sluice does on SIGTERM — shutdown.delay answering /readyz 503 while
// the Service drops the pod, shutdown.drain for requests in flight and
// notify's queue, then the store's close (stopNeeds) — so the kubelet's
// SIGKILL never cuts it short; and the delay is not zero, so that a
// rollout refuses no connection routed to the pod after SIGTERM.
func TestKubernetesGracePeriodHoldsTheShutdown(t *testing.T) {
	t.Parallel()
	kinds := readManifests(t)
	grace := 30 * time.Second // Kubernetes' default
	if g := kinds["Deployment"].Spec.Template.Spec.TerminationGracePeriodSeconds; g != nil {
		grace = time.Duration(*g) * time.Second
	}
	cfg := servedConfig(t, kinds["ConfigMap"])
	sd := cfg.Shutdown
	if need := stopNeeds(cfg); grace < need {
		t.Errorf("terminationGracePeriodSeconds %v is under the %v the ConfigMap's shutdown needs (shutdown.delay %v, shutdown.drain %v, the store's close)",
			grace, need, sd.Delay, sd.Drain)
	}
	if sd.Delay == 0 {
		t.Error("the ConfigMap's shutdown.delay is 0: connections the nodes still route to a terminating pod are refused")
	}
}
