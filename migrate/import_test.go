package migrate_test

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/memory"
	"github.com/sluice-dev/sluice/migrate"
	"github.com/sluice-dev/sluice/server"
)

// importCase is one source file and what its translation must hold.
type importCase struct {
	name, format, src string
	// limits are the plan's limits as sluice.Limit.String writes them
	// (shadowed when the import is not enforced), then the global ones.
	limits, global []string
	// rules are the configuration's rules as ruleString writes them.
	rules []string
	// exempt are the configuration's exempt address ranges.
	exempt []string
	costs  map[string]int64
	// differs and same are phrases that some Difference (not Same, and
	// Same) must contain.
	differs, same []string
}

// load writes the files of tr to a directory and loads the configuration
// with package config, as `sluice check` does.
func load(t *testing.T, tr *migrate.Translation, enforce bool) *config.Config {
	t.Helper()
	files, err := tr.Files(enforce)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg, err := config.Load(filepath.Join(dir, migrate.ConfigFile))
	if err != nil {
		t.Fatalf("%v\n%s", err, files[migrate.ConfigFile])
	}
	return cfg
}

func runImportCases(t *testing.T, cases []importCase) {
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tr, err := migrate.Import(tc.format, tc.src, "source.conf")
			if err != nil {
				t.Fatal(err)
			}
			// Detect may decline to guess, never guess wrong.
			if got, ok := migrate.Detect(tc.src); ok && got != tc.format {
				t.Errorf("Detect guessed %s", got)
			}
			cfg := load(t, tr, true)
			plan := cfg.Policy.Plan(migrate.PlanName)
			var got []string
			for _, l := range plan.Limits {
				got = append(got, l.String())
			}
			if strings.Join(got, "\n") != strings.Join(tc.limits, "\n") {
				t.Errorf("plan limits:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.limits, "\n"))
			}
			got = nil
			for _, l := range cfg.Policy.Global {
				got = append(got, l.String())
			}
			if strings.Join(got, "\n") != strings.Join(tc.global, "\n") {
				t.Errorf("global limits: %q, want %q", got, tc.global)
			}
			got = nil
			for _, r := range cfg.Rules {
				got = append(got, ruleString(r))
			}
			if strings.Join(got, "\n") != strings.Join(tc.rules, "\n") {
				t.Errorf("rules:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.rules, "\n"))
			}
			got = nil
			for _, p := range cfg.ExemptAddresses {
				got = append(got, p.String())
			}
			if !slices.Equal(got, tc.exempt) {
				t.Errorf("exempt addresses %v, want %v", got, tc.exempt)
			}
			if len(plan.Costs) != len(tc.costs) {
				t.Errorf("costs %v, want %v", plan.Costs, tc.costs)
			}
			for p, c := range tc.costs {
				if got, ok := plan.Costs[p]; !ok || got != c {
					t.Errorf("cost of %q: %d (%v), want %d", p, got, ok, c)
				}
			}
			for _, want := range tc.differs {
				if !hasDifference(tr, false, want) {
					t.Errorf("no difference reports %q", want)
				}
			}
			for _, want := range tc.same {
				if !hasDifference(tr, true, want) {
					t.Errorf("no sameness reports %q", want)
				}
			}
			// Unless enforced, every limit is in shadow mode.
			shadowed := load(t, tr, false)
			all := append(shadowed.Policy.Plan(migrate.PlanName).Limits, shadowed.Policy.Global...)
			for _, r := range shadowed.Rules {
				all = append(all, r.Limits...)
			}
			for _, l := range all {
				if !l.Shadow() {
					t.Errorf("shadow import enforces %s", l)
				}
			}
			report := tr.Report()
			at := -1
			for _, s := range migrate.ReportSections() {
				i := strings.Index(report, "\n"+s+"\n")
				if i <= at {
					t.Errorf("report section %q missing or out of order", s)
				}
				at = i
			}
			if !strings.Contains(report, "shadow: true") || !strings.Contains(report, `sluice_decisions_total{result="shadow"}`) {
				t.Error("the report does not propose shadow mode first and the metric to watch")
			}
		})
	}
}

// ruleString writes a loaded rule in one line: name, paths, key, the
// header and fallback settings when set, and its limits.
func ruleString(r httplimit.Rule) string {
	s := fmt.Sprintf("%s paths=%v", r.Name, r.Paths)
	if len(r.Hosts) > 0 {
		s += fmt.Sprintf(" hosts=%v", r.Hosts)
	}
	if len(r.Methods) > 0 {
		s += fmt.Sprintf(" methods=%v", r.Methods)
	}
	if len(r.Headers) > 0 {
		s += fmt.Sprintf(" headers=%v", r.Headers)
	}
	if len(r.ExceptPaths) > 0 {
		s += fmt.Sprintf(" except=%v", r.ExceptPaths)
	}
	s += fmt.Sprintf(" key=%v", r.Key)
	if r.HeaderFrom != "" {
		s += " header_from=" + r.HeaderFrom
	}
	if r.Fallback != "" {
		s += " fallback=" + r.Fallback
	}
	for _, l := range r.Limits {
		s += " | " + l.String()
	}
	return s
}

func hasDifference(tr *migrate.Translation, same bool, phrase string) bool {
	for _, d := range tr.Differences {
		if d.Same == same && strings.Contains(d.Where+": "+d.Text, phrase) {
			return true
		}
	}
	return false
}

