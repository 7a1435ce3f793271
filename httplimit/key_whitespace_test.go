package httplimit_test

import (
	"crypto/sha256"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/memory"
)

// A client holding the listed key K reaches the middleware over HTTP/2,
// where Go's server keeps the spaces and tabs around a field value (RFC
// 9113 §8.2.1 calls such a field malformed, but net/http passes it on),
// and the middleware passes the request on to the API over HTTP/1.1, where
// the value arrives without them (Go's Header.Write trims it, and any
// HTTP/1.1 parser drops OWS around a field value: RFC 9110 §5.5). The API
// serves K; the middleware counts K, not " K" (or "\tK", or " Bearer K")
// as no key at all, which would limit the client as its address on the
// anonymous plan, a fresh quota beside K's, for requests the API serves as
// K's.
func TestAKeyWithSpaceAroundItIsStillTheKey(t *testing.T) {
	const key = "k-0123456789abcdef"
	for _, c := range []struct{ name, header, value string }{
		{"X-API-Key with a space before", "X-Api-Key", " " + key},
		{"X-API-Key with a tab after", "X-Api-Key", key + "\t"},
		{"Authorization with a space before Bearer", "Authorization", " Bearer " + key},
	} {
		t.Run(c.name, func(t *testing.T) {
			// The API behind, over HTTP/1.1: it records the key it serves.
			var mu sync.Mutex
			var served []string
			api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				defer mu.Unlock()
				k := r.Header.Get("X-Api-Key")
				if k == "" {
					k = strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
				}
				served = append(served, k)
			}))
			defer api.Close()
			upstream, _ := url.Parse(api.URL)

			one := []sluice.Limit{sluice.FixedWindow(1, time.Minute)}
			store := memory.New(memory.WithSweepInterval(0))
			defer store.Close()
			mw, err := httplimit.New(sluice.NewLimiter(store), httplimit.Options{
				Plans:         []*httplimit.Plan{{Name: "keyed", Limits: one}, {Name: "anonymous", Limits: one}},
				DefaultPlan:   "keyed",
				AnonymousPlan: "anonymous",
				Keys:          []httplimit.Key{{Name: "acme", SHA256: sha256.Sum256([]byte(key))}},
				Logger:        slog.New(slog.NewTextHandler(io.Discard, nil)),
			})
			if err != nil {
				t.Fatal(err)
			}
			front := httptest.NewUnstartedServer(mw.Handler(httputil.NewSingleHostReverseProxy(upstream)))
			front.EnableHTTP2 = true
			front.StartTLS()
			defer front.Close()
			client := front.Client()

			send := func(header, value string) int {
				r, _ := http.NewRequest("GET", front.URL+"/api/search", nil)
				r.Header[header] = []string{value}
				resp, err := client.Do(r)
				if err != nil {
					t.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.ProtoMajor != 2 {
					t.Fatalf("the request went over %s, not HTTP/2", resp.Proto)
				}
				return resp.StatusCode
			}
			first := send("X-Api-Key", key)   // K spends its one request
			second := send(c.header, c.value) // K again, spelled with whitespace
			if first != 200 {
				t.Fatalf("the key's first request: %d", first)
			}
			mu.Lock()
			defer mu.Unlock()
			if second == 200 && slices.Equal(served, []string{key, key}) {
				t.Fatalf("%s: %q was admitted beside the key's spent quota, and the API served it as the key %q: "+
					"the middleware limited it as a client without a key (its address, a fresh quota), want 429", c.header, c.value, key)
			}
			if second != 429 {
				t.Fatalf("%s: %q: status %d, want 429 (the key's quota is spent); the API served %q", c.header, c.value, second, served)
			}
		})
	}
}

// Under UnknownKeys "key" (keys verified by an authentication layer, each a
// client of its own), one key spelled with spaces or tabs around it — which
// the authentication layer and the API read as the key itself once the
// request crosses HTTP/1.1 (RFC 9110 §5.5: no OWS is part of a field value)
// — is one client, not a fresh one for every spelling (as many quotas as
// a client with one valid key has spellings).
func TestSpacedCopiesOfAnUnknownKeyMintNoQuota(t *testing.T) {
	store := memory.New(memory.WithSweepInterval(0))
	defer store.Close()
	mw, err := httplimit.New(sluice.NewLimiter(store), httplimit.Options{
		Plans:       []*httplimit.Plan{{Name: "keyed", Limits: []sluice.Limit{sluice.FixedWindow(1, time.Minute)}}},
		DefaultPlan: "keyed",
		UnknownKeys: "key",
		Logger:      slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	h := mw.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	var got []int
	for _, v := range []string{"k-live-1", " k-live-1", "  k-live-1", "k-live-1 ", "\tk-live-1"} {
		r := httptest.NewRequest("GET", "/api/search", nil)
		r.Header["X-Api-Key"] = []string{v} // as Go's HTTP/2 server hands it on
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		got = append(got, w.Code)
	}
	if want := []int{200, 429, 429, 429, 429}; !slices.Equal(got, want) {
		t.Fatalf("statuses %v, want %v: each spelling of the one key k-live-1 was a client of its own", got, want)
	}
}
