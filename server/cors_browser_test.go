package server_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestBrowserReadsTheLimitsAcrossOrigins has Chromium run a page of one
// origin that calls the API, through sluice, on another (with credentials,
// as a signed-in single-page app does): the script reads the RateLimit
// header of an admitted answer, and the status, Retry-After and problem
// body of sluice's refusal. Without response.cors the refusal is a network
// error to the script and the header is hidden.
func TestBrowserReadsTheLimitsAcrossOrigins(t *testing.T) {
	app := otherSite(t) // another port than the API's: another origin
	// The fixture's upstream under /cors/ is a CORS API that lets any
	// origin read it.
	cfg := `
plans:
  free:
    limits: [{name: per-minute, algorithm: fixed-window, quantity: 1, window: 1m}]
default_plan: free
anonymous_plan: free
response:
  cors: {origins: ["` + app + `"], credentials: true}
`
	f := newFixture(t, cfg)
	ctx := chromium.Tab(t)
	run(t, ctx, chromedp.Navigate(app))
	script := `(async () => {
		const out = [];
		for (let i = 0; i < 2; i++) {
			try {
				const r = await fetch("` + f.http.URL + `/cors/items", {credentials: "include"});
				const body = await r.text();
				out.push({status: r.status, rateLimit: r.headers.get("RateLimit"), retryAfter: r.headers.get("Retry-After"),
					type: r.status === 429 ? JSON.parse(body).type : ""});
			} catch (e) {
				out.push({error: String(e)});
			}
		}
		return JSON.stringify(out);
	})()`
	raw := awaitEval(t, ctx, script)
	var got []struct {
		Status      int
		RateLimit   string
		RetryAfter  string
		Type, Error string
	}
	if err := json.Unmarshal([]byte(raw), &got); err != nil || len(got) != 2 {
		t.Fatalf("%s: %v", raw, err)
	}
	if a := got[0]; a.Error != "" || a.Status != 200 || !strings.HasPrefix(a.RateLimit, `"per-minute";r=0;t=`) {
		t.Errorf("admitted call as the script saw it: %+v", a)
	}
	if r := got[1]; r.Error != "" || r.Status != 429 || r.RetryAfter == "" || r.Type != "https://iana.org/assignments/http-problem-types#quota-exceeded" {
		t.Errorf("refusal as the script saw it: %+v", r)
	}
}