func TestImportNginx(t *testing.T) {
	runImportCases(t, []importCase{
		{
			name:   "a zone with burst and nodelay is a gcra of burst+1",
			format: "nginx",
			src: `http {
    limit_req_zone $binary_remote_addr zone=perip:10m rate=10r/s;
    server {
        listen 80;
        limit_req zone=perip burst=5 nodelay;
        limit_req_status 429;
    }
}`,
			limits:  []string{"perip: gcra 10 per 1s burst 6"},
			same:    []string{"zone perip: nginx admits", "ipv6_prefix: 128", "limit_req_status: 429"},
			differs: []string{"clock", "headers", "zone perip size: a zone of 10m holds about 163840 states"},
		},
		{
			name:   "without nodelay the bucket is a leaky-bucket queue; a location limit costs only its paths",
			format: "nginx",
			src: `limit_req_zone $binary_remote_addr zone=api:1m rate=30r/m;
server {
    location /api/ { limit_req zone=api burst=10 delay=4; }
    location /static/ { root /srv; }
}`,
			limits:  []string{"api: leaky-bucket 30 per 1m0s burst 5 max-wait 12s"},
			costs:   map[string]int64{"/": 0, "/api/": 1},
			same:    []string{"without nodelay nginx holds each request", "paths"},
			differs: []string{"limit_req_status: nginx refused with 503"},
		},
		{
			name:   "a longest wait that is no whole number of microseconds is rounded up to one, admitting the same",
			format: "nginx",
			src: `limit_req_zone $binary_remote_addr zone=api:1m rate=3r/s;
limit_req zone=api burst=5;`,
			limits:  []string{"api: leaky-bucket 3 per 1s burst 1 max-wait 1.666667s"},
			same:    []string{"without nodelay nginx holds each request"},
			differs: []string{"limit_req_status: nginx refused with 503"},
		},
		{
			name:   "a constant key is a global limit; dry run is shadow",
			format: "nginx",
			src: `limit_req_zone $server_name zone=all:1m rate=100r/s;
limit_req_zone $remote_addr zone=byaddr:1m rate=7r/m;
limit_req_dry_run on;
limit_req zone=all burst=50 nodelay;
limit_req zone=byaddr;`,
			limits:  []string{"byaddr: gcra 7 per 1m0s burst 1 (shadow)"},
			global:  []string{"all: gcra 100 per 1s burst 51 (shadow)"},
			same:    []string{"a global limit", "one client per address", "limit_req_dry_run"},
			differs: []string{"7r/m drains at 116/1000 per second"},
		},
		{
			name:   "a header key is a rule of its own, skipping requests without the header",
			format: "nginx",
			src: `limit_req_zone $binary_remote_addr zone=perip:10m rate=10r/s;
limit_req_zone $http_x_api_key zone=bykey:1m rate=7r/m;
limit_req_zone $host zone=byhost:1m rate=50r/s;
limit_req_zone $server_name zone=all:1m rate=100r/s;
limit_req zone=perip burst=20 nodelay;
limit_req zone=bykey;
limit_req zone=byhost burst=5 nodelay;
limit_req zone=all burst=50 nodelay;`,
			limits: []string{"placeholder: fixed-window 1000000000 per 1s (shadow)"},
			rules: []string{
				"perip paths=[] key=[ip/32/128] | per-second: gcra 10 per 1s burst 21",
				"bykey paths=[] key=[header:X-Api-Key] header_from=any fallback=skip | per-minute: gcra 7 per 1m0s burst 1",
				"byhost paths=[] key=[host] fallback=shared | per-second: gcra 50 per 1s burst 6",
				"all paths=[] key=[rule] | per-second: gcra 100 per 1s burst 51",
			},
			same: []string{"zone perip key: $binary_remote_addr: one count per address",
				"one count per value of X-Api-Key, whoever sends it", "is not counted (fallback: skip)", "one count per host name", "the key rule is one count"},
			differs: []string{"7r/m drains at 116/1000 per second"},
		},
		{
			name:   "locations with different zones are rules of their paths",
			format: "nginx",
			src: `limit_req_zone $binary_remote_addr zone=perip:10m rate=10r/s;
limit_req_zone $remote_addr zone=login:1m rate=1r/s;
server {
    location /api/ { limit_req zone=perip burst=20 nodelay; }
    location /api/health { proxy_pass http://up; }
    location = /login { limit_req zone=login; limit_req zone=perip burst=20 nodelay; }
    location /api/admin/ { limit_req zone=login burst=2 nodelay; }
}`,
			limits: []string{"placeholder: fixed-window 1000000000 per 1s (shadow)"},
			rules: []string{
				"perip paths=[/api/ /login] except=[/api/admin/] key=[ip/32/128] | per-second: gcra 10 per 1s burst 21",
				"login paths=[/login] key=[ip/32/128] | per-second: gcra 1 per 1s burst 1",
				"login-2 paths=[/api/admin/] key=[ip/32/128] | per-second: gcra 1 per 1s burst 3",
			},
			costs: map[string]int64{"/": 0, "/api/": 1, "/api/health": 0, "/api/health/": 0, "/login": 1, "/api/admin/": 1},
			same: []string{"location /api/health: it lies under a limited location's prefix and sets no limit_req",
				"location /api/admin/: nginx applies only this location's limit_req on /api/admin/; rule perip, whose paths hold it, leaves it out (except_paths)"},
			differs: []string{"zone login: it is used with 2 settings"},
		},
		{
			name:   "a location below one it must leave out keeps the extra count, and says so",
			format: "nginx",
			src: `limit_req_zone $binary_remote_addr zone=a:1m rate=10r/s;
limit_req_zone $binary_remote_addr zone=b:1m rate=1r/s;
server {
    location /a/ { limit_req zone=a; }
    location /a/b/ { limit_req zone=b; }
    location /a/b/c/ { limit_req zone=a; }
}`,
			limits: []string{"placeholder: fixed-window 1000000000 per 1s (shadow)"},
			rules: []string{
				"a paths=[/a/ /a/b/c/] key=[ip/32/128] | per-second: gcra 10 per 1s burst 1",
				"b paths=[/a/b/] except=[/a/b/c/] key=[ip/32/128] | per-second: gcra 1 per 1s burst 1",
			},
			costs:   map[string]int64{"/": 0, "/a/": 1, "/a/b/": 1, "/a/b/c/": 1},
			differs: []string{"location /a/b/: nginx applies only this location's limit_req on /a/b/; sluice's rule a matches it too, and cannot leave it out"},
		},
		{
			name:   "keys of query parameters, cookies, paths and several variables are rules",
			format: "nginx",
			src: `limit_req_zone $arg_tenant zone=t:1m rate=1r/s;
limit_req_zone $cookie_session$request_uri zone=s:1m rate=2r/s;
limit_req_zone "${binary_remote_addr}:${uri}" zone=u:1m rate=3r/s;
limit_req_zone $geoip_country_code zone=c:1m rate=4r/s;
limit_req zone=t; limit_req zone=s; limit_req zone=u; limit_req zone=c;`,
			limits: []string{"placeholder: fixed-window 1000000000 per 1s (shadow)"},
			rules: []string{
				"t paths=[] key=[query:tenant] fallback=skip | per-second: gcra 1 per 1s burst 1",
				"s paths=[] key=[cookie:session path] fallback=shared | per-second: gcra 2 per 1s burst 1",
				"u paths=[] key=[ip/32/128 path] fallback=shared | per-second: gcra 3 per 1s burst 1",
				"c paths=[] key=[ip/32/128] | per-second: gcra 4 per 1s burst 1",
			},
			same: []string{"zone t key: $arg_tenant: one count per value of query parameter tenant",
				"zone s key: $cookie_session$request_uri: one count per value of cookie:session and path together"},
			differs: []string{"zone s key: $request_uri holds the query string too",
				"zone c key: sluice cannot key a limit on $geoip_country_code"},
		},
		{
			name:   "nginx's allowlist (a map of a geo block) is an exemption",
			format: "nginx",
			src: `geo $limit {
    default 1;
    10.0.0.0/8 0;
    192.168.0.7 0;
}
map $limit $limit_key {
    0 "";
    1 $binary_remote_addr;
}
limit_req_zone $limit_key zone=req_zone:10m rate=5r/s;
server { location / { limit_req zone=req_zone burst=10 nodelay; } }`,
			limits: []string{"req_zone: gcra 5 per 1s burst 11"},
			exempt: []string{"10.0.0.0/8", "192.168.0.7/32"},
			costs:  map[string]int64{"/": 1},
			same:   []string{"zone req_zone key: $limit_key, set by a map of a geo block, is empty for 10.0.0.0/8, 192.168.0.7/32"},
		},
		{
			name:   "an allowlist only some zones use is not an exemption",
			format: "nginx",
			src: `geo $limit { default 1; 10.0.0.0/8 0; }
map $limit $limit_key { 0 ""; 1 $binary_remote_addr; }
limit_req_zone $limit_key zone=strict:10m rate=5r/s;
limit_req_zone $binary_remote_addr zone=all:10m rate=100r/s;
server { limit_req zone=strict; limit_req zone=all burst=50 nodelay; }`,
			limits:  []string{"strict: gcra 5 per 1s burst 1", "all: gcra 100 per 1s burst 51"},
			differs: []string{"zone strict key: $limit_key leaves out 10.0.0.0/8"},
		},
		{
			name:   "limit_conn is a concurrency limit, inherited apart from limit_req",
			format: "nginx",
			src: `limit_conn_zone $binary_remote_addr zone=addr:10m;
limit_req_zone $binary_remote_addr zone=perip:10m rate=10r/s;
server {
    limit_conn addr 10;
    limit_conn_status 429;
    limit_req zone=perip burst=5 nodelay;
    location /downloads/ { limit_conn addr 2; }
}`,
			limits: []string{"placeholder: fixed-window 1000000000 per 1s (shadow)"},
			rules: []string{
				"perip paths=[] key=[ip/32/128] | per-second: gcra 10 per 1s burst 6",
				"addr paths=[] except=[/downloads/] key=[ip/32/128] | concurrent: concurrency 10 per 10m0s",
				"addr-2 paths=[/downloads/] key=[ip/32/128] | concurrent: concurrency 2 per 10m0s",
			},
			same:    []string{"limit_conn_status: 429", "a concurrency limit of 2 admits the same"},
			differs: []string{"limit_conn: sluice's reverse proxy gives a slot back", "limit_req_status: nginx refused with 503"},
		},
		{
			name:   "a prefix without its slash becomes two patterns and says so",
			format: "nginx",
			src: `limit_req_zone $remote_addr zone=login:1m rate=1r/s;
server { location = /login { limit_req zone=login; } location /search { limit_req zone=login burst=3 nodelay; } }`,
			limits: []string{"placeholder: fixed-window 1000000000 per 1s (shadow)"},
			rules: []string{
				"login paths=[/login] key=[ip/32/128] | per-second: gcra 1 per 1s burst 1",
				"login-2 paths=[/search /search/] key=[ip/32/128] | per-second: gcra 1 per 1s burst 4",
			},
			costs:   map[string]int64{"/": 0, "/login": 1, "/search": 1, "/search/": 1},
			differs: []string{"used with 2 settings", "nginx's prefix /search also matches"},
		},
	})
}

