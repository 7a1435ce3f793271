package client_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/client"
)

// A redirect that would change the decision API's POST into a GET (301,
// 302, 303: an SSO proxy sending an unauthenticated caller to its login
// page), or send it to another origin, is not followed: Check returns an
// *APIError of the redirect's status naming where it pointed, which wraps
// neither sluice.ErrStoreUnavailable nor sluice.ErrInvalidCheck, so that
// a misconfiguration does not fail open. Followed, the login page's 200
// was "not a decision", ErrStoreUnavailable, and a FailOpen Transport sent
// every request unlimited.
func TestADecisionAPIRedirectIsAnErrorThatDoesNotFailOpen(t *testing.T) {
	t.Parallel()
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Write([]byte(`{"allowed":true,"identity":"external","cost":1,"remaining":1}`))
	}))
	t.Cleanup(elsewhere.Close)
	for _, tc := range []struct {
		status int
		to     string // Location; a path is of the same origin
	}{
		{http.StatusMovedPermanently, "/login"},
		{http.StatusFound, "/login"},
		{http.StatusSeeOther, "/login"},
		{http.StatusTemporaryRedirect, elsewhere.URL + "/v1/check"},
		{http.StatusPermanentRedirect, elsewhere.URL + "/v1/check"},
	} {
		t.Run(http.StatusText(tc.status), func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/login" {
					w.Header().Set("Content-Type", "text/html")
					w.Write([]byte("<html><body>Sign in</body></html>"))
					return
				}
				http.Redirect(w, r, tc.to, tc.status)
			}))
			defer srv.Close()
			c := client.New(srv.URL)
			_, err := c.Check(context.Background(), client.CheckRequest{Subject: "s"})
			var apiErr *client.APIError
			if !errors.As(err, &apiErr) || apiErr.StatusCode != tc.status || !strings.Contains(err.Error(), tc.to) ||
				errors.Is(err, sluice.ErrStoreUnavailable) || errors.Is(err, sluice.ErrInvalidCheck) {
				t.Errorf("Check redirected %d to %s: %v; want an *APIError of status %d naming %s, wrapping neither ErrStoreUnavailable nor ErrInvalidCheck",
					tc.status, tc.to, err, tc.status, tc.to)
			}
			if err := c.Settle(context.Background(), "id", 200, nil); !errors.As(err, &apiErr) || apiErr.StatusCode != tc.status {
				t.Errorf("Settle redirected %d to %s: %v; want an *APIError of status %d", tc.status, tc.to, err, tc.status)
			}

			var sent atomic.Int64
			upstream := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { sent.Add(1) }))
			defer upstream.Close()
			hc := &http.Client{Transport: &client.Transport{Gate: c.Gate(client.CheckRequest{Subject: "s"}), FailOpen: true}}
			if resp, err := hc.Get(upstream.URL); err == nil {
				resp.Body.Close()
			}
			if sent.Load() != 0 {
				t.Errorf("a FailOpen Transport whose decision API redirects (%d) sent the request", tc.status)
			}
		})
	}
}

// A redirect that keeps the method and its body to the same origin (307,
// 308: a path moved on the same server) is followed, the body and the
// token sent again.
func TestADecisionAPIRedirectKeepingThePOSTIsFollowed(t *testing.T) {
	t.Parallel()
	for _, status := range []int{http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/moved/v1/check" {
				http.Redirect(w, r, "/moved/v1/check", status)
				return
			}
			body, _ := io.ReadAll(r.Body)
			if r.Method != http.MethodPost || !strings.Contains(string(body), `"subject":"s"`) || r.Header.Get("Authorization") != "Bearer t" {
				http.Error(w, "lost on the way", http.StatusBadRequest)
				return
			}
			w.Write([]byte(`{"allowed":true,"identity":"external","cost":1,"remaining":1}`))
		}))
		d, err := client.New(srv.URL, client.WithToken("t")).Check(context.Background(), client.CheckRequest{Subject: "s"})
		if err != nil || !d.Allowed {
			t.Errorf("Check redirected %d to the same origin: %+v, %v; want the decision", status, d, err)
		}
		srv.Close()
	}
}
