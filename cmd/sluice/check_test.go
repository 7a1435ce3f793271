package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func TestCheckPrintsPlansOfAValidFile(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"check", "../../examples/sluice.yaml"}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	for _, want := range []string{"free (default)", "per-day", "fixed-window", "sliding-window-log", "shadow", "is valid: 4 plans",
		"public    127.0.0.1:8080", "admin     127.0.0.1:9090", "(any loopback peer)  address  read,check,override_plan,admin"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

func TestCheckNamesFileLineAndField(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	os.WriteFile(bad, []byte("plans:\n  free:\n    limits:\n      - {name: x, algorithm: gcra, quantity: 10, window: 1 fortnight}\n"), 0o644)
	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"check", bad}, &out, &errOut); code != 1 {
		t.Fatalf("exit %d, want 1", code)
	}
	want := bad + `:4:58: plans.free.limits[0].window: "1 fortnight" is not a duration`
	if !strings.Contains(errOut.String(), want) {
		t.Errorf("stderr:\n%s\nwant it to contain:\n%s", errOut.String(), want)
	}
	if strings.Count(errOut.String(), "\n") != 2 {
		t.Errorf("want exactly the one problem and the verdict:\n%s", errOut.String())
	}
}

func TestCheckPrintsTheRulesTable(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"check", "../../examples/rules.yaml"}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	// Columns are padded to the longest cell: compare with runs of spaces
	// as one.
	flat := regexp.MustCompile(` +`).ReplaceAllString(out.String(), " ")
	for _, want := range []string{
		"RULE MATCH",
		"uploads POST,PUT /v1/tenants/{tenant}/uploads /v1/tenants/{tenant}/uploads/{name...}",
		"path:tenant",
		"uploads.per-minute fixed-window",
		"search /v1/search",
		"header:X-Tenant (from trusted proxies)",
		"reports POST /v1/reports on api.example.com,*.api.example.com with Content-Type=application/json",
		"reports.per-minute sliding-window-log 30",
		"exports POST /v1/exports for free",
		"completions POST /v1/completions client completions.tokens sliding-window-counter 100000 1m 100000 4096",
		"is valid: 2 plans, 1 global limit, 0 API keys, store memory.",
	} {
		if !strings.Contains(flat, want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

// check says how clients reach sluice and sluice reaches Redis, and never
// prints a password.
func TestCheckPrintsTransportsAndTheStore(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "pw"), []byte("hunter2-from-a-file\n"), 0o600)
	os.WriteFile(filepath.Join(dir, "pw32"), []byte("a-secret-of-32-bytes-or-more-here\n"), 0o600)
	plans := "plans:\n  free: {limits: [{name: m, algorithm: gcra, quantity: 10, window: 1m}, {name: w, algorithm: fixed-window, quantity: 10, window: month}]}\n"
	for _, tc := range []struct{ store, want, secret string }{
		{"store: {type: memory, max_keys: 5000}\n", "STORE  memory, max_keys 5000: a state each, a sliding log or concurrency limit 1 more per 8 entries of room\n", ""},
		// A log whose client may be refused for want of room before its limit.
		{"store: {type: memory, max_keys: 5000}\nrules: [{name: logins, match: {paths: [/login]}, limits: [{name: h, algorithm: sliding-window-log, quantity: 40, window: 1h}]}]\n",
			"STORE  memory, max_keys 5000: a state each, a sliding log or concurrency limit 1 more per 8 entries of room; WARNING: store.max_keys (5000) is less than 128 times the quantity of the longest sliding log or concurrency limit, h of rule logins (40):", ""},
		{"proxy_protocol: [10.0.0.0/8, 192.0.2.7]\n", "plain, PROXY header from 10.0.0.0/8 192.0.2.7/32", ""},
		{"", "UPSTREAM  none: the demo upstream answers\n", ""},
		{"", "IDENTITY  API key in Authorization, X-Api-Key (unlisted: by address) > address (IPv4 /32, IPv6 /64)\n", ""},
		{"identity: {unknown_keys: key}\n", "IDENTITY  API key in Authorization, X-Api-Key (unlisted: a client of its own) > address (IPv4 /32, IPv6 /64)" +
			"; WARNING: identity.unknown_keys is key: a made-up API key is a client of its own, so a client that sends a new key with each request gets fresh quota each time; keep it only behind an authentication layer that refuses the keys it does not know, or remove it to limit an unlisted key by its client's address (ip, the default)\n", ""},
		{"identity:\n  user_header: X-User\n  ipv6_prefix: 56\n  jwt: {secret_file: pw32, issuer: https://id.example/, audiences: [api, web], plan_claim: tier}\nkeys: [{sha256: 9f8cfdb17116bf0e2a44e071454f25594cb9b8737bf331e6a2f0b30550572f29, plan: free}]\n",
			"IDENTITY  API key in Authorization, X-Api-Key (unlisted: by address) > JWT (HMAC secret from " + filepath.Join(dir, "pw32") +
				", iss https://id.example/, aud api or web, client from claim sub, plan from claim tier; not verified: by address) > address (IPv4 /32, IPv6 /56); X-User: never believed (no trusted_proxies)\n", "a-secret-of-32-bytes-or-more-here"},
		{"", "RESPONSE  headers ietf; refusals RFC 9457 problem (429); Retry-After exact\n", ""},
		{"", "LOG  refused requests, at most 10 lines a second, then one line counting the rest\n", ""},
		{"log: {refusals_per_second: 0}\n", "LOG  refused requests: none (log.refusals_per_second 0)\n", ""},
		{"response: {headers: [ietf, legacy], body: error-code, global_status: 503, deny_status: 403, hide: [m], retry_jitter: 30s}\n",
			"RESPONSE  headers ietf, legacy; refusals error-code JSON (429, 503 by global limits alone, 403 on forward-auth); hidden m; Retry-After spread up to 30s later (a tenth of a limit's window at most)\n", ""},
		{"response: {cors: {origins: [\"https://app.example\", \"https://*.example.net\"], credentials: true}}\n",
			"RESPONSE  headers ietf; refusals RFC 9457 problem (429); Retry-After exact; readable by pages of https://app.example, https://*.example.net (with credentials)\n", ""},
		{"exempt: {routes: [\"GET /healthz\"], addresses: [10.1.0.0/16], plans: [free]}\n", "EXEMPT  routes GET /healthz; addresses 10.1.0.0/16; plans free\n", ""},
		{"notify: {url: \"https://hooks.example/q\", secret_file: pw, at: [80, 100], limits: [w]}\n", "NOTIFY  https://hooks.example/q at 80%, 100% of w, once per window; signed with the secret of " + filepath.Join(dir, "pw") + "\n", "hunter2-from-a-file"},
		{"settle: {secret_file: pw32}\n", "SETTLE  ids signed with the secret of " + filepath.Join(dir, "pw32") + ": any instance with the same secret and limits settles them, once\n", "a-secret-of-32-bytes-or-more-here"},
		{"upstream: h2c://grpc-api:9000\n", "UPSTREAM  h2c://grpc-api:9000; HTTP/2 without TLS (h2c); its own Host;", ""},
		{"upstream: https://api.internal\n", "UPSTREAM  https://api.internal; TLS, server verified by the system's roots; its own Host; answers start within 2m0s (else 504), streams end after 5m0s of silence\n", ""},
		{"upstream: https://api.internal\nupstream_tls: {server_name: api.example}\npreserve_host: true\nconnections: {write_timeout: 30s, stream_idle_timeout: 1h}\n",
			"UPSTREAM  https://api.internal; TLS, server verified by the system's roots as api.example; the client's Host; answers start within 30s (else 504), streams end after 1h0m0s of silence\n", ""},
		{"store:\n  type: redis\n  redis: {addresses: [\"r1:6380\", \"r2:6380\"], mode: cluster, username: sluice, password_file: pw, tls: {server_name: redis.internal}}\n",
			"STORE  redis cluster r1:6380, r2:6380; TLS, server verified by the system's roots as redis.internal; user sluice, password from " +
				filepath.Join(dir, "pw") + " (read for each new connection); on store error: local\n", "hunter2-from-a-file"},
		{"store:\n  type: redis\n  redis: {addresses: [\"r:6379\"], lease: auto}\n",
			"STORE  redis standalone r:6379; plain TCP; no password; on store error: local; leased quota (lease: auto)\n", ""},
		// A penalty box's guard is never leased: it goes to Redis once a second per client.
		{"store:\n  type: redis\n  redis: {addresses: [\"r:6379\"], lease: auto}\npenalty: {refusals: 3, within: 1m, for: 10m}\n",
			"STORE  redis standalone r:6379; plain TCP; no password; on store error: local; leased quota (lease: auto), the penalty box asked on Redis once a second per client (a box set elsewhere holds within a second)\n", ""},
		{"store:\n  type: redis\n  redis: {addresses: [\"r:6379\"], password: hunter2-inline, on_store_error: deny}\n",
			"STORE  redis standalone r:6379; plain TCP; password in the configuration; on store error: deny\n", "hunter2-inline"},
		{"store:\n  type: redis\n  redis: {addresses: [\"s:26379\"], mode: sentinel, master_name: m, password_file: pw, sentinel_username: watcher, sentinel_password: hunter2-sentinel}\n",
			"STORE  redis sentinel s:26379 (master set m); plain TCP; password from " + filepath.Join(dir, "pw") +
				" (read for each new connection); Sentinels: user watcher, password in the configuration; on store error: local\n", "hunter2-sentinel"},
	} {
		file := filepath.Join(dir, "sluice.yaml")
		os.WriteFile(file, []byte(tc.store+plans), 0o600)
		var out, errOut bytes.Buffer
		if code := run(context.Background(), []string{"check", file}, &out, &errOut); code != 0 {
			t.Fatalf("exit %d: %s", code, errOut.String())
		}
		if !strings.Contains(out.String(), tc.want) {
			t.Errorf("output lacks %q:\n%s", tc.want, out.String())
		}
		if tc.secret != "" && strings.Contains(out.String(), tc.secret) {
			t.Errorf("output holds the password %q:\n%s", tc.secret, out.String())
		}
	}
}

