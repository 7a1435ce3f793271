package deploy_test

import (
	"net"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/sluice-dev/sluice/config"
)

// prometheusDefaultListen is the address Prometheus serves its UI, API and
// own /metrics on unless --web.listen-address says otherwise, as
// `prometheus --help` says (0.0.0.0:9090 where Prometheus is not
// installed; Debian's /etc/default/prometheus sets no flag).
func prometheusDefaultListen(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("prometheus"); err == nil {
		out, _ := exec.Command(p, "--help").CombinedOutput()
		if m := regexp.MustCompile(`--web\.listen-address="([^"]+)"`).FindSubmatch(out); m != nil {
			return string(m[1])
		}
	}
	return "0.0.0.0:9090"
}

// portOf is the port of a host:port address.
func portOf(t *testing.T, addr string) string {
	t.Helper()
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	return port
}

// TestPrometheusScrapesTheHostsSluiceNotItself: deploy/prometheus/
// prometheus.yml scrapes, on loopback, the admin listener deploy/sluice.yaml
// gives the systemd unit's sluice on the same host, and that port is not
// the one Prometheus listens on by default. Were it, sluice and a default
// Prometheus could not both listen there; whichever starts second fails,
// and when it is sluice, Prometheus scrapes its own /metrics as job
// "sluice": up is 1, and SluiceDown and SluiceTargetsMissing never fire.
func TestPrometheusScrapesTheHostsSluiceNotItself(t *testing.T) {
	t.Parallel()
	var prom struct {
		ScrapeConfigs []struct {
			JobName       string `yaml:"job_name"`
			StaticConfigs []struct {
				Targets []string `yaml:"targets"`
			} `yaml:"static_configs"`
		} `yaml:"scrape_configs"`
	}
	if err := yaml.Unmarshal([]byte(readFile(t, "prometheus/prometheus.yml")), &prom); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load("sluice.yaml")
	if err != nil {
		t.Fatal(err)
	}
	admin := portOf(t, cfg.Admin.Listen)
	promListen := prometheusDefaultListen(t)
	if admin == portOf(t, promListen) {
		t.Errorf("deploy/sluice.yaml: admin.listen %s takes the port Prometheus listens on by default (%s)", cfg.Admin.Listen, promListen)
	}
	targets := 0
	for _, sc := range prom.ScrapeConfigs {
		for _, st := range sc.StaticConfigs {
			for _, target := range st.Targets {
				targets++
				host, port, err := net.SplitHostPort(target)
				if err != nil {
					t.Fatal(err)
				}
				if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() || port != admin {
					t.Errorf("job %q scrapes %s, not deploy/sluice.yaml's admin listener %s on this host", sc.JobName, target, cfg.Admin.Listen)
				}
				if port == portOf(t, promListen) {
					t.Errorf("job %q scrapes %s, the port Prometheus itself listens on by default (%s): it would scrape itself as job %q", sc.JobName, target, promListen, sc.JobName)
				}
			}
		}
	}
	if targets == 0 {
		t.Fatal("prometheus/prometheus.yml: no static target")
	}
}

// TestContainerRunPublishesTheAdminPortOnLoopback: every `podman run` the
// guides show that publishes the image's admin port binds it to the host's
// loopback, on a port other than Prometheus's default (the one
// prometheus.yml scrapes). Published as -p 9090:9090, it takes the port a
// Prometheus on that host listens on, and offers the admin listener — the
// decision API, overrides, /metrics — on every interface of the host.
func TestContainerRunPublishesTheAdminPortOnLoopback(t *testing.T) {
	t.Parallel()
	m := regexp.MustCompile(`"-admin-listen", "([^"]+)"`).FindStringSubmatch(readFile(t, "Containerfile"))
	if m == nil {
		t.Fatal("Containerfile: no -admin-listen in CMD")
	}
	admin := portOf(t, m[1])
	promPort := portOf(t, prometheusDefaultListen(t))
	publish := regexp.MustCompile(`(?:-p|--publish)[ =](\S+)`)
	command := regexp.MustCompile(`^\s*(?:#\s*)?podman run\s`)
	published := 0
	for _, name := range []string{"../README.md", "../docs/operations.md", "Containerfile"} {
		text := strings.ReplaceAll(readFile(t, name), "\\\n", " ")
		for _, line := range strings.Split(text, "\n") {
			if !command.MatchString(line) {
				continue
			}
			for _, p := range publish.FindAllStringSubmatch(line, -1) {
				parts := strings.Split(p[1], ":")
				if container, _, _ := strings.Cut(parts[len(parts)-1], "/"); container != admin {
					continue
				}
				published++
				if len(parts) != 3 || net.ParseIP(parts[0]) == nil || !net.ParseIP(parts[0]).IsLoopback() || parts[1] == promPort {
					t.Errorf("%s: %q publishes the admin port as %s; publish it on loopback, on a port other than Prometheus's %s (e.g. -p 127.0.0.1:9091:%s)",
						name, strings.TrimSpace(line), p[1], promPort, admin)
				}
			}
		}
	}
	if published == 0 {
		t.Fatal("no podman run in README.md or docs/operations.md publishes the admin port")
	}
}