func TestImportEnvoy(t *testing.T) {
	src, err := os.ReadFile("../examples/envoy/ratelimit-config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	runImportCases(t, []importCase{
		{
			name:    "the rules file is served as it is",
			format:  "envoy",
			src:     string(src),
			limits:  []string{"placeholder: fixed-window 1000000000 per 1s (shadow)"},
			same:    []string{"matching"},
			differs: []string{"all or nothing"},
		},
		{
			name:   "units, shadow mode and unlimited rules are listed",
			format: "envoy",
			src: `domain: edge
descriptors:
  - key: remote_address
    rate_limit: {unit: minute, requests_per_unit: 100}
    descriptors:
      - key: path
        value: /login
        rate_limit: {unit: Second, requests_per_unit: 5, name: login}
        shadow_mode: true
  - key: trusted
    rate_limit: {unlimited: true}
`,
			limits: []string{"placeholder: fixed-window 1000000000 per 1s (shadow)"},
			same:   []string{"edge remote_address: 100 per minute in fixed windows", "edge trusted: unlimited"},
		},
	})
	tr, err := migrate.Envoy("domain: d\ndescriptors:\n  - key: k\n    rate_limit: {unit: hour, requests_per_unit: 3}\n", "r.yaml")
	if err != nil {
		t.Fatal(err)
	}
	files, err := tr.Files(false)
	if err != nil {
		t.Fatal(err)
	}
	if rules := files[migrate.EnvoyRulesFile]; !strings.Contains(rules, "shadow_mode: true") {
		t.Errorf("the shadow rules file has no shadow_mode:\n%s", rules)
	}
}