// The IDENTITY line says what serve believes: the user and plan headers
// from the trusted proxies it names, and from no one when none is trusted
// (serve then never reads them, so check must not say it does).
func TestCheckSaysFromWhomIdentityHeadersAreBelieved(t *testing.T) {
	const plans = "plans:\n  free:\n    limits: [{name: per-minute, algorithm: fixed-window, quantity: 2, window: 1m}]\n" +
		"  pro:\n    limits: [{name: per-minute, algorithm: fixed-window, quantity: 20, window: 1m}]\n"
	for _, tc := range []struct {
		name, identity string
		want, never    []string
	}{
		{"trusted proxies", "identity: {user_header: X-User-Id, plan_header: X-Plan, trusted_proxies: [10.0.0.0/8, unix:]}\n",
			[]string{"user in X-User-Id from trusted proxies 10.0.0.0/8, unix:", "plan in X-Plan from trusted proxies 10.0.0.0/8, unix:"}, nil},
		{"a token not verified falls to the user header", "identity: {user_header: X-User-Id, trusted_proxies: [10.0.0.0/8], jwt: {secret_file: jwt-secret}}\n",
			[]string{"(unlisted: as without a key)", "not verified: as without a token) > user in X-User-Id from trusted proxies 10.0.0.0/8 > address"}, []string{"by address"}},
		{"no trusted proxy", "identity: {user_header: X-User-Id, plan_header: X-Plan}\n",
			[]string{"X-User-Id, X-Plan: never believed (no trusted_proxies)"}, []string{"user in X-User-Id from", "plan in X-Plan from"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			file := filepath.Join(dir, "sluice.yaml")
			os.WriteFile(file, []byte(tc.identity+plans), 0o644)
			os.WriteFile(filepath.Join(dir, "jwt-secret"), []byte("a-secret-of-32-bytes-or-more-here\n"), 0o600)
			var out, errOut bytes.Buffer
			if code := run(context.Background(), []string{"check", file}, &out, &errOut); code != 0 {
				t.Fatalf("exit %d: %s", code, errOut.String())
			}
			line := regexp.MustCompile(`(?m)^IDENTITY .*$`).FindString(out.String())
			for _, w := range tc.want {
				if !strings.Contains(line, w) {
					t.Errorf("IDENTITY line lacks %q:\n%s", w, line)
				}
			}
			for _, w := range tc.never {
				if strings.Contains(line, w) {
					t.Errorf("IDENTITY line says %q:\n%s", w, line)
				}
			}
		})
	}
}

