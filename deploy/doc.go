// Package deploy holds what ships sluice and runs it — the container image
// (Containerfile, image/), the systemd unit (systemd/), the Kubernetes
// manifests (kubernetes/), the configuration they read (sluice.yaml), the
// Prometheus rules and scrape configuration (prometheus/) and the Grafana
// dashboard (grafana/). It has no Go API: its tests build the image with
// podman, run the binary found in it, and check each file against the real
// programs — systemd-analyze, promtool, Prometheus scraping sluice serve.
// docs/operations.md says how to use them.
package deploy