func TestImportKong(t *testing.T) {
	runImportCases(t, []importCase{
		{
			name:   "rate-limiting-advanced: sliding and fixed windows, identifiers, beside rate-limiting",
			format: "kong",
			src: `_format_version: "3.0"
plugins:
  - name: rate-limiting-advanced
    config: {limit: [10, 600], window_size: [1, 3600], identifier: ip, strategy: redis, sync_rate: 0.5}
services:
  - name: api
    routes:
      - name: reports
        paths: [/reports]
        plugins:
          - name: rate-limiting-advanced
            config: {limit: [5], window_size: [60], window_type: fixed, identifier: header, header_name: X-Tenant, disable_penalty: true}
      - name: old
        paths: [/old]
        plugins:
          - name: rate-limiting
            config: {minute: 2, limit_by: ip}
          - name: rate-limiting-advanced
            enabled: false
            config: {limit: [1], window_size: [1]}
`,
			limits: []string{"placeholder: fixed-window 1000000000 per 1s (shadow)"},
			rules: []string{
				"global paths=[] except=[/reports /reports/] key=[ip/32/128] | per-second: sliding-window-counter 10 per 1s | per-hour: sliding-window-counter 600 per 1h0m0s",
				"reports paths=[/reports /reports/] key=[header:X-Tenant] header_from=any | per-minute: fixed-window 5 per 1m0s",
				"old paths=[/old /old/] key=[ip/32/128] | per-minute: fixed-window 2 per 1m0s",
			},
			same:    []string{"sliding window adds the previous window's count weighted", "fixed windows aligned to the clock: sluice's fixed-window", "a disabled rate-limiting-advanced plugin"},
			differs: []string{"global plugin (advanced) disable_penalty: with disable_penalty false", "sync_rate"},
		},
		{
			name:   "a global plugin of several periods",
			format: "kong",
			src: `_format_version: "3.0"
plugins:
  - name: rate-limiting
    config: {second: 5, minute: 100, hour: 2000, policy: local, limit_by: ip}
`,
			limits:  []string{"per-second: fixed-window 5 per 1s", "per-minute: fixed-window 100 per 1m0s", "per-hour: fixed-window 2000 per 1h0m0s"},
			same:    []string{"limit_by ip", "windows"},
			differs: []string{"policy local", "X-RateLimit-Limit-<Period>"},
		},
		{
			name:   "consumers named by the jwt plugin",
			format: "kong",
			src: `_format_version: "3.0"
plugins:
  - name: jwt
  - name: rate-limiting
    config: {minute: 100, limit_by: consumer}
`,
			limits:  []string{"per-minute: fixed-window 100 per 1m0s"},
			same:    []string{"limit_by consumer"},
			differs: []string{"global plugin: Kong's jwt plugin makes a verified token name the consumer; sluice reads a Bearer token as an API key unless sluice.yaml sets identity.jwt"},
		},
		{
			name:   "consumers named by the openid-connect plugin",
			format: "kong",
			src: `_format_version: "3.0"
plugins:
  - name: openid-connect
    config: {issuer: "https://idp.example.com/realms/api/.well-known/openid-configuration"}
  - name: rate-limiting
    config: {minute: 100, limit_by: consumer}
`,
			limits:  []string{"per-minute: fixed-window 100 per 1m0s"},
			same:    []string{"tokens of https://idp.example.com/realms/api, their keys found by OpenID Connect discovery"},
			differs: []string{"Kong refuses a request without a valid token (401)"},
		},
		{
			name:   "a route plugin with a shared policy costs only its routes",
			format: "kong",
			src: `_format_version: "3.0"
services:
  - name: api
    url: http://api.internal
    routes:
      - name: search
        paths: [/search]
        plugins:
          - name: rate-limiting
            config: {minute: 60, month: 10000, policy: redis, fault_tolerant: false, error_code: 503}
consumers:
  - username: acme
    plugins:
      - name: rate-limiting
        config: {minute: 600}
plugins:
  - name: key-auth
`,
			limits:  []string{"per-minute: fixed-window 60 per 1m0s", "per-month: fixed-window 10000 per month"},
			costs:   map[string]int64{"/": 0, "/search": 1, "/search/": 1},
			same:    []string{"policy redis", "on_store_error: deny", "routes", "month: Kong counts calendar months of UTC"},
			differs: []string{"plugin on consumer acme: plan consumer-acme holds the limits; the file has no key-auth credential", "Kong refused with 503", "several credentials"},
		},
		{
			name:   "limit_by path counts its path together and the rest per address",
			format: "kong",
			src: `_format_version: "3.0"
routes:
  - name: api
    paths: [/api, /api]
    plugins:
      - name: rate-limiting
        config: {minute: 10, limit_by: path, path: /api/export}
`,
			limits: []string{"placeholder: fixed-window 1000000000 per 1s (shadow)"},
			rules: []string{
				"api paths=[/api /api/] except=[/api/export] key=[ip/32/128] | per-minute: fixed-window 10 per 1m0s",
				"api-path paths=[/api/export] key=[rule] | per-minute: fixed-window 10 per 1m0s",
			},
			costs: map[string]int64{"/": 0, "/api": 1, "/api/": 1},
			same:  []string{"plugin on route api limit_by path: requests on exactly /api/export count together"},
		},
		{
			name:   "plugins that differ become rules of their routes",
			format: "kong",
			src: `_format_version: "3.0"
services:
  - name: api
    plugins:
      - name: rate-limiting
        config: {hour: 1000, limit_by: service}
    routes:
      - name: search
        paths: [/search]
        plugins:
          - name: rate-limiting
            config: {minute: 60, limit_by: header, header_name: x-tenant}
      - name: items
        paths: [/items/]
routes:
  - name: login
    paths: [/login]
    plugins:
      - name: rate-limiting
        config: {second: 1, limit_by: ip}
`,
			limits: []string{"placeholder: fixed-window 1000000000 per 1s (shadow)"},
			rules: []string{
				"api paths=[/items/] key=[rule] | per-hour: fixed-window 1000 per 1h0m0s",
				"search paths=[/search /search/] key=[header:X-Tenant] header_from=any | per-minute: fixed-window 60 per 1m0s",
				"login paths=[/login /login/] key=[ip/32/128] | per-second: fixed-window 1 per 1s",
			},
			costs: map[string]int64{"/": 0, "/search": 1, "/search/": 1, "/items/": 1, "/login": 1, "/login/": 1},
			same: []string{"limit_by service: one count for everything the plugin covers", "one count per value of X-Tenant, whoever sends it", "routes",
				"plugin on service api: route search has a rate-limiting plugin of its own, which Kong runs instead: the rule leaves the route out"},
			differs: []string{"policy local"},
		},
	})
}

