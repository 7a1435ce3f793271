package server_test

import "testing"

// filesRuleConfig limits downloads of one file, /files/{name}, to 1 a
// minute; the plan allows 100. The proxy at 127.0.0.1 is trusted, so that
// forward-auth's X-Forwarded-For names the client.
const filesRuleConfig = `
identity:
  trusted_proxies: [127.0.0.1/32]
plans:
  free:
    limits:
      - {name: per-minute, algorithm: fixed-window, quantity: 100, window: 1m}
rules:
  - name: files
    match: {paths: ["/files/{name}"]}
    limits: [{name: per-minute, algorithm: fixed-window, quantity: 1, window: 1m}]
`

// A rule applies when any reading of the path that the upstreams behind
// sluice read is its, ServeMux's escaped one included ("/files/a%2Fb is
// one segment, a/b, so /files/{name} applies", docs/rules.md), and the
// reverse proxy applies it so. Behind nginx (proxy_pass without a URI, as
// examples/nginx/sluice.conf), Caddy or Traefik, the upstream gets the URI
// as the client sent it, /files/c%2Fd, which a Go upstream serves as
// /files/{name}: forward-auth judges that escaped reading beside the
// decoded one, so that no encoding makes a request exempt or cheaper.
func TestForwardAuthJudgesTheEscapedReading(t *testing.T) {
	f := newFixture(t, filesRuleConfig)
	readAll(t, f.do(t, "GET", "/files/a%2Fb", "", nil))
	if r := f.do(t, "GET", "/files/a%2Fb", "", nil); r.StatusCode != 429 {
		t.Fatalf("the reverse proxy admits a second /files/a%%2Fb: %d", r.StatusCode)
	}
	for _, h := range []map[string]string{
		{"X-Original-Method": "GET", "X-Original-URI": "/files/c%2Fd", "X-Forwarded-For": "198.51.100.7"},   // nginx
		{"X-Forwarded-Method": "GET", "X-Forwarded-Uri": "/files/e%2Ff", "X-Forwarded-For": "198.51.100.8"}, // Caddy, Traefik
		{"X-Forwarded-Uri": "/x/%2e%2e/files/g%2fh", "X-Forwarded-For": "198.51.100.9"},                     // dot segments resolved, the escape kept
	} {
		readAll(t, f.do(t, "GET", "/v1/forward-auth", "", h))
		r := f.do(t, "GET", "/v1/forward-auth", "", h)
		readAll(t, r)
		if r.StatusCode != 429 {
			t.Errorf("forward-auth admits a second %s%s: %d RateLimit %q (the files rule did not apply)",
				h["X-Original-URI"], h["X-Forwarded-Uri"], r.StatusCode, r.Header.Get("RateLimit"))
		}
	}
}

// A ".." after a segment with an escaped slash removes the whole segment
// as ServeMux reads the path and a part of it decoded: /a%2Fb/../files/x
// is /files/x to a Go upstream and /a/files/x to nginx's $uri. The
// middleware weighs two readings, not three, so forward-auth refuses such
// a description (400, nothing spent) rather than judge it by one reading;
// no ordinary client sends one, for clients resolve dot segments.
func TestForwardAuthRefusesAPathOfThreeReadings(t *testing.T) {
	f := newFixture(t, filesRuleConfig)
	for _, uri := range []string{"/a%2Fb/../files/x", "/files/a%2Fb/%2e%2e/x"} {
		r := f.do(t, "GET", "/v1/forward-auth", "", map[string]string{"X-Forwarded-Uri": uri, "X-Forwarded-For": "198.51.100.10"})
		if body := readAll(t, r); r.StatusCode != 400 {
			t.Errorf("%s: %d %s, want 400", uri, r.StatusCode, body)
		}
	}
	// A dot segment beside an escaped slash that it does not remove reads
	// alike both ways.
	r := f.do(t, "GET", "/v1/forward-auth", "", map[string]string{"X-Forwarded-Uri": "/files/./a%2Fb", "X-Forwarded-For": "198.51.100.11"})
	if body := readAll(t, r); r.StatusCode != 200 {
		t.Errorf("/files/./a%%2Fb: %d %s, want 200", r.StatusCode, body)
	}
}
