package server_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// traefikExample is the part of examples/traefik/dynamic.yml that decides
// what reaches sluice and what reaches the API.
type traefikExample struct {
	HTTP struct {
		Routers map[string]struct {
			Middlewares []string `yaml:"middlewares"`
		} `yaml:"routers"`
		Middlewares map[string]struct {
			ForwardAuth *struct {
				AuthRequestHeaders []string `yaml:"authRequestHeaders"`
			} `yaml:"forwardAuth"`
			Headers *struct {
				CustomRequestHeaders map[string]string `yaml:"customRequestHeaders"`
			} `yaml:"headers"`
		} `yaml:"middlewares"`
	} `yaml:"http"`
}

// traefikThroughExample returns what examples/traefik/dynamic.yml's api
// router makes of a client's request with the headers client: the headers
// the API receives (a headers middleware's empty customRequestHeaders value
// removes one), and those forward-auth receives. Traefik's forwardAuth
// (pkg/middlewares/auth/forward.go, filterForwardRequestHeaders) sends
// sluice the client's headers that authRequestHeaders names, each looked up
// in any case, and its own description of the request (trustForwardHeader:
// false): a POST to uri here.
func traefikThroughExample(t *testing.T, uri string, client http.Header) (toAPI http.Header, toSluice map[string]string) {
	t.Helper()
	var ex traefikExample
	if err := yaml.Unmarshal([]byte(readRepoFile(t, "../examples/traefik/dynamic.yml")), &ex); err != nil {
		t.Fatal(err)
	}
	toAPI = client.Clone()
	var allowed []string
	for _, name := range ex.HTTP.Routers["api"].Middlewares {
		mw := ex.HTTP.Middlewares[name]
		if mw.Headers != nil {
			for h, v := range mw.Headers.CustomRequestHeaders {
				if v == "" {
					toAPI.Del(h)
				}
			}
		}
		if mw.ForwardAuth != nil {
			allowed = mw.ForwardAuth.AuthRequestHeaders
		}
	}
	if allowed == nil {
		t.Fatal("examples/traefik/dynamic.yml: the api router has no forwardAuth middleware with authRequestHeaders")
	}
	toSluice = map[string]string{"X-Forwarded-Method": "POST", "X-Forwarded-Uri": uri,
		"X-Forwarded-Host": "api.example.com", "X-Forwarded-For": "198.51.100.7"}
	for _, name := range allowed {
		if v := client.Get(name); v != "" {
			toSluice[http.CanonicalHeaderKey(name)] = v
		}
	}
	return toAPI, toSluice
}

// Through examples/traefik/dynamic.yml, a POST with X-HTTP-Method-Override:
// DELETE, which reaches the API (Symfony and Laravel serve it as a DELETE
// whatever their configuration), reaches sluice too: it pays what DELETE
// /api/items/{id} costs (3 of 3), not a POST's 1.
func TestTraefikExamplePassesSluiceAMethodOverride(t *testing.T) {
	client := http.Header{"X-Http-Method-Override": {"DELETE"}}
	toAPI, toSluice := traefikThroughExample(t, "/api/items/1", client)
	if toAPI.Get("X-HTTP-Method-Override") == "" {
		return // the API never serves it as a DELETE: nothing to charge
	}
	f := newFixture(t, overrideConfig) // DELETE /api/items/{id} costs 3 of 3 a minute
	r := f.do(t, "GET", "/v1/forward-auth", "", toSluice)
	readAll(t, r)
	if rl := r.Header.Get("RateLimit"); r.StatusCode != http.StatusOK || !strings.HasPrefix(rl, `"per-minute";r=0`) {
		t.Errorf("through examples/traefik/dynamic.yml (to sluice: %v), POST /api/items/1 with X-HTTP-Method-Override: DELETE: %d RateLimit %q, "+
			"want 200 r=0 (charged the 3 of a DELETE)", toSluice, r.StatusCode, rl)
	}
}