func TestImportTraefik(t *testing.T) {
	runImportCases(t, []importCase{
		{
			name:   "a file-provider middleware is a leaky-bucket queue with Traefik's maximum delay",
			format: "traefik",
			src: `http:
  middlewares:
    api-ratelimit:
      rateLimit:
        average: 100
        burst: 50
`,
			limits:  []string{"api-ratelimit: leaky-bucket 100 per 1s burst 50 max-wait 5ms"},
			same:    []string{"holds a request whose token comes within 5ms", "one bucket per client address"},
			differs: []string{"headers"},
		},
		{
			name:   "period 0 and burst 0 are Traefik's defaults, 1s and 1",
			format: "traefik",
			src: `http:
  middlewares:
    zero:
      rateLimit:
        average: 4
        period: 0
        burst: 0
`,
			// 4 a second: Traefik holds a request up to 1s/(4·2).
			limits:  []string{"zero: leaky-bucket 4 per 1s burst 1 max-wait 125ms"},
			differs: []string{"headers"},
		},
		{
			name:   "a burst larger than what refills while Traefik keeps an idle bucket is reported",
			format: "traefik",
			src: `http:
  middlewares:
    bursty:
      rateLimit: {average: 10, burst: 100}
`,
			// Traefik drops a bucket idle for 2s (rates of one a second or
			// more): a new one holds 100, sluice's refills 20 in that time.
			limits:  []string{"bursty: leaky-bucket 10 per 1s burst 100 max-wait 50ms"},
			differs: []string{"middleware bursty idle buckets: Traefik forgets a client's bucket after 2s", "whole burst of 100"},
		},
		{
			name:   "Kubernetes middlewares with a period and a header source",
			format: "traefik",
			src: `apiVersion: traefik.io/v1alpha1
kind: Middleware
metadata: {name: slow}
spec:
  rateLimit:
    average: 6
    period: 1m
    sourceCriterion:
      requestHeaderName: X-Tenant
---
apiVersion: traefik.io/v1alpha1
kind: Middleware
metadata: {name: by-host}
spec:
  rateLimit: {average: 1000, burst: 100, sourceCriterion: {requestHost: true}}
`,
			limits: []string{"placeholder: fixed-window 1000000000 per 1s (shadow)"},
			rules: []string{
				"slow paths=[] key=[header:X-Tenant] header_from=any fallback=shared | per-minute: leaky-bucket 6 per 1m0s burst 1 max-wait 500ms",
				"by-host paths=[] key=[host] | per-second: leaky-bucket 1000 per 1s burst 100 max-wait 500µs",
			},
			same:    []string{"one bucket per value of X-Tenant, whoever sends it", "one bucket for every request without it"},
			differs: []string{"middlewares: Traefik applies each middleware to the routers that name it; the file has no routers", "requestHost: Traefik keys by the Host header as the client wrote it"},
		},
		{
			name:   "routers make a rule of each middleware they name, on their hosts and paths",
			format: "traefik",
			src: `http:
  routers:
    api:
      rule: "Host(` + "`api.example.com`" + `) && PathPrefix(` + "`/api`" + `)"
      middlewares: [per-ip@file, per-tenant]
    health:
      rule: "PathPrefix(` + "`/api/health`" + `)"
    login:
      rule: "Path(` + "`/login`" + `)"
      middlewares: [per-ip]
    odd:
      rule: "Method(` + "`POST`" + `) || Host(` + "`x.example`" + `)"
      middlewares: [unused-elsewhere]
    writes:
      rule: "Method(` + "`post`" + `) && Header(` + "`X-Beta`" + `, ` + "`1`" + `) && PathPrefix(` + "`/v2/`" + `)"
      middlewares: [spare]
  middlewares:
    per-ip:
      rateLimit: {average: 10, burst: 20}
    per-tenant:
      rateLimit: {average: 100, period: 1m, sourceCriterion: {requestHeaderName: x-tenant}}
    unused-elsewhere:
      rateLimit: {average: 1}
    spare:
      rateLimit: {average: 5}
`,
			limits: []string{"placeholder: fixed-window 1000000000 per 1s (shadow)"},
			rules: []string{
				"api-per-ip paths=[/api /api/] hosts=[api.example.com] key=[ip/32/128] | per-second: leaky-bucket 10 per 1s burst 20 max-wait 50ms",
				"api-per-tenant paths=[/api /api/] hosts=[api.example.com] key=[header:X-Tenant] header_from=any fallback=shared | per-minute: leaky-bucket 100 per 1m0s burst 1 max-wait 500ms",
				"login paths=[/login] key=[ip/32/128] | per-second: leaky-bucket 10 per 1s burst 20 max-wait 50ms",
				"odd paths=[] key=[ip/32/128] | per-second: leaky-bucket 1 per 1s burst 1 max-wait 500ms",
				"writes paths=[/v2/] methods=[POST] headers=[{X-Beta 1}] key=[ip/32/128] | per-second: leaky-bucket 5 per 1s burst 1 max-wait 100ms",
			},
			same:    []string{"one bucket per client address (key ip/32/128"},
			differs: []string{"router odd: its rule", "headers"},
		},
		{
			name:   "a middleware kept in Redis is one rule on the paths of all its routers",
			format: "traefik",
			src: `http:
  routers:
    a: {rule: "PathPrefix(` + "`/a/`" + `)", middlewares: [shared]}
    b: {rule: "Path(` + "`/b`" + `)", middlewares: [shared]}
  middlewares:
    shared:
      rateLimit: {average: 5, burst: 5, redis: {endpoints: ["redis:6379"]}}
`,
			limits:  []string{"placeholder: fixed-window 1000000000 per 1s (shadow)"},
			rules:   []string{"shared paths=[/a/ /b] key=[ip/32/128] | per-second: leaky-bucket 5 per 1s burst 5 max-wait 100ms"},
			costs:   map[string]int64{"/": 0, "/a/": 1, "/b": 1},
			same:    []string{"middleware shared redis: Traefik's Redis storage keeps one bucket set for every router"},
			differs: []string{"headers"},
		},
	})
}

func TestImportRefusesWhatItCannotRead(t *testing.T) {
	for name, c := range map[string][2]string{
		"nginx: an undefined zone":             {"nginx", "limit_req zone=nope;"},
		"nginx: an unterminated directive":     {"nginx", "limit_req_zone $remote_addr zone=a:1m rate=1r/s"},
		"nginx: a bad rate":                    {"nginx", "limit_req_zone $remote_addr zone=a:1m rate=1r/h;"},
		"nginx: an unclosed block":             {"nginx", "server { location / {"},
		"nginx: a negative delay":              {"nginx", "limit_req_zone $remote_addr zone=a:1m rate=1r/s;\nlimit_req zone=a burst=5 delay=-1;"},
		"nginx: nodelay with a negative delay": {"nginx", "limit_req_zone $remote_addr zone=a:1m rate=1r/s;\nlimit_req zone=a burst=5 delay=-1 nodelay;"},
		"envoy: no domain":                     {"envoy", "descriptors: []"},
		"envoy: a bad unit":                    {"envoy", "domain: d\ndescriptors:\n  - key: k\n    rate_limit: {unit: fortnight, requests_per_unit: 1}\n"},
		"kong: no plugin":                      {"kong", "_format_version: \"3.0\"\n"},
		"kong: a limit of 0":                   {"kong", "plugins:\n  - name: rate-limiting\n    config: {minute: 0}\n"},
		"traefik: no middleware":               {"traefik", "http: {}\n"},
		"traefik: a bad period":                {"traefik", "http: {middlewares: {a: {rateLimit: {average: 1, period: soon}}}}\n"},
		"traefik: a period beyond a window":    {"traefik", "http: {middlewares: {a: {rateLimit: {average: 1, period: 10000h}}}}\n"},
		"kong: a quantity beyond sluice's":     {"kong", "plugins:\n  - name: rate-limiting\n    config: {minute: 1e15}\n"},
		"haproxy: a line outside a section":    {"haproxy", "bind :80\n"},
		"haproxy: an unterminated quote":       {"haproxy", "frontend fe\n  acl a path \"/x\n"},
		"haproxy: an undefined ACL":            {"haproxy", "frontend fe\n  http-request deny if nope\n"},
		"haproxy: a bad period":                {"haproxy", "frontend fe\n  stick-table type ip store http_req_rate(soon)\n"},
		"haproxy: no rate limit":               {"haproxy", "frontend fe\n  http-request deny if { path_beg /x }\n"},
		"an unknown format":                    {"iis", "x"},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := migrate.Import(c[0], c[1], "f"); err == nil {
				t.Fatal("imported")
			}
		})
	}
}

