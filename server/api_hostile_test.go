package server_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/client"
	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/memory"
	"github.com/sluice-dev/sluice/server"
)

// fuzzServer is a server on a memory store (bounded, fake clock) without an
// upstream, for fuzz targets that call its handler directly.
func fuzzServer(f *testing.F) (http.Handler, *fakeClock) {
	clock := &fakeClock{}
	clock.us.Store(sluice.MicrosSinceEpoch(noon))
	cfg, err := config.Parse("fuzz.yaml", []byte(testConfig+testAdmin))
	if err != nil {
		f.Fatal(err)
	}
	store := memory.New(memory.WithClock(clock.Now), memory.WithSweepInterval(0), memory.WithMaxKeys(1<<14))
	f.Cleanup(func() { store.Close() })
	srv, err := server.New(server.Options{Config: cfg, Store: store, Clock: clock.Now,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		f.Fatal(err)
	}
	return srv.AdminHandler(), clock
}

// FuzzDecisionAPI posts arbitrary bodies to /v1/check: the answer is a
// decision (200, a JSON object whose numbers are in range) or a 4xx problem
// body that says what is wrong — never a 5xx, never a panic.
func FuzzDecisionAPI(f *testing.F) {
	h, clock := fuzzServer(f)
	for _, seed := range []string{
		`{"api_key":"demo-free-key","method":"POST","path":"/api/generate"}`,
		`{"user":"u1","cost":3}`, `{"ip":"2001:db8::1","plan":"pro"}`, `{"subject":"batch","cost":0}`,
		`{"user":"u","cost":-1}`, `{"user":"u","cost":1e400}`, `{"user":"u","path":"api"}`,
		`{"user":` + strings.Repeat("[", 100) + `}`, "{\"user\":\"\xff\"}", `{"ip":"fe80::1%eth0"}`, ``, `[]`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		clock.Advance(1000)
		r := httptest.NewRequest("POST", "/v1/check", strings.NewReader(string(body)))
		r.Header.Set(server.TokenHeader, testToken)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		switch code := w.Code; {
		case code == http.StatusOK:
			var resp client.CheckResponse
			if err := json.Unmarshal(w.Body.Bytes(), &resp); err != nil {
				t.Fatalf("200 with a body that is not a decision: %v\n%s", err, w.Body)
			}
			if resp.Remaining < 0 || resp.Cost < 0 || resp.RetryAfter < 0 || resp.Allowed && len(resp.Violated) > 0 {
				t.Fatalf("a decision out of range: %+v", resp)
			}
		case code == http.StatusBadRequest || code == http.StatusRequestEntityTooLarge:
			var p struct {
				Status int
				Detail string
			}
			if w.Header().Get("Content-Type") != "application/problem+json" || json.Unmarshal(w.Body.Bytes(), &p) != nil ||
				p.Status != code || p.Detail == "" {
				t.Fatalf("%d without a problem body that says why: %q %s", code, w.Header().Get("Content-Type"), w.Body)
			}
		default:
			t.Fatalf("status %d for %q: %s", code, body, w.Body)
		}
	})
}

