package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// The admin listener never redirects: an -admin that answers a redirect
// (an http-to-https redirector, another service) is not it, and keys says
// so, naming where it points, without sending the caller token or the
// reset there.
func TestKeysFollowsNoRedirect(t *testing.T) {
	var reached atomic.Int64
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached.Add(1)
		w.Write([]byte(`{"subject":"name:acme","limits":["per-minute"],"forgot":1}`))
	}))
	defer elsewhere.Close()
	redirector := httptest.NewServer(http.RedirectHandler(elsewhere.URL+"/v1/keys/name:acme", http.StatusTemporaryRedirect))
	defer redirector.Close()
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"keys", "-admin", redirector.URL, "-token", "t", "reset", "name:acme"}, &out, &errOut)
	if n := reached.Load(); n > 0 {
		t.Errorf("the redirect's target got %d requests", n)
	}
	if code != 1 || !strings.Contains(errOut.String(), "307") || !strings.Contains(errOut.String(), elsewhere.URL) || !strings.Contains(errOut.String(), "-admin") {
		t.Errorf("exit %d, want 1 and an error naming the redirect, its target and -admin; stderr:\n%s", code, errOut.String())
	}
}

// An admin listener that is not there (nothing listens, a wrong port) is
// an error that says what to check: that a server runs there, and -admin.
func TestKeysSaysWhatToCheckWhenNothingListens(t *testing.T) {
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"keys", "-admin", "http://127.0.0.1:1", "top"}, &out, &errOut)
	if code != 1 || !strings.Contains(errOut.String(), "connection refused") || !strings.Contains(errOut.String(), "-admin") {
		t.Errorf("exit %d, want 1 and an error naming -admin; stderr:\n%s", code, errOut.String())
	}
}

// An -admin that accepts and never answers ends at keys' bound (10 s; the
// context's deadline here), with an error that says it did not answer
// and what to check.
func TestKeysSaysWhatToCheckWhenNothingAnswers(t *testing.T) {
	release := make(chan struct{})
	silent := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { <-release }))
	defer silent.Close()
	defer close(release)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	var out, errOut bytes.Buffer
	code := run(ctx, []string{"keys", "-admin", silent.URL, "top"}, &out, &errOut)
	if code != 1 || !strings.Contains(errOut.String(), "no answer within 10s") || !strings.Contains(errOut.String(), "-admin") {
		t.Errorf("exit %d, want 1 and an error saying nothing answered, naming -admin; stderr:\n%s", code, errOut.String())
	}
}