// TestImportedRulesDecide serves the configuration imported from Kong
// plugins that differ by route and checks what each rule counts: the
// service's plugin one count for both its routes, the route's plugin a
// count per tenant, the other route's a count per address, and a path no
// plugin covers nothing.
func TestImportedRulesDecide(t *testing.T) {
	tr, err := migrate.Import("kong", `_format_version: "3.0"
services:
  - name: api
    plugins:
      - name: rate-limiting
        config: {hour: 3, limit_by: service}
    routes:
      - {name: search, paths: [/search], plugins: [{name: rate-limiting, config: {minute: 1, limit_by: header, header_name: x-tenant}}]}
      - {name: items, paths: [/items/]}
routes:
  - {name: login, paths: [/login], plugins: [{name: rate-limiting, config: {second: 1, limit_by: ip}}]}
`, "kong.yaml")
	if err != nil {
		t.Fatal(err)
	}
	expectStatuses(t, serveImported(t, tr), []sent{
		{"/search", "a", "192.0.2.1", 200},
		{"/search", "a", "192.0.2.2", 429}, // tenant a's minute, whatever the address
		{"/search", "b", "192.0.2.1", 200}, // the route's plugin alone: the service's does not count it
		{"/items/1", "", "192.0.2.3", 200}, // the service's hour: 1 of 3
		{"/items/2", "", "192.0.2.4", 200},
		{"/items/3", "", "192.0.2.5", 200},
		{"/items/4", "", "192.0.2.6", 429}, // the service's hour is spent, for every address
		{"/login", "", "192.0.2.1", 200},
		{"/login", "", "192.0.2.1", 429}, // a second per address
		{"/login", "", "192.0.2.2", 200},
		{"/other", "", "192.0.2.1", 200}, // no plugin: cost 0
		{"/other", "", "192.0.2.1", 200},
	})
}

// TestImportedKongRoutePluginsCountApart: two routes with plugins of the
// same configuration keep a count each, as Kong keys its counters by the
// plugin's route and service: a client that spent route a's hour still has
// route b's.
func TestImportedKongRoutePluginsCountApart(t *testing.T) {
	tr, err := migrate.Import("kong", `_format_version: "3.0"
services:
  - name: api
    routes:
      - {name: a, paths: [/a], plugins: [{name: rate-limiting, config: {hour: 2, limit_by: ip}}]}
      - {name: b, paths: [/b], plugins: [{name: rate-limiting, config: {hour: 2, limit_by: ip}}]}
`, "kong.yaml")
	if err != nil {
		t.Fatal(err)
	}
	expectStatuses(t, serveImported(t, tr), []sent{
		{"/a", "", "192.0.2.1", 200},
		{"/a", "", "192.0.2.1", 200},
		{"/b", "", "192.0.2.1", 200}, // route b's own count
		{"/b", "", "192.0.2.1", 200},
		{"/a", "", "192.0.2.1", 429}, // route a's hour is spent
		{"/b", "", "192.0.2.1", 429},
		{"/a", "", "192.0.2.2", 200}, // per address
		{"/other", "", "192.0.2.1", 200},
	})
}

// sent is one GET request of path, with X-Tenant: tenant unless empty,
// from address from, and the status it must get.
type sent struct {
	path, tenant, from string
	want               int
}

