package server_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/migrate"
	"github.com/sluice-dev/sluice/server"
)

// TestDesignerImportEndpoint: POST /designer/import answers what `sluice
// import` writes — the configuration, in shadow mode unless enforced, and
// the report — refuses what it cannot translate with a 400 problem, a
// caller without the read scope with a 403, and a body over 1 MiB with a
// 413.
func TestDesignerImportEndpoint(t *testing.T) {
	f := newFixture(t, testConfig)
	src := `limit_req_zone $binary_remote_addr zone=perip:10m rate=10r/s;
limit_req_zone $http_x_api_key zone=bykey:1m rate=100r/m;
server { location /api/ { limit_req zone=perip burst=20 nodelay; } location /login { limit_req zone=bykey; } }`
	for _, enforce := range []bool{false, true} {
		format := map[bool]string{false: "nginx", true: ""}[enforce] // "": guessed
		body, _ := json.Marshal(map[string]any{"format": format, "source": src, "enforce": enforce})
		r := f.do(t, "POST", "/designer/import", string(body), nil)
		var got struct {
			Files  map[string]string `json:"files"`
			Report string            `json:"report"`
		}
		if err := json.NewDecoder(r.Body).Decode(&got); err != nil || r.StatusCode != 200 {
			t.Fatalf("enforce %v: %d %v", enforce, r.StatusCode, err)
		}
		cfg := got.Files["sluice.yaml"]
		if !strings.Contains(cfg, "rules:") || !strings.Contains(cfg, `key: ["header:X-Api-Key"]`) || !strings.Contains(cfg, `paths: ["/api/"]`) {
			t.Errorf("enforce %v: the configuration lacks the rules:\n%s", enforce, cfg)
		}
		if shadow := strings.Contains(cfg, "algorithm: gcra\n        quantity: 10\n        window: 1s\n        burst: 21\n        shadow: true"); shadow == enforce {
			t.Errorf("enforce %v: the per-address limit's shadow is %v:\n%s", enforce, shadow, cfg)
		}
		if !strings.Contains(got.Report, "## Trade-offs and Considerations") {
			t.Errorf("enforce %v: report %.300q", enforce, got.Report)
		}
	}
	for _, c := range []struct{ body, want string }{
		{`{"format":"iis","source":"x"}`, `format \"iis\"`},
		{`{"source":"server { listen 80; }"}`, `not clear from the file`},
		{`{"source":"limit_req_zone x zone=a:1m rate=1r/s;\nfrontend fe\n"}`, `could be nginx, haproxy`},
		{`{"format":"nginx","source":"limit_req zone=nope;"}`, `no limit_req_zone defines`},
		{`{"format":"nginx","source":"x","colour":1}`, `not an import request`},
	} {
		r := f.do(t, "POST", "/designer/import", c.body, nil)
		if body := readAll(t, r); r.StatusCode != 400 || !strings.Contains(body, c.want) {
			t.Errorf("%s: %d %s", c.body, r.StatusCode, body)
		}
	}
	// The page's form offers every format the import reads.
	page := readAll(t, f.do(t, "GET", "/designer", "", nil))
	for _, format := range migrate.Formats() {
		if !strings.Contains(page, `<option value="`+format+`">`) {
			t.Errorf("the designer's import form does not offer %s", format)
		}
	}
	// A caller holding check but not read.
	g := newFixture(t, testConfig+strings.Replace(checkOnlyAdmin, "a1c2ab15d5b2ab65a8e40e9fb7ca8b8cc8a73a0b0f9c7bbf2f3bd3ee3e0f4f3a", sha256Hex(gatewayToken), 1))
	if r := g.do(t, "POST", "/designer/import", `{"format":"nginx","source":"x"}`, map[string]string{server.TokenHeader: gatewayToken}); r.StatusCode != 403 {
		t.Errorf("an import by a caller without read: %d, want 403", r.StatusCode)
	}
	big := `{"format":"nginx","source":"` + strings.Repeat("#", 1<<20) + `"}`
	if r := f.do(t, "POST", "/designer/import", big, nil); r.StatusCode != 413 {
		t.Errorf("a body over 1 MiB: %d", r.StatusCode)
	}
}

// TestDesignerImportEnvoy: an Envoy rules file comes back whole, with
// shadow_mode on every rule, beside the configuration that loads it.
func TestDesignerImportEnvoy(t *testing.T) {
	f := newFixture(t, testConfig)
	src := "domain: edge\ndescriptors:\n  - key: remote_address\n    rate_limit: {unit: second, requests_per_unit: 10}\n"
	body, _ := json.Marshal(map[string]any{"format": "envoy", "source": src})
	r := f.do(t, "POST", "/designer/import", string(body), nil)
	var got struct {
		Files map[string]string `json:"files"`
	}
	if err := json.NewDecoder(r.Body).Decode(&got); err != nil || r.StatusCode != 200 {
		t.Fatalf("%d %v", r.StatusCode, err)
	}
	if rules := got.Files["envoy-rules.yaml"]; !strings.Contains(rules, "shadow_mode: true") || !strings.Contains(got.Files["sluice.yaml"], "envoy-rules.yaml") {
		t.Errorf("files %q", got.Files)
	}
}