// The plans table marks the default plan and the anonymous one, also when
// they are the same plan (anonymous_plan left out is default_plan).
func TestCheckMarksAPlanThatIsDefaultAndAnonymous(t *testing.T) {
	file := filepath.Join(t.TempDir(), "sluice.yaml")
	os.WriteFile(file, []byte("plans:\n  free:\n    limits: [{name: per-minute, algorithm: fixed-window, quantity: 2, window: 1m}]\n"+
		"  pro:\n    limits: [{name: per-minute, algorithm: fixed-window, quantity: 20, window: 1m}]\n"), 0o644)
	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"check", file}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	if !regexp.MustCompile(`(?m)^free \(default, anonymous\) +per-minute`).MatchString(out.String()) ||
		!regexp.MustCompile(`(?m)^pro +per-minute`).MatchString(out.String()) {
		t.Errorf("want free marked default and anonymous, pro unmarked:\n%s", out.String())
	}
}

// A penalty box refuses every request of a client it holds, whatever its
// quota: check says that serve will keep one, and on what terms.
func TestCheckPrintsThePenaltyBox(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"check", "../../examples/rules.yaml"}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	if want := "PENALTY  after 20 refusals within 1m, every request of the client is refused for 10m\n"; !strings.Contains(out.String(), want) {
		t.Errorf("output lacks %q:\n%s", want, out.String())
	}
	out.Reset()
	if code := run(context.Background(), []string{"check", "../../examples/sluice.yaml"}, &out, &errOut); code != 0 || strings.Contains(out.String(), "PENALTY") {
		t.Errorf("without a penalty section: exit %d, output:\n%s", code, out.String())
	}
}