// expectStatuses sends each request to h in turn and checks its status.
func expectStatuses(t *testing.T, h http.Handler, reqs []sent) {
	t.Helper()
	for i, c := range reqs {
		r := httptest.NewRequest("GET", c.path, nil)
		r.RemoteAddr = c.from + ":1234"
		if c.tenant != "" {
			r.Header.Set("X-Tenant", c.tenant)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != c.want {
			t.Errorf("request %d, %s tenant %q from %s: %d, want %d (RateLimit: %s)", i, c.path, c.tenant, c.from, w.Code, c.want, w.Header().Get("RateLimit"))
		}
	}
}

// sendKey sends GET path to h from address addr, with the API key key in
// Apikey (none when ""), and returns the status.
func sendKey(h http.Handler, path, key, addr string) int {
	r := httptest.NewRequest("GET", path, nil)
	r.RemoteAddr = addr + ":1234"
	if key != "" {
		r.Header.Set("Apikey", key)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w.Code
}

// serveImported returns sluice's public handler serving tr's configuration
// (enforced) on the memory store, in front of an upstream that answers 200;
// more YAML, if any, is appended to the imported file.
func serveImported(t *testing.T, tr *migrate.Translation, more ...string) http.Handler {
	t.Helper()
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	t.Cleanup(up.Close)
	files, err := tr.Files(true)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse("imported.yaml", []byte("upstream: "+up.URL+"\n"+files[migrate.ConfigFile]+strings.Join(more, "")))
	if err != nil {
		t.Fatalf("%v\n%s", err, files[migrate.ConfigFile])
	}
	clock := func() time.Time { return servedAt }
	store := memory.New(memory.WithClock(clock), memory.WithSweepInterval(0))
	t.Cleanup(func() { store.Close() })
	srv, err := server.New(server.Options{Config: cfg, Store: store, Clock: clock, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	return srv.PublicHandler()
}

// servedAt is the time of every request serveImported's server decides:
// its clock stands still, 30 s into a minute and an hour, so that a test's
// requests all fall in one window of the per-second, per-minute and
// per-hour limits the gateways' plugins set (on the wall clock, a minute
// that ended between two requests let one more in: 6 of a plugin's 5).
var servedAt = time.Date(2026, time.January, 5, 10, 20, 30, 0, time.UTC)

// TestImportedTraefikRoutersDecide serves the configuration imported from
// Traefik routers and checks each router's buckets: by address on /api,
// none on /api/health (a router without the middleware), its own on
// /api/admin (a router of the same middleware: its own bucket set, and the
// /api router's does not count it), and by X-Tenant on /reports, where
// requests without the header share one bucket.
func TestImportedTraefikRoutersDecide(t *testing.T) {
	tr, err := migrate.Import("traefik", "http:\n  routers:\n"+
		"    api: {rule: \"PathPrefix(`/api`)\", middlewares: [one]}\n"+
		"    health: {rule: \"PathPrefix(`/api/health`)\"}\n"+
		"    admin: {rule: \"PathPrefix(`/api/admin`)\", middlewares: [one]}\n"+
		"    reports: {rule: \"Path(`/reports`)\", middlewares: [tenant]}\n"+
		"  middlewares:\n"+
		"    one: {rateLimit: {average: 1}}\n"+
		"    tenant: {rateLimit: {average: 1, sourceCriterion: {requestHeaderName: X-Tenant}}}\n", "traefik.yaml")
	if err != nil {
		t.Fatal(err)
	}
	expectStatuses(t, serveImported(t, tr), []sent{
		{"/api/items", "", "192.0.2.1", 200},
		{"/api/items", "", "192.0.2.1", 429}, // the next token is a second away: more than the 500ms Traefik holds
		{"/api/items", "", "192.0.2.2", 200}, // another address
		{"/api/health", "", "192.0.2.1", 200},
		{"/api/health", "", "192.0.2.1", 200},  // its router has no rate limit
		{"/api/admin/x", "", "192.0.2.1", 200}, // its router's own bucket: /api's does not count it
		{"/api/admin/y", "", "192.0.2.1", 429},
		{"/reports", "a", "192.0.2.1", 200},
		{"/reports", "a", "192.0.2.2", 429}, // tenant a, from anywhere
		{"/reports", "", "192.0.2.3", 200},
		{"/reports", "", "192.0.2.4", 429}, // without X-Tenant: one shared bucket
		{"/other", "", "192.0.2.1", 200},
	})
}

// TestImportedKongConsumerDecides: a consumer's plugin is a plan chosen by
// its key-auth credential, in place of the global plugin's limits; other
// clients keep the imported plan.
func TestImportedKongConsumerDecides(t *testing.T) {
	tr, err := migrate.Import("kong", `_format_version: "3.0"
plugins:
  - {name: rate-limiting, config: {minute: 3, limit_by: ip}}
consumers:
  - username: acme
    keyauth_credentials: [{key: acme-secret}]
    plugins: [{name: rate-limiting, config: {minute: 1}}]
`, "kong.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if r := tr.Report(); !strings.Contains(r, "chosen by acme's 1 key-auth credential (keys:") {
		t.Errorf("the report does not count acme's one credential in the singular:\n%s", r)
	}
	files, _ := tr.Files(true)
	if strings.Contains(files[migrate.ConfigFile], "acme-secret") {
		t.Fatalf("the key is in the configuration in clear:\n%s", files[migrate.ConfigFile])
	}
	h := serveImported(t, tr)
	var got []int
	for _, key := range []string{"acme-secret", "acme-secret", "", "", "made-up", "another"} {
		got = append(got, sendKey(h, "/x", key, "192.0.2.1"))
	}
	// acme: one a minute; the address: three a minute, whatever unlisted
	// key it sends (a made-up key is no fresh quota, as in Kong).
	if want := []int{200, 429, 200, 200, 200, 429}; !slices.Equal(got, want) {
		t.Errorf("acme twice, then the address with no key twice and two made-up keys: %v, want %v", got, want)
	}
}

// TestImportedKongConsumerGroupsDecide: each consumer group's plugin is a
// plan for its members (named by the consumer or by the group), a
// consumer's own plugin wins over its group's, and a consumer of no group
// keeps the imported plan, as in Kong 3.4 and later.
func TestImportedKongConsumerGroupsDecide(t *testing.T) {
	tr, err := migrate.Import("kong", `_format_version: "3.0"
plugins:
  - {name: rate-limiting-advanced, config: {limit: [1], window_size: [60]}}
consumer_groups:
  - name: silver
    consumers: [{username: bar}]
    plugins: [{name: rate-limiting-advanced, config: {limit: [2], window_size: [60]}}]
  - name: gold
    plugins: [{name: rate-limiting-advanced, config: {limit: [3], window_size: [60]}}]
consumers:
  - {username: foo, keyauth_credentials: [{key: foo-key}], groups: [{name: gold}]}
  - {username: bar, keyauth_credentials: [{key: bar-key}]}
  - {username: baz, keyauth_credentials: [{key: baz-key}]}
  - username: vip
    keyauth_credentials: [{key: vip-key}]
    groups: [{name: gold}]
    plugins: [{name: rate-limiting-advanced, config: {limit: [4], window_size: [60]}}]
`, "kong.yaml")
	if err != nil {
		t.Fatal(err)
	}
	h := serveImported(t, tr)
	for i, c := range []struct {
		key      string
		admitted int
	}{{"foo-key", 3}, {"bar-key", 2}, {"baz-key", 1}, {"vip-key", 4}} {
		n := 0
		for range 6 {
			if sendKey(h, "/x", c.key, fmt.Sprintf("192.0.2.%d", i+1)) == 200 {
				n++
			}
		}
		if n != c.admitted {
			t.Errorf("%s: %d of 6 admitted, want %d", c.key, n, c.admitted)
		}
	}
}

// TestImportedKongConsumerGroupCountsTogether: a group's plugin with
// identifier consumer-group counts its consumers together (one count for
// the group's plan, a rule keyed by rule), as Kong does.
func TestImportedKongConsumerGroupCountsTogether(t *testing.T) {
	tr, err := migrate.Import("kong", `_format_version: "3.0"
plugins:
  - {name: rate-limiting-advanced, config: {limit: [100], window_size: [60]}}
consumer_groups:
  - name: team
    plugins: [{name: rate-limiting-advanced, config: {limit: [3], window_size: [60], identifier: consumer-group}}]
consumers:
  - {username: foo, keyauth_credentials: [{key: foo-key}], groups: [{name: team}]}
  - {username: bar, keyauth_credentials: [{key: bar-key}], groups: [{name: team}]}
  - {username: baz, keyauth_credentials: [{key: baz-key}]}
`, "kong.yaml")
	if err != nil {
		t.Fatal(err)
	}
	h := serveImported(t, tr)
	var got []int
	for _, key := range []string{"foo-key", "foo-key", "bar-key", "bar-key", "foo-key", "baz-key"} {
		got = append(got, sendKey(h, "/x", key, "192.0.2.1"))
	}
	if want := []int{200, 200, 200, 429, 429, 200}; !slices.Equal(got, want) {
		t.Errorf("foo ×2, bar ×2, foo, baz: %v, want %v (the team's 3 together; baz on the imported plan)", got, want)
	}
}

// TestImportedKongConsumerEscapesTheRouteRules: where the plugins differ
// (rules), a consumer's requests meet its own plugin alone, as in Kong,
// not the route's or the global one's.
func TestImportedKongConsumerEscapesTheRouteRules(t *testing.T) {
	tr, err := migrate.Import("kong", `_format_version: "3.0"
plugins:
  - {name: rate-limiting, config: {minute: 5, limit_by: ip}}
services:
  - name: api
    url: http://api.internal
    routes:
      - name: search
        paths: [/search]
        plugins: [{name: rate-limiting, config: {minute: 1, limit_by: ip}}]
consumers:
  - username: acme
    keyauth_credentials: [{key: acme-secret}]
    plugins: [{name: rate-limiting, config: {minute: 2}}]
`, "kong.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.SluiceRules) == 0 {
		t.Fatalf("no rules: the case needs plugins that differ")
	}
	h := serveImported(t, tr)
	var got []int
	for _, c := range []struct{ key, addr string }{
		{"acme-secret", "192.0.2.1"}, {"acme-secret", "192.0.2.1"}, {"acme-secret", "192.0.2.1"},
		{"", "192.0.2.2"}, {"", "192.0.2.2"},
	} {
		got = append(got, sendKey(h, "/search", c.key, c.addr))
	}
	// acme: its plugin's 2 a minute (not the route's 1); an address: the
	// route's 1.
	if want := []int{200, 200, 429, 200, 429}; !slices.Equal(got, want) {
		t.Errorf("acme ×3, then an address ×2 on /search: %v, want %v", got, want)
	}
}

// TestImportBoundsThePlaces: a file of more places than MaxPlaces (or more
// limit_req directives, or router-middleware pairs) is refused, saying the
// bound, before its quadratic comparisons; one at the bound imports and
// loads within seconds.
func TestImportBoundsThePlaces(t *testing.T) {
	file := func(n int) string {
		var b strings.Builder
		b.WriteString("limit_req_zone $binary_remote_addr zone=a:1m rate=1r/s;\nlimit_req_zone $binary_remote_addr zone=b:1m rate=1r/s;\nserver {\n")
		for i := range n {
			fmt.Fprintf(&b, "location /p%d/ { limit_req zone=%c; }\n", i, "ab"[i%2])
		}
		b.WriteString("}\n")
		return b.String()
	}
	if _, err := migrate.Import("nginx", file(migrate.MaxPlaces), "f"); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("more than the %d", migrate.MaxPlaces)) {
		t.Errorf("%d locations and a server: %v", migrate.MaxPlaces, err)
	}
	var many strings.Builder // directives, and a router's middlewares, count too
	many.WriteString("limit_req_zone $binary_remote_addr zone=a:1m rate=1r/s;\n")
	var names []string
	for i := range migrate.MaxPlaces + 1 {
		fmt.Fprintf(&many, "limit_req zone=a burst=%d;\n", i)
		names = append(names, fmt.Sprintf("m%d", i))
	}
	if _, err := migrate.Import("nginx", many.String(), "f"); err == nil || !strings.Contains(err.Error(), "limit_req and limit_conn directives") {
		t.Errorf("%d limit_req directives: %v", migrate.MaxPlaces+1, err)
	}
	traefik := "http:\n  routers:\n    r: {rule: \"PathPrefix(`/a`)\", middlewares: [" + strings.Join(names, ", ") + "]}\n  middlewares:\n"
	for _, n := range names {
		traefik += "    " + n + ": {rateLimit: {average: 1}}\n"
	}
	if _, err := migrate.Import("traefik", traefik, "f"); err == nil || !strings.Contains(err.Error(), "more than the") {
		t.Errorf("a router of %d middlewares: %v", len(names), err)
	}
	start := time.Now()
	tr, err := migrate.Import("nginx", file(migrate.MaxPlaces-2), "f")
	if err != nil {
		t.Fatal(err)
	}
	load(t, tr, true)
	// The comparisons grow with the square of the places: the bound tells
	// seconds (4.5 s alone, 18 s under -race at a load of 12) from the
	// many minutes of a cube, with room for -race on a machine running
	// every package's tests at once and more (67 s seen).
	if d := time.Since(start); d > 3*time.Minute {
		t.Errorf("%d locations took %v to import and load", migrate.MaxPlaces-2, d)
	}
}

// TestImportedKongHidesHeadersAndSpreadsRetries: hide_client_headers hides
// every limit's RateLimit headers, a consumer's plan's included, and
// retry_after_jitter_max spreads the Retry-After of clients refused
// together over up to that many seconds past the exact wait.
func TestImportedKongHidesHeadersAndSpreadsRetries(t *testing.T) {
	tr, err := migrate.Import("kong", `_format_version: "3.0"
plugins:
  - name: rate-limiting-advanced
    config: {limit: [1], window_size: [3600], window_type: fixed, identifier: ip, hide_client_headers: true, retry_after_jitter_max: 120}
consumers:
  - username: acme
    keyauth_credentials: [{key: acme-secret}]
    plugins:
      - name: rate-limiting-advanced
        config: {limit: [5], window_size: [60], window_type: fixed, hide_client_headers: true, retry_after_jitter_max: 120}
`, "kong.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cfg := load(t, tr, true)
	if cfg.Response.RetryJitter != 2*time.Minute || len(cfg.Response.Hide) == 0 {
		t.Fatalf("response: retry_jitter %v, hide %v; want 2m and every limit", cfg.Response.RetryJitter, cfg.Response.Hide)
	}
	h := serveImported(t, tr)
	seen := map[int64]bool{}
	for i := range 40 {
		// The server decides at servedAt: the wait is at least the whole
		// seconds left of its hour, at most those and the 2 minutes of
		// jitter.
		var last *httptest.ResponseRecorder
		for range 2 {
			r := httptest.NewRequest("GET", "/x", nil)
			r.RemoteAddr = fmt.Sprintf("192.0.2.%d:1234", i+1)
			last = httptest.NewRecorder()
			h.ServeHTTP(last, r)
			for name := range last.Header() {
				if strings.HasPrefix(strings.ToLower(name), "ratelimit") || strings.HasPrefix(strings.ToLower(name), "x-ratelimit") {
					t.Fatalf("client %d: %s: %s sent, though Kong hid its headers", i, name, last.Header().Get(name))
				}
			}
		}
		left := servedAt.Truncate(time.Hour).Add(time.Hour).Sub(servedAt)
		least, most := int64(left/time.Second), int64(left/time.Second)+120
		ra, err := strconv.ParseInt(last.Header().Get("Retry-After"), 10, 64)
		if last.Code != http.StatusTooManyRequests || err != nil || ra < least || ra > most {
			t.Fatalf("client %d: %d, Retry-After %q; want 429 and [%d, %d]", i, last.Code, last.Header().Get("Retry-After"), least, most)
		}
		seen[ra-least] = true
	}
	if len(seen) < 10 {
		t.Errorf("40 clients refused together were told %d distinct jitters; want them spread over 2 minutes", len(seen))
	}
	if sendKey(h, "/x", "acme-secret", "192.0.2.200") != http.StatusOK {
		t.Error("acme's first request refused")
	}
}