// FuzzForwardAuth sends arbitrary forward-auth headers (as Traefik, Caddy
// and nginx send them, or as anyone could): the answer is 200, 429 or 400
// (a URI that is not one) — never another status, never a panic.
func FuzzForwardAuth(f *testing.F) {
	h, clock := fuzzServer(f)
	f.Add("POST", "/api/generate?x=1", "api.example.com", "198.51.100.7", "", "Bearer demo-free-key")
	f.Add("", "", "", "", "/api/search", "")
	f.Add("\xff", "::bad", "[", "unknown, 1.2.3.4", "//", "Bearer ")
	f.Add("GET", "http://evil.example/x", "a:99999", "2001:db8::1, 10.0.0.1", "*", "Basic x")
	f.Fuzz(func(t *testing.T, method, uri, host, xff, origURI, auth string) {
		clock.Advance(1000)
		r := httptest.NewRequest("GET", "/v1/forward-auth", nil)
		r.Header.Set(server.TokenHeader, testToken)
		for k, v := range map[string]string{"X-Forwarded-Method": method, "X-Forwarded-Uri": uri,
			"X-Forwarded-Host": host, "X-Forwarded-For": xff, "X-Original-Uri": origURI, "Authorization": auth} {
			if v != "" {
				r.Header[k] = []string{v}
			}
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		switch w.Code {
		case http.StatusOK, http.StatusTooManyRequests, http.StatusBadRequest:
		default:
			t.Fatalf("status %d: %s", w.Code, w.Body)
		}
	})
}

// FuzzSettle posts arbitrary bodies to /v1/settle on a server that signs
// its settlement ids: whatever the body — an altered genuine id among the
// seeds — the answer is a 4xx problem, never a settlement, and the
// reservation a genuine id holds stays counted. A body whose id decodes to
// the genuine id itself is not sent.
func FuzzSettle(f *testing.F) {
	dir := f.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "settle.secret"), []byte(strings.Repeat("5a", 32)), 0o600); err != nil {
		f.Fatal(err)
	}
	cfg, err := config.Parse(filepath.Join(dir, "fuzz.yaml"), []byte(settleConfig+testAdmin+"settle: {secret_file: settle.secret}\n"))
	if err != nil {
		f.Fatal(err)
	}
	clock := &fakeClock{}
	clock.us.Store(sluice.MicrosSinceEpoch(noon))
	store := memory.New(memory.WithClock(clock.Now), memory.WithSweepInterval(0))
	f.Cleanup(func() { store.Close() })
	srv, err := server.New(server.Options{Config: cfg, Store: store, Clock: clock.Now, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		f.Fatal(err)
	}
	h := srv.AdminHandler()
	post := func(path, body string) *httptest.ResponseRecorder {
		r := httptest.NewRequest("POST", path, strings.NewReader(body))
		r.Header.Set(server.TokenHeader, testToken)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}
	tokensLeft := func() float64 {
		var out struct {
			Limits []struct {
				Name      string
				Remaining float64
			}
		}
		json.Unmarshal(post("/v1/check", `{"subject":"batch-7","method":"POST","path":"/api/complete","cost":0}`).Body.Bytes(), &out)
		for _, l := range out.Limits {
			if l.Name == "tokens" {
				return l.Remaining
			}
		}
		return -1
	}
	var first struct{ Settle string }
	json.Unmarshal(post("/v1/check", `{"subject":"batch-7","method":"POST","path":"/api/complete"}`).Body.Bytes(), &first)
	enc, tag, ok := strings.Cut(first.Settle, ".")
	if !ok || tokensLeft() != 60 {
		f.Fatalf("no signed id (%q), or not 60 tokens left", first.Settle)
	}
	// other returns a base64url character other than c.
	other := func(c byte) string {
		if c == 'A' {
			return "B"
		}
		return "A"
	}
	for _, seed := range []string{
		`{"id":"` + enc + `x.` + tag + `","status":200,"headers":{"X-Usage-Tokens":"0"}}`,
		`{"id":"` + other(enc[0]) + enc[1:] + `.` + tag + `","status":200}`,
		`{"id":"` + enc + `.` + other(tag[0]) + tag[1:] + `","status":200}`,
		`{"id":"` + tag + `.` + enc + `","status":500}`,
		`{"id":"a.b"}`, `{"id":"."}`, `{"id":""}`, `{"status":200}`, `[]`, ``, `{"id":"x","status":99}`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, body string) {
		var named struct{ ID string }
		if json.Unmarshal([]byte(body), &named) == nil && named.ID == first.Settle {
			// The genuine id, spelled otherwise in JSON ("\u0041…"): it is
			// its holder's to settle, and settling it would spend this
			// worker's reservation for every input after it.
			t.Skip("the genuine id")
		}
		w := post("/v1/settle", body)
		switch w.Code {
		case http.StatusBadRequest, http.StatusNotFound, http.StatusConflict, http.StatusRequestEntityTooLarge:
		default:
			t.Fatalf("status %d for %q: %s", w.Code, body, w.Body)
		}
		if left := tokensLeft(); left != 60 {
			t.Fatalf("after %q, %v tokens left: a settlement nobody was given refunded", body, left)
		}
	})
}
