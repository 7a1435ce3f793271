package server_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/server"
)

// settleConfig reserves 40 tokens a completion, counted as the answer
// reports them, and counts a client's 404s.
const settleConfig = `
plans:
  free:
    limits:
      - {name: tokens, algorithm: fixed-window, quantity: 100, window: 1m, count: "header:X-Usage-Tokens"}
      - {name: misses, algorithm: sliding-window-log, quantity: 500, window: 1m, count: "status:404"}
      - {name: rate, algorithm: gcra, quantity: 1000, window: 1s}
    costs: {"POST /api/complete": 40}
`

// TestDecisionAPISettlesByTheAnswer: on memory and Redis, a /v1/check
// that charged limits counting by the answer gives an id; POST /v1/settle
// with the answer's status and headers refunds what the answer does not
// count, once; an id settled or never given is 404 and changes nothing;
// a stranger gets 401 and a malformed body 400.
func TestDecisionAPISettlesByTheAnswer(t *testing.T) {
	eachStore(t, func(t *testing.T, kind string) {
		f := newFixture(t, settleConfig, kind)
		check := func(body string) map[string]any {
			var out map[string]any
			if err := json.NewDecoder(f.do(t, "POST", "/v1/check", body, nil).Body).Decode(&out); err != nil {
				t.Fatal(err)
			}
			return out
		}
		remaining := func() map[string]float64 {
			out := map[string]float64{}
			for _, l := range check(`{"subject":"batch-7","method":"POST","path":"/api/complete","cost":0}`)["limits"].([]any) {
				m := l.(map[string]any)
				out[m["name"].(string)] = m["remaining"].(float64)
			}
			return out
		}
		first := check(`{"subject":"batch-7","method":"POST","path":"/api/complete"}`)
		id, _ := first["settle"].(string)
		if first["allowed"] != true || len(id) < 20 {
			t.Fatalf("/v1/check: %v; want admitted with a settle id", first)
		}
		settle := func(body string, header map[string]string) (int, string) {
			r := f.do(t, "POST", "/v1/settle", body, header)
			return r.StatusCode, readAll(t, r)
		}
		if code, body := settle(`{"id":"`+id+`","status":200,"headers":{"X-Usage-Tokens":"10"}}`, map[string]string{server.TokenHeader: ""}); code != 401 {
			t.Errorf("a stranger's settle: %d %s, want 401", code, body)
		}
		if code, body := settle(`{"id":"`+id+`","status":200,"headers":{"X-Usage-Tokens":"10"}}`, nil); code != 200 || !strings.Contains(body, `"settled":true`) {
			t.Fatalf("settle: %d %s", code, body)
		}
		if got := remaining(); got["tokens"] != 90 || got["misses"] != 500 || got["rate"] != 960 {
			t.Errorf("after a completion that used 10 tokens, answered 200: %v; want tokens 90, misses 500, rate 960", got)
		}
		for _, body := range []string{`{"id":"` + id + `","status":200,"headers":{"X-Usage-Tokens":"0"}}`, `{"id":"made-up","status":200}`} {
			if code, out := settle(body, nil); code != 404 || !strings.Contains(out, "stays counted in full") {
				t.Errorf("%s: %d %s, want 404", body, code, out)
			}
		}
		if got := remaining(); got["tokens"] != 90 {
			t.Errorf("after settling twice and a made-up id: tokens %v, want 90", got["tokens"])
		}
		for _, body := range []string{`{"id":`, `{"status":200}`, `{"id":"x","status":700}`, `{"id":"x","extra":1}`, `[1]`, `{"id":"x"} {}`} {
			if code, out := settle(body, nil); code != 400 {
				t.Errorf("%s: %d %s, want 400", body, code, out)
			}
		}
		if code, _ := settle(`{"id":"`+strings.Repeat("x", 70<<10)+`"}`, nil); code != 413 {
			t.Errorf("a 70 KiB body: %d, want 413", code)
		}
		// A 404 answer counts in misses: the completion that got one keeps
		// it there, and its tokens reported nothing: all 40 stay counted.
		second := check(`{"subject":"batch-7","method":"POST","path":"/api/complete"}`)
		if code, _ := settle(`{"id":"`+second["settle"].(string)+`","status":404}`, nil); code != 200 {
			t.Fatalf("settle a 404: %d", code)
		}
		if got := remaining(); got["tokens"] != 50 || got["misses"] != 460 {
			t.Errorf("after a 404 answer that reported no usage: %v; want tokens 50, misses 460", got)
		}
		m := scrape(t, f.admin.URL)
		if m[`sluice_settlements_total{result="settled"}`] != 2 || m[`sluice_settlements_total{result="unknown"}`] != 2 {
			t.Errorf("settlements: settled %v, unknown %v; want 2 and 2", m[`sluice_settlements_total{result="settled"}`], m[`sluice_settlements_total{result="unknown"}`])
		}
		if out := check(`{"subject":"other","method":"GET","path":"/api/items","cost":0}`); out["settle"] != nil {
			t.Errorf("a request that charged nothing got a settle id: %v", out)
		}
		f.noStoreErrors(t)
	})
}