// Under load serve sheds work in levels, lowering every limit check has
// printed: check says what each level does.
func TestCheckPrintsWhatDegradationDoes(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"check", "../../examples/sluice.yaml"}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	want := "DEGRADATION  level 1: every quantity and burst of a window up to 1h × 0.5 (no burst below its plan's costliest request; longer quotas whole), 503 to POST /api/generate; " +
		"level 2: writes refused but POST /api/pay; " +
		"level 3: only GET /healthz, GET /api/health served; 503s with Retry-After 5s\n"
	if !strings.Contains(out.String(), want) {
		t.Errorf("output lacks %q:\n%s", want, out.String())
	}
	// Copies of the upstream's answers are kept in proxy mode only.
	file := filepath.Join(t.TempDir(), "sluice.yaml")
	os.WriteFile(file, []byte("upstream: http://127.0.0.1:8000\n"+
		"degradation: {stale_for: 10s, levels: {elevated: {enter: {in_flight: 10}, leave: {in_flight: 5}}}}\n"+
		"plans:\n  free:\n    limits: [{name: per-minute, algorithm: fixed-window, quantity: 2, window: 1m}]\n"), 0o644)
	out.Reset()
	if code := run(context.Background(), []string{"check", file}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	want = "DEGRADATION  level 1: every quantity and burst of a window up to 1h × 0.5 (no burst below its plan's costliest request; longer quotas whole); level 2: writes refused, GET answers served from copies up to 10s old; " +
		"level 3: every request refused; 503s with Retry-After 5s\n"
	if !strings.Contains(out.String(), want) {
		t.Errorf("output lacks %q:\n%s", want, out.String())
	}
	out.Reset()
	if code := run(context.Background(), []string{"check", "../../examples/rules.yaml"}, &out, &errOut); code != 0 || strings.Contains(out.String(), "DEGRADATION") {
		t.Errorf("without a degradation section: exit %d, output:\n%s", code, out.String())
	}
}

// The URLs of a JWK Set and of the notification hook may carry
// a password: check names them without it.
func TestCheckNeverPrintsThePasswordOfAURL(t *testing.T) {
	file := filepath.Join(t.TempDir(), "jwt.yaml")
	cfg := "plans:\n  default:\n    limits:\n      - {name: per-month, algorithm: fixed-window, quantity: 1000, window: month}\ndefault_plan: default\n" +
		"identity:\n  jwt:\n    jwks_url: https://ops:s3cret-pw@auth.example.com/jwks.json\n" +
		"notify:\n  url: https://ops:s3cret-pw@billing.example.com/hooks\n  limits: [per-month]\n"
	if err := os.WriteFile(file, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"check", file}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	if said := out.String() + errOut.String(); strings.Contains(said, "s3cret-pw") || !strings.Contains(said, "auth.example.com/jwks.json") ||
		!strings.Contains(said, "billing.example.com/hooks") {
		t.Errorf("printed the password (or not the URL):\n%s", said)
	}
}
