package server_test

import (
	"os"
	"strings"
	"testing"
)

// /docs tells the live configuration: after a hot reload, a plan added,
// a cost, a rule and another header mode are on it, and a plan removed is
// gone from it.
func TestDocsFollowAReload(t *testing.T) {
	f := newFixture(t, testConfig)
	before := readAll(t, f.do(t, "GET", "/docs?plan=free", "", nil))
	if strings.Contains(before, "?plan=team") || !strings.Contains(before, "?plan=pro") {
		t.Fatalf("before the reload, the plans are not free and pro")
	}
	cfg := strings.NewReplacer(
		"  pro:\n    limits:\n      - {name: per-minute, algorithm: fixed-window, quantity: 100, window: 1m}\n",
		"  team:\n    limits:\n      - {name: per-hour, algorithm: gcra, quantity: 7000, window: 1h, burst: 70}\n",
		`upgrade: {plan: pro, url: "https://example.com/pricing"}`, `upgrade: {plan: team, url: "https://example.com/pricing"}`,
		`costs: {"POST /api/generate": 2}`, `costs: {"POST /api/generate": 2, "POST /api/render": 3}`,
		"response:\n", "rules:\n  - name: uploads\n    match: {methods: [POST], paths: [/api/uploads]}\n    limits: [{name: per-minute, algorithm: fixed-window, quantity: 4, window: 1m}]\nresponse:\n  headers: [legacy]\n",
	).Replace(testConfig)
	head, _, _ := strings.Cut(readFile(t, f.file), "\n")
	if err := os.WriteFile(f.file, []byte(head+"\n"+cfg+testAdmin), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := f.srv.Reload(); err != nil {
		t.Fatal(err)
	}
	after := readAll(t, f.do(t, "GET", "/docs?plan=free", "", nil))
	for _, want := range []string{
		`href="?plan=team"`,
		"<td><code>POST /api/render</code></td><td>3</td>",
		"<code>uploads.per-minute</code>",
		"<code>X-RateLimit-Limit</code>",
		"X-Ratelimit-Remaining: 2",
	} {
		if !strings.Contains(after, want) {
			t.Errorf("after the reload, /docs lacks %s", want)
		}
	}
	if strings.Contains(after, "?plan=pro") || strings.Contains(after, "RateLimit-Policy</code></dt>") {
		t.Error("after the reload, /docs still tells the pro plan or the IETF headers")
	}
	team := readAll(t, f.do(t, "GET", "/docs?plan=team", "", nil))
	if !strings.Contains(team, "<code>per-hour</code></td><td>7000 requests per 1h</td>") {
		t.Errorf("the team plan's page does not tell its limit:\n%s", team)
	}
}

func readFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
