package config_test

import (
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/config"
)

func TestStatusPath(t *testing.T) {
	base := "plans: {p: {limits: [{name: m, algorithm: gcra, quantity: 1, window: 1s}]}}\nresponse:\n  status_path: "
	c, err := config.Parse("t.yaml", []byte(base+"/v1/rate_limit\n"))
	if err != nil || c.Response.StatusPath != "/v1/rate_limit" {
		t.Fatalf("%v, %q", err, c.Response.StatusPath)
	}
	for value, want := range map[string]string{
		"rate_limit":   `t.yaml:3:16: response.status_path: "rate_limit" is not a clean absolute path such as /rate_limit`,
		"/a/../b":      `"/a/../b" is not a clean absolute path`,
		"/{id}":        `"/{id}" is not a clean absolute path`,
		"/docs":        `response.status_path: "/docs" is a path sluice serves otherwise (docs_path)`,
		"/healthz":     `response.status_path: "/healthz" is a path sluice serves otherwise (health_path)`,
		"/":            `"/" is the upstream's`,
		"/rate_limit/": `"/rate_limit/" is not a clean absolute path`,
		"/rate limit":  `is not a clean absolute path`,
	} {
		_, err := config.Parse("t.yaml", []byte(base+"\""+value+"\"\n"))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %s", value, err, want)
		}
	}
}

// TestPublicPaths: docs_path and health_path move or hand over (with "")
// the public listener's /docs and /healthz; no path can be sluice's for two
// things, whichever of them was left at its default.
func TestPublicPaths(t *testing.T) {
	const plans = "plans: {p: {limits: [{name: m, algorithm: gcra, quantity: 1, window: 1s}]}}\n"
	c, err := config.Parse("t.yaml", []byte(plans))
	if err != nil || c.DocsPath != "/docs" || c.HealthPath != "/healthz" {
		t.Fatalf("defaults: %v, %q, %q", err, c.DocsPath, c.HealthPath)
	}
	c, err = config.Parse("t.yaml", []byte(plans+"docs_path: /api/limits\nhealth_path: \"\"\nresponse: {status_path: /docs}\n"))
	if err != nil || c.DocsPath != "/api/limits" || c.HealthPath != "" || c.Response.StatusPath != "/docs" {
		t.Fatalf("moved: %v, %q, %q, %q", err, c.DocsPath, c.HealthPath, c.Response.StatusPath)
	}
	for text, want := range map[string]string{
		"docs_path: /healthz\n":                             `t.yaml:2:12: docs_path: "/healthz" is a path sluice serves otherwise (health_path)`,
		"health_path: /docs\n":                              `t.yaml:2:14: health_path: "/docs" is a path sluice serves otherwise (docs_path)`,
		"docs_path: /a\nhealth_path: /a\n":                  `t.yaml:3:14: health_path: "/a" is a path sluice serves otherwise (docs_path)`,
		"docs_path: /\n":                                    `docs_path: "/" is the upstream's`,
		"health_path: healthz\n":                            `health_path: "healthz" is not a clean absolute path`,
		"docs_path: \"\"\nresponse: {status_path: /docs}\n": "",
	} {
		_, err := config.Parse("t.yaml", []byte(plans+text))
		if want == "" {
			if err != nil {
				t.Errorf("%q: %v", text, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %s", text, err, want)
		}
	}
}

// TestUpstreamSchemes: an upstream is http://, https:// or h2c:// (HTTP/2
// without TLS, a gRPC server), with a host.
func TestUpstreamSchemes(t *testing.T) {
	const plans = "plans: {p: {limits: [{name: m, algorithm: gcra, quantity: 1, window: 1s}]}}\n"
	for _, u := range []string{"http://api:8080", "https://api.internal/v1", "h2c://grpc-api:9000"} {
		if c, err := config.Parse("t.yaml", []byte(plans+"upstream: "+u+"\n")); err != nil || c.Upstream != u {
			t.Errorf("%s: %v", u, err)
		}
	}
	for _, u := range []string{"ftp://api", "grpc://api:9000", "h2c:///no-host", "api:8080"} {
		_, err := config.Parse("t.yaml", []byte(plans+"upstream: "+u+"\n"))
		if err == nil || !strings.Contains(err.Error(), "is not an http://, https:// or h2c:// URL") {
			t.Errorf("%s: %v", u, err)
		}
	}
}

// A URL's scheme is case-insensitive (RFC 3986): HTTPS://api is an https
// upstream, loaded with its scheme in lower case, and takes upstream_tls
// as https://api does, rather than being refused as not https.
func TestUpstreamSchemeInAnyCase(t *testing.T) {
	const plans = "plans: {p: {limits: [{name: m, algorithm: gcra, quantity: 1, window: 1s}]}}\n"
	c, err := config.Parse("t.yaml", []byte(plans+"upstream: HTTPS://api.internal/v1\nupstream_tls: {server_name: api.internal}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Upstream != "https://api.internal/v1" || !c.UpstreamTLS.Enabled || c.UpstreamTLS.ServerName != "api.internal" {
		t.Errorf("upstream %q, upstream_tls %+v", c.Upstream, c.UpstreamTLS)
	}
	if c, err := config.Parse("t.yaml", []byte(plans+"upstream: H2C://grpc-api:9000\n")); err != nil || c.Upstream != "h2c://grpc-api:9000" {
		t.Errorf("H2C://grpc-api:9000: %v", err)
	}
}

// What the reverse proxy would drop from an upstream's URL is refused at
// its line, never loaded and ignored: credentials (it sends no
// Authorization of them; the error shows no password), a fragment (never
// sent), and a port without a host (http://:8080, which dials this host by
// accident).
func TestUpstreamPartsTheProxyDropsAreRefused(t *testing.T) {
	const plans = "plans: {p: {limits: [{name: m, algorithm: gcra, quantity: 1, window: 1s}]}}\n"
	for _, c := range []struct{ upstream, want string }{
		{"https://user:secret@api.internal", `u.yaml:2:11: upstream: "https://user:xxxxx@api.internal": credentials in the URL are never sent to the upstream: remove them`},
		{"http://api.internal/v1#top", `u.yaml:2:11: upstream: "http://api.internal/v1#top": a fragment is never sent to the upstream: remove it`},
		{"http://:8080", `u.yaml:2:11: upstream: "http://:8080" is not an http://, https:// or h2c:// URL`},
	} {
		_, err := config.Parse("u.yaml", []byte(plans+"upstream: \""+c.upstream+"\"\n"))
		if err == nil || err.Error() != c.want {
			t.Errorf("%s:\n%v\nwant exactly:\n%s", c.upstream, err, c.want)
		}
	}
}
