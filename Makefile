# sluice — the commands README and CI use.
SHELL := /bin/bash
GO    ?= go

.PHONY: test deps bench run fuzz vet soak image

# make test: installs what the tests need (redis-server, nginx, haproxy, caddy,
# chromium, prometheus, podman, buildah, systemd-analyze, curl, node, python3-requests — Debian packages,
# only when missing) while it vets and compiles every test binary, then runs
# every test with the race detector (and the chi, gin and echo examples of
# examples/frameworks, a module of its own), the allocation tests again
# without it (its sync.Pool drops items at random, so httplimit's skip under
# it), and every fuzz target for FUZZTIME beside them (scripts/test). Tests that need
# those programs fail, never skip, without them.
test:
	GO=$(GO) FUZZTIME=$(FUZZTIME) ./scripts/test

FUZZTIME ?= 3s

deps:
	@missing=; \
	  command -v redis-server >/dev/null && command -v redis-cli >/dev/null || missing="$$missing redis-server"; \
	  command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] || missing="$$missing nginx"; \
	  command -v haproxy >/dev/null || [ -x /usr/sbin/haproxy ] || missing="$$missing haproxy"; \
	  command -v caddy >/dev/null || missing="$$missing caddy"; \
	  command -v chromium >/dev/null || missing="$$missing chromium"; \
	  command -v prometheus >/dev/null && command -v promtool >/dev/null || missing="$$missing prometheus"; \
	  command -v podman >/dev/null || missing="$$missing podman"; \
	  command -v buildah >/dev/null || missing="$$missing buildah"; \
	  command -v systemd-analyze >/dev/null || missing="$$missing systemd"; \
	  [ -f /etc/ssl/certs/ca-certificates.crt ] || missing="$$missing ca-certificates"; \
	  command -v curl >/dev/null || missing="$$missing curl"; \
	  command -v node >/dev/null || missing="$$missing nodejs"; \
	  python3 -c 'import requests' 2>/dev/null || missing="$$missing python3-requests"; \
	  [ -z "$$missing" ] || { \
	  echo "make deps: installing$$missing (Debian packages: Redis, real front proxies, browser, Prometheus, podman for server/ and deploy/; curl, node and python3-requests run /docs's code examples)"; \
	  if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
	  $$SUDO apt-get update -qq -o DPkg::Lock::Timeout=120 && \
	  $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=120 $$missing >/dev/null; }
	@v=$$(redis-server --version 2>/dev/null); major=$${v#* v=}; major=$${major%%.*}; \
	  [ -z "$$v" ] || [ "$$major" -ge 7 ] 2>/dev/null || { \
	  echo "make deps: $$v: the tests need Redis 7.0 or later (the store's scripts use PEXPIRETIME); Debian 12 and Ubuntu 24.04 ship it"; exit 1; }

# make bench: side-by-side benchmarks against peer libraries (bench/ module).
bench:
	cd bench && $(GO) run ./cmd/report

run:
	$(GO) run ./cmd/sluice serve

# make image: the container image of deploy/Containerfile, tagged IMAGE, built
# by podman in the docker format (the OCI format drops its HEALTHCHECK) from a
# context of the static binary (CGO_ENABLED=0), deploy/image's
# passwd and group, and this host's CA bundle. PODMAN may carry global flags
# (the deploy tests pass a private --root and --storage-driver vfs).
IMAGE  ?= localhost/sluice:latest
PODMAN ?= podman
image:
	@command -v $(firstword $(PODMAN)) >/dev/null || { echo "make image: $(firstword $(PODMAN)) not found: make deps installs podman and buildah"; exit 1; }
	@ctx=$$(mktemp -d) && trap 'rm -rf "$$ctx"' EXIT && \
	  CGO_ENABLED=0 $(GO) build -trimpath -buildvcs=auto -ldflags='-s -w' -o "$$ctx/sluice" ./cmd/sluice && \
	  cp deploy/image/passwd deploy/image/group /etc/ssl/certs/ca-certificates.crt "$$ctx/" && \
	  $(PODMAN) build --format docker --file deploy/Containerfile --tag $(IMAGE) "$$ctx"

# make fuzz: every fuzz target for a minute each (make test runs them briefly).
fuzz:
	./scripts/fuzz 60s

# make soak: sluice serve on a real Redis at 70% of its measured capacity for
# SOAK_DURATION (10m), heap and client p99 sampled every 10 s (scripts/soak;
# not part of make test). RELIABILITY.md records a run.
SOAK_DURATION ?= 10m
soak: deps
	$(GO) run ./scripts/soak -duration $(SOAK_DURATION)

vet:
	$(GO) vet ./...
	test -z "$$(gofmt -l .)"
