package jwt_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/sluice-dev/sluice/jwt"
)

type lockedBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// With Discover, the discovery document is fetched from the Issuer's URL,
// its user information sent as the fetch's credentials: neither the
// fetch's error (returned by Refresh, logged as "err") nor its log shows
// that URL's password, when the document names the issuer without them.
func TestADiscoveryErrorNeverShowsTheIssuersPassword(t *testing.T) {
	p := newProvider(t, set(jwk(ecKey(), "k1")))
	issuer := strings.Replace(*p.issuer.Load(), "http://", "http://idp:hunter2@", 1)
	var logs lockedBuf
	v := newVerifier(t, jwt.Options{Discover: true, Issuer: issuer, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	err := v.Refresh(context.Background())
	if err == nil {
		t.Fatal("the document names another issuer: want the fetch refused")
	}
	if strings.Contains(err.Error(), "hunter2") {
		t.Errorf("Refresh's error shows the issuer URL's password: %v", err)
	}
	if strings.Contains(logs.String(), "hunter2") {
		t.Errorf("the fetch's log shows the issuer URL's password: %s", logs.String())
	}
}
