package migrate_test

import (
	"testing"

	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/migrate"
)

// fuzzImport holds a parser to its contract on any input: it returns an
// error or a translation, never panics, and a translation's configuration
// is one that sluice check accepts.
func fuzzImport(f *testing.F, format string, seeds ...string) {
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		tr, err := migrate.Import(format, src, "fuzz")
		if err != nil {
			return
		}
		files, err := tr.Files(false)
		if err != nil {
			return // envoy rules the YAML encoder cannot round-trip
		}
		if _, ok := files[migrate.EnvoyRulesFile]; ok {
			return // the rules are judged by the envoy package's own loader and fuzz test
		}
		if _, err := config.Parse("fuzz.yaml", []byte(files[migrate.ConfigFile])); err != nil {
			t.Fatalf("the imported configuration does not load: %v\n%s", err, files[migrate.ConfigFile])
		}
		_ = tr.Report()
	})
}

func FuzzNginx(f *testing.F) {
	fuzzImport(f, migrate.FormatNginx,
		"limit_req_zone $binary_remote_addr zone=one:10m rate=10r/s;\nserver { limit_req zone=one burst=5 nodelay; }",
		"limit_req_zone $http_x_key zone=k:1m rate=3r/m;\nlocation /api/ { limit_req zone=k burst=2 delay=1; }",
		"limit_req_zone x zone=g:1m rate=1r/s; limit_req zone=g; limit_req_status 429; limit_req_dry_run on;",
		"http { server { location = /a/ { limit_req zone=z; } } limit_req_zone $remote_addr zone=z:1k rate=2r/s; }",
		`server { location "~ \.php$" { } } # comment`,
		"limit_req_zone $host zone=h:1m rate=5r/s;\nlimit_req_zone $remote_addr zone=a:1m rate=5r/s;\nserver { location //x/ { limit_req zone=h; } location /y { limit_req zone=a; } }",
		"limit_req_zone $host zone=h:1m rate=5r/s;\nlimit_req_zone $binary_remote_addr zone=a:1m rate=1r/s;\nserver { location /x/ { limit_req zone=h; } location /x/y/ { limit_req zone=a burst=2 nodelay; } location /x/z { } location = /w { limit_req zone=a; } }",
		"limit_conn_zone $binary_remote_addr zone=c:1m;\nlimit_req_zone $http_k zone=r:1m rate=1r/m;\nserver { limit_conn c 3; limit_conn_dry_run on; location /d/ { limit_conn c 1; limit_req zone=r; } }",
		"geo $l { default 1; 10.0.0.0/8 0; 10.1.0.0/16 1; ::1 0; }\nmap $l $k { 0 \"\"; default $remote_addr; }\nlimit_req_zone $k zone=z:1m rate=3r/s;\nlimit_req zone=z;",
		"limit_req_zone ${arg_a}x$cookie_b$uri${http_c zone=z:1m rate=3r/s;\nlimit_req zone=z;")
}

func FuzzEnvoy(f *testing.F) {
	fuzzImport(f, migrate.FormatEnvoy,
		"domain: d\ndescriptors:\n  - key: k\n    rate_limit: {unit: second, requests_per_unit: 5}\n",
		"domain: d\ndescriptors:\n  - key: a\n    value: b\n    shadow_mode: true\n    rate_limit: {unit: day, requests_per_unit: 0, name: x}\n    descriptors: [{key: c, rate_limit: {unlimited: true}}]\n",
		"domain: d\ndescriptors:\n  - &b\n    key: a\n    rate_limit: &r {unit: day, requests_per_unit: 3}\n    descriptors: &l [{key: c, rate_limit: *r}]\n  - <<: *b\n    key: e\n    rate_limit: {<<: *r, requests_per_unit: 1}\n    descriptors: *l\n",
		"http_filters: [{typed_config: {\"@type\": x.local_ratelimit.v3.LocalRateLimit, token_bucket: {max_tokens: 3, fill_interval: 2s}, filter_enabled: {default_value: {numerator: 1, denominator: HUNDRED}}}}]\n",
		"virtual_hosts:\n- name: v\n  domains: [a.example]\n  routes:\n  - match: {prefix: /a}\n  - match: {path: /a/b/, headers: [{name: x-k, exact_match: v}]}\n    route: {rate_limits: [{actions: [{request_headers: {header_name: ':path', descriptor_key: p}}, {remote_address: {}}]}]}\n    typed_per_filter_config: {l: {\"@type\": local_ratelimit.v3.LocalRateLimit, token_bucket: {max_tokens: 1, tokens_per_fill: 2, fill_interval: 0.25s}, filter_enabled: {default_value: {numerator: 100}}, descriptors: [{entries: [{key: p, value: /a/b/}, {key: remote_address}], token_bucket: {max_tokens: 1, fill_interval: 1s}}]}}\n")
}

