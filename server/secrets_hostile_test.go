package server_test

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/failover"
	"github.com/sluice-dev/sluice/internal/realtest"
	"github.com/sluice-dev/sluice/internal/redistest"
	"github.com/sluice-dev/sluice/server"
)

// secretMark is in every raw API key of the test, and nowhere else.
const secretMark = "RAWKEY"

// Requests with distinctive raw API keys — a configured one, unknown ones,
// refused ones, in every header and in the decision API, while Redis is
// killed and restarted — run through the server on a Redis store with
// debug logging. Then every log line, the metrics, the dashboard's data,
// the client docs, every answer the clients got, and the name and value of
// every key in Redis are searched for the raw keys: none is found (their
// SHA-256 may be).
func TestRawAPIKeysAppearNowhere(t *testing.T) {
	rs := redistest.Standalone(t)
	known := "sk_live_" + secretMark + "_known_7f3a9c"
	sum := sha256.Sum256([]byte(known))
	dir := t.TempDir()
	up := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) })}
	upLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go up.Serve(upLn)
	defer up.Close()
	file := filepath.Join(dir, "sluice.yaml")
	os.WriteFile(file, []byte(`upstream: http://`+upLn.Addr().String()+`
store:
  type: redis
  redis: {addresses: ["`+rs.Addr+`"], timeout: 1s, on_store_error: local, instances: 2}
identity:
  unknown_keys: key
  trusted_proxies: [127.0.0.1/32]
plans:
  free:
    limits:
      - {name: per-minute, algorithm: sliding-window-counter, quantity: 3, window: 1m}
      - {name: per-day, algorithm: fixed-window, quantity: 100, window: 24h}
  pro:
    limits:
      - {name: per-minute, id: pro-per-minute, algorithm: gcra, quantity: 5, window: 1m}
default_plan: free
anonymous_plan: free
keys:
  - {name: acme, sha256: `+hex.EncodeToString(sum[:])+`, plan: pro}
global:
  - {name: global, algorithm: token-bucket, quantity: 1000, window: 1s}
`), 0o644)
	cfg, err := config.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	logs := &realtest.Buffer{}
	log := slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	opened, err := server.OpenStore(cfg, log)
	if err != nil {
		t.Fatal(err)
	}
	defer opened.Close()
	srv, err := server.New(server.Options{Config: cfg, Store: opened.Store, Ready: opened.Ready, Logger: log,
		StoreDown: opened.StoreDown, Failover: opened.Failover, OverLimit: opened.Cache,
		Load: func() (*config.Config, error) { return config.Load(file) }})
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + serveOn(t, srv).public

	var answers strings.Builder // everything the clients were told
	send := func(method, path, body string, headers map[string]string) int {
		req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
		for k, v := range headers {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		resp.Header.Write(&answers)
		answers.Write(b)
		return resp.StatusCode
	}
	unknown := func(i int) string { return "sk_test_" + secretMark + "_unknown_" + strconv.Itoa(i) }
	traffic := func(round int) {
		for i := range 8 { // refusals come from the fourth on: debug log lines
			send("GET", "/api/search", "", map[string]string{"Authorization": "Bearer " + known})
			send("GET", "/api/search", "", map[string]string{"X-API-Key": unknown(round*100 + i%3)})
			send("GET", "/v1/forward-auth", "", map[string]string{"Authorization": "Bearer " + unknown(round*100+50),
				"X-Forwarded-Uri": "/api/items?key=x", "X-Forwarded-For": "198.51.100.4"})
			send("POST", "/v1/check", `{"api_key":"`+unknown(round*100+60)+`","path":"/api/search"}`, nil)
			send("POST", "/v1/check", `{"api_key":"`+known+`","plan":"no-such-plan"}`, nil)
			send("POST", "/v1/check", `{"api_key":"`+unknown(round*100+70)+`","cost":-5}`, nil)
		}
		send("GET", "/api/search", "", map[string]string{"Authorization": "Bearer " + strings.Repeat(secretMark, 400)})
		send("GET", "/api/search", "", map[string]string{"Authorization": "Basic " + known})
	}
	traffic(0)
	rs.Kill() // errors, the breaker, fallback decisions: more log lines
	traffic(1)
	time.Sleep(600 * time.Millisecond)
	rs.Restart()
	// Back on Redis: the breaker closed and its return period (local
	// decisions charged at once) over, so that traffic(2) writes to Redis.
	// The store's timeout is far above a loaded machine's answers (a call
	// that misses it begins the return period again); a killed Redis
	// refuses connections at once.
	back := func() bool {
		st := opened.Failover.Stats()
		return st.Breaker == failover.BreakerClosed && st.Returning == 0
	}
	for deadline := time.Now().Add(20 * time.Second); !back(); {
		if time.Now().After(deadline) {
			t.Fatalf("Redis is back but after 20 s the breaker is not closed or its return period not over: %+v", opened.Failover.Stats())
		}
		send("GET", "/api/health", "", nil)
		time.Sleep(20 * time.Millisecond)
	}
	traffic(2)
	if err := srv.Reload(); err != nil {
		t.Fatal(err)
	}
	traffic(3)

	if st := opened.Failover.Stats(); st.FallbackDecisions == 0 || st.BreakerOpens == 0 {
		t.Errorf("Redis never failed during the test: %+v", st)
	}
	keys, err := rs.Keys("*")
	if err != nil || len(keys) == 0 {
		t.Fatalf("Redis keys: %v %v", keys, err)
	}
	var store strings.Builder
	for _, k := range keys {
		v, err := rs.Do("DUMP", k) // nil: expired since the SCAN
		if err != nil {
			t.Fatal(err)
		}
		dump, _ := v.(string)
		store.WriteString(k + "\n" + strings.ToValidUTF8(dump, "?") + "\n")
	}
	haystacks := map[string]string{
		"logs":            logs.String(),
		"/metrics":        getBody(t, base+"/metrics"),
		"/dashboard/data": getBody(t, base+"/dashboard/data"),
		"/docs":           getBody(t, base+"/docs"),
		"/v1/degradation": getBody(t, base+"/v1/degradation"),
		"Redis":           store.String(),
		"answers":         answers.String(),
	}
	for where, text := range haystacks {
		if i := strings.Index(text, secretMark); i >= 0 {
			t.Errorf("%s holds a raw API key: …%s…", where, text[max(0, i-200):min(len(text), i+200)])
		}
	}
	t.Logf("searched %d log bytes (%d lines), %d Redis keys, %d bytes of metrics, %d bytes of answers",
		len(haystacks["logs"]), strings.Count(haystacks["logs"], "\n"), len(keys), len(haystacks["/metrics"]), len(haystacks["answers"]))
	if !strings.Contains(haystacks["logs"], "request refused") || !strings.Contains(haystacks["logs"], "circuit open") {
		t.Errorf("the logs lack the lines the test means to search:\n%.3000s", haystacks["logs"])
	}
	if !strings.Contains(store.String(), hex.EncodeToString(sum[:])) {
		t.Errorf("the known key's hash is not in Redis: %v", keys)
	}
}

func getBody(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}