// Through examples/traefik/dynamic.yml, the Origin of a page reaches
// sluice, so the refusal Traefik hands to the browser as it is carries
// response.cors's Access-Control-Allow-Origin for an allowed origin: the
// page's script reads the 429 and its Retry-After, not "Failed to fetch".
func TestTraefikExampleRefusalsCarryCORS(t *testing.T) {
	_, toSluice := traefikThroughExample(t, "/items", http.Header{"Origin": {"https://app.example.com"}})
	f := newFixture(t, corsConfig) // 2 a minute; https://app.example.com may read
	for range 2 {
		readAll(t, f.do(t, "GET", "/v1/forward-auth", "", toSluice))
	}
	r := f.do(t, "GET", "/v1/forward-auth", "", toSluice)
	readAll(t, r)
	if r.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("third request: %d, want the 429 Traefik hands to the client", r.StatusCode)
	}
	if got := r.Header.Get("Access-Control-Allow-Origin"); got != "https://app.example.com" {
		t.Errorf("through examples/traefik/dynamic.yml (to sluice: %v), the 429 for a page of the allowed origin "+
			"https://app.example.com has Access-Control-Allow-Origin %q, want the origin", toSluice, got)
	}
}

// spellings returns name with "_" or "." for "-" at one or more of its
// hyphens, in every such spelling.
func spellings(name string) []string {
	parts := strings.Split(name, "-")
	var out []string
	n := 1
	for range parts[1:] {
		n *= 3
	}
	for code := 1; code < n; code++ { // each hyphen's separator a base-3 digit of code
		s, c := parts[0], code
		for _, p := range parts[1:] {
			s += [3]string{"-", "_", "."}[c%3] + p
			c /= 3
		}
		out = append(out, s)
	}
	return out
}

// Through examples/traefik/dynamic.yml, an API key or method override
// header spelled with "_" or "." for "-" (X_API_Key, X.API.Key), which
// Rack, WSGI servers and PHP behind FastCGI read as the header itself, reaches sluice as it reaches the API: an API
// key so spelled is refused (400) and an override so spelled is judged
// (DELETE's 3 of 3), so no spelling is acted on by the API unjudged.
func TestTraefikExamplePassesSluiceEveryOtherSpelling(t *testing.T) {
	f := newFixture(t, overrideConfig)
	for _, name := range spellings("X-API-Key") {
		_, toSluice := traefikThroughExample(t, "/api/items/1", http.Header{http.CanonicalHeaderKey(name): {"demo-free-key"}})
		r := f.do(t, "GET", "/v1/forward-auth", "", toSluice)
		readAll(t, r)
		if r.StatusCode != http.StatusBadRequest {
			t.Errorf("through examples/traefik/dynamic.yml, a POST with %s (to sluice: %v): %d, want 400", name, toSluice, r.StatusCode)
		}
	}
	for i, name := range append(append(spellings("X-HTTP-Method-Override"), spellings("X-HTTP-Method")...), spellings("X-Method-Override")...) {
		_, toSluice := traefikThroughExample(t, "/api/items/1", http.Header{http.CanonicalHeaderKey(name): {"DELETE"}})
		toSluice["X-Forwarded-For"] = fmt.Sprintf("198.51.100.%d", 10+i) // a client of its own, its quota whole
		r := f.do(t, "GET", "/v1/forward-auth", "", toSluice)
		readAll(t, r)
		if rl := r.Header.Get("RateLimit"); r.StatusCode != http.StatusOK || !strings.HasPrefix(rl, `"per-minute";r=0`) {
			t.Errorf("through examples/traefik/dynamic.yml, POST /api/items/1 with %s: DELETE (to sluice: %v): %d RateLimit %q, "+
				"want 200 r=0 (charged the 3 of a DELETE)", name, toSluice, r.StatusCode, rl)
		}
	}
}