func FuzzKong(f *testing.F) {
	fuzzImport(f, migrate.FormatKong,
		"consumer_groups: [{name: g, consumers: [{username: a}], plugins: [{name: rate-limiting-advanced, config: {limit: [3], window_size: [60], identifier: consumer-group}}]}]\nconsumers: [{username: a, keyauth_credentials: [{key: k}], groups: [{name: g}]}]\nroutes: [{name: r, paths: [/r], plugins: [{name: rate-limiting, config: {second: 1}}]}]\n",
		"plugins:\n  - name: rate-limiting\n    config: {second: 5, minute: 100, limit_by: ip}\n",
		"services:\n  - name: s\n    routes: [{name: r, paths: [/x], plugins: [{name: rate-limiting, config: {hour: 3, policy: redis, limit_by: header, header_name: X-K}}]}]\n",
		"plugins: [{name: rate-limiting, enabled: false, config: {day: 1}}, {name: rate-limiting, config: {year: 9, limit_by: service}}]\n",
		"plugins: [{name: rate-limiting, config: {second: 2, limit_by: ip}}]\nconsumers: [{username: a, keyauth_credentials: [{key: k1}, {key: k2}], plugins: [{name: rate-limiting, config: {minute: 5}}]}, {username: a, plugins: [{name: rate-limiting, config: {hour: 1}}]}]\n",
		"services:\n  - name: s\n    plugins: [{name: rate-limiting, config: {hour: 3, limit_by: service}}]\n    routes: [{name: r, paths: [/x], plugins: [{name: rate-limiting, config: {second: 1, limit_by: consumer}}]}, {name: q, paths: [\"~/re\"]}]\n",
		"routes: [{name: a, paths: [/a, /a/], plugins: [{name: rate-limiting, config: {minute: 2, limit_by: path, path: /a/x/}}]}]\n",
		"plugins: [{name: rate-limiting-advanced, config: {limit: [3, 9], window_size: [1, 60], window_type: fixed, identifier: consumer-group, strategy: cluster}}]\nroutes: [{name: r, paths: [/r], plugins: [{name: rate-limiting-advanced, config: {limit: [1], window_size: [2.5]}}, {name: rate-limiting, config: {second: 1}}]}]\n",
		"plugins: [{name: rate-limiting, config: {minute: 3}}, {name: rate-limiting, service: s, config: {hour: 2, limit_by: ip}}, {name: key-auth, route: a}]\nservices:\n  - name: s\n    routes: [{name: a, paths: [/a]}, {name: b, paths: [/], plugins: [{name: rate-limiting, consumer: c, config: {second: 1}}]}]\n  - name: t\n    routes: [{name: d, paths: [/a/d], methods: [GET]}, {name: e, paths: [/e], plugins: [{name: key-auth}]}]\nconsumers: [{username: c, keyauth_credentials: [{key: k}], plugins: [{name: rate-limiting, config: {day: 4}}]}]\n",
		"plugins: [{name: rate-limiting, config: {minute: 3, limit_by: ip}}]\nroutes:\n- {name: a, paths: [/o, \"~/x$\"], regex_priority: 2, plugins: [{name: rate-limiting, config: {minute: 5}}]}\n- {name: b, paths: [/o, \"~/x$\"], hosts: [h]}\n- {name: c, paths: [/o]}\n- {name: d, paths: [/o, /p], hosts: [h, i], methods: [GET, POST]}\n",
		"routes:\n- {name: w, paths: [/, /w/x], hosts: [a, b], plugins: [{name: rate-limiting, config: {minute: 3, limit_by: ip}}]}\n- {name: v, paths: [/v], methods: [GET], plugins: [{name: rate-limiting, config: {minute: 1, limit_by: ip}}]}\n- {name: h, paths: [/w], hosts: [a]}\n- {name: g, paths: [/v/x], methods: [POST]}\n- {name: t, paths: [/], hosts: [c.example, \"*.d\"]}\n- {name: u, paths: [/u], hosts: [\"e:8080\"], headers: {x-a: [b]}}\n",
		"services:\n- name: s\n  plugins: [{name: rate-limiting, config: {minute: 5, limit_by: ip}}]\n  routes: [{name: rb, hosts: [a], paths: [/]}, {name: rc, methods: [GET], paths: [/o/x]}]\nroutes:\n- {name: ra, paths: [/o, /p], plugins: [{name: rate-limiting, config: {minute: 3, limit_by: ip}}]}\n- {name: rd, hosts: [a, b], methods: [POST], paths: [/o/y]}\n",
		kongK8s)
}

func FuzzTraefik(f *testing.F) {
	fuzzImport(f, migrate.FormatTraefik,
		"http:\n  middlewares:\n    a:\n      rateLimit: {average: 100, burst: 50}\n",
		"kind: Middleware\nmetadata: {name: m}\nspec:\n  rateLimit: {average: 6, period: 1m, sourceCriterion: {requestHeaderName: X-T}}\n---\nkind: Middleware\nmetadata: {name: h}\nspec: {rateLimit: {average: 1, period: 3, sourceCriterion: {requestHost: true}}}\n",
		"http:\n  routers:\n    r: {rule: \"Host(`a.example`) && PathPrefix(`/api`)\", middlewares: [a@file]}\n    s: {rule: \"Path(`/api/x/`)\", middlewares: [a]}\n    u: {rule: \"PathPrefix(`/api/h`)\"}\n  middlewares:\n    a: {rateLimit: {average: 3}}\n",
		"kind: IngressRoute\nmetadata: {name: ir}\nspec:\n  routes:\n    - {match: \"PathPrefix(`/v1`) || Host(`x`)\", middlewares: [{name: m}]}\n---\nkind: Middleware\nmetadata: {name: m}\nspec: {rateLimit: {average: 2}}\n",
		"http:\n  routers:\n    w: {rule: \"Method(`GET`,`post`) && Headers(`X-A`, `b`) && Path(`/w/`)\", middlewares: [m]}\n    u: {rule: \"Method(`GET`) && PathPrefix(`/w/x`)\"}\n  middlewares:\n    m: {rateLimit: {average: 2, redis: {}}}\n",
		"[http.routers.r]\n  rule = \"PathPrefix(`/api/`)\"\n  middlewares = [\"a@file\"]\n[http.middlewares.a.rateLimit]\n  average = 3\n  period = \"1m\"\n  [http.middlewares.a.rateLimit.sourceCriterion]\n    requestHeaderName = \"X-T\"\n",
		"http.middlewares.a.rateLimit = { average = 2, period = 60, burst = 4 }\n")
}

func FuzzHAProxy(f *testing.F) {
	fuzzImport(f, migrate.FormatHAProxy,
		"frontend fe\n  acl ok src 10.0.0.0/8\n  stick-table type ipv6 size 1k store http_req_rate(10s)\n  http-request track-sc0 src if { path_beg /api/ }\n  http-request deny deny_status 429 if !ok { sc_http_req_rate(0) gt 20 } { path_beg /api }\n",
		"peers p\n  table t type string len 8 store http_req_rate(1m),conn_cur\nfrontend f\n  http-request track-sc1 req.hdr(x-k),lower table p/t\n  http-request deny unless { sc1_http_req_rate(p/t) le 3 }\n  tcp-request content reject if { sc_conn_cur(1,p/t) gt 2 } METH_GET\n",
		"frontend f\n  stick-table type ip store http_req_rate(1s)\n  tcp-request connection track-sc0 src,ipmask(16)\n  use_backend b if { path /x/ } { hdr(host) -i a.example }\n  default_backend c\nbackend b\n  http-request deny if { src_http_req_rate(f) gt 1 } || TRUE\n  http-request deny if { sc_http_req_rate(0) gt 4 } !{ path /x/y } { hdr(X-A) b }\nbackend c\n",
		"frontend 'a b'\n  acl x path_beg \"/q r\" \\#\n  stick-table type binary store http_req_rate(1h)\n  http-request track-sc0 base32+src\n  http-request deny if { sc_http_req_rate(0) -m int gt 9 } x\n",
		"frontend f\n  acl a src 10.0.0.1\n  stick-table type ipv6 store http_req_rate(10s)\n  http-request track-sc0 src\n  http-request deny deny_status 429 unless { sc_http_req_rate(0) le 5 } a || a { path_beg /x/ } or !a\n  http-request deny if { sc_http_req_rate(0) gt 9 } { path_beg /a/ } || { path_beg /b/ } || { sc0_http_req_rate gt 3 } METH_POST\n")
}

func FuzzIngressNginx(f *testing.F) {
	fuzzImport(f, migrate.FormatIngressNginx, ingressFile,
		"kind: Ingress\nmetadata:\n  name: a\n  annotations: {nginx.ingress.kubernetes.io/limit-connections: \"2\", nginx.ingress.kubernetes.io/limit-rpm: \"7\", nginx.ingress.kubernetes.io/limit-burst-multiplier: \"0\"}\nspec:\n  rules: [{host: \"*.example.com\"}, {http: {paths: [{path: /x/, pathType: Exact}, {path: /y}]}}]\n",
		"kind: Ingress\nmetadata: {name: b, annotations: {nginx.ingress.kubernetes.io/limit-rps: \"1\", nginx.ingress.kubernetes.io/use-regex: \"true\"}}\n---\nkind: Ingress\nmetadata: {name: c, annotations: {nginx.ingress.kubernetes.io/limit-rps: \"3\", nginx.ingress.kubernetes.io/limit-whitelist: \"::1/128\"}}\nspec: {rules: [{host: h, http: {paths: [{path: /}]}}]}\n")
}

func FuzzAPIGateway(f *testing.F) {
	fuzzImport(f, migrate.FormatAPIGateway, usagePlans,
		`{"id": "p", "name": "p", "throttle": {"rateLimit": 0.001, "burstLimit": 0}, "quota": {"limit": 1, "period": "WEEK", "offset": 3}}`,
		`{"items": [{"name": "x", "apiStages": [{"stage": "s", "throttle": {"/*/*": {"rateLimit": 1e3, "burstLimit": 9}}}]}]}`,
		usagePlansTemplate)
}

func FuzzEnvoyGateway(f *testing.F) {
	fuzzImport(f, migrate.FormatEnvoyGateway, egPolicies,
		"kind: BackendTrafficPolicy\nmetadata: {name: p}\nspec:\n  targetRef: {kind: HTTPRoute, name: r}\n  rateLimit: {type: Local, local: {rules: [{limit: {requests: 3, unit: Minute}, clientSelectors: [{headers: [{name: a, type: RegularExpression, value: x.*}]}]}]}}\n",
		"kind: HTTPRoute\nmetadata: {name: r}\nspec: {rules: [{matches: [{path: {type: RegularExpression, value: /a.*}}, {method: GET}]}]}\n---\nkind: BackendTrafficPolicy\nmetadata: {name: p}\nspec:\n  targetRefs: [{kind: HTTPRoute, name: r}, {kind: HTTPRoute, name: s}]\n  rateLimit: {global: {rules: [{limit: {requests: 2, unit: Year}, cost: {request: {from: Number, number: 0}}, clientSelectors: [{sourceCIDR: {type: Exact, value: ::/0}}]}]}}\n")
}
