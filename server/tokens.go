package server

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/jwt"
)

// tokenSource keeps the verifier of identity.jwt: one for as long as the
// section is unchanged, so that a reload neither fetches the keys again
// nor forgets them; a changed section gets a verifier of its own once the
// configuration that has it is served.
type tokenSource struct {
	s       *Server
	metrics *tokenMetrics

	mu  sync.Mutex
	cfg *config.JWT
	v   *jwt.Verifier
}

// verifierFor returns the verifier of j (nil for none) and a function that
// settles it: called with true once the configuration of j is served (the
// verifier it replaced is closed), with false when it is not (a verifier
// made for it is closed).
func (t *tokenSource) verifierFor(j *config.JWT) (httplimit.TokenVerifier, func(served bool), error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if j.Equal(t.cfg) {
		return t.current(), func(bool) {}, nil
	}
	if j == nil {
		return nil, func(served bool) {
			if served {
				t.swap(nil, nil)
			}
		}, nil
	}
	o := j.Options()
	o.Logger, o.OnFetch = t.s.log, t.metrics.fetched
	if t.s.ownClock {
		o.Clock = t.s.opts.Clock
	}
	v, err := jwt.New(o)
	if err != nil {
		return nil, nil, fmt.Errorf("identity.jwt: %w", err)
	}
	return &countedVerifier{v: v, m: t.metrics}, func(served bool) {
		if served {
			t.swap(j, v)
		} else {
			v.Close()
		}
	}, nil
}

// current returns the verifier in use, or nil. The caller holds t.mu.
func (t *tokenSource) current() httplimit.TokenVerifier {
	if t.v == nil {
		return nil
	}
	return &countedVerifier{v: t.v, m: t.metrics}
}

// swap makes v, of j, the verifier in use and closes the one it replaces.
func (t *tokenSource) swap(j *config.JWT, v *jwt.Verifier) {
	t.mu.Lock()
	old := t.v
	t.cfg, t.v = j, v
	t.mu.Unlock()
	t.metrics.keys.Set(float64(keysOf(v)))
	if old != nil && old != v {
		old.Close()
	}
}

// close closes the verifier in use.
func (t *tokenSource) close() { t.swap(nil, nil) }

// refresh fetches the keys of the verifier in use now, if it fetches any.
func (t *tokenSource) refresh(ctx context.Context) error {
	t.mu.Lock()
	v := t.v
	t.mu.Unlock()
	if v == nil {
		return nil
	}
	return v.Refresh(ctx)
}

func keysOf(v *jwt.Verifier) int {
	if v == nil {
		return 0
	}
	return v.Keys()
}

// tokenMetrics count what the verifier said and fetched.
type tokenMetrics struct {
	verified *prometheus.CounterVec
	fetches  *prometheus.CounterVec
	keys     prometheus.Gauge
}

func newTokenMetrics(reg prometheus.Registerer) *tokenMetrics {
	m := &tokenMetrics{
		verified: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sluice_token_verifications_total",
			Help: "Bearer tokens verified (identity.jwt), by result: verified, or why not (malformed, key, signature, expired, claims, canceled). A token is verified again at most every 5 minutes (10 s once refused); a refused token's client is limited by its address.",
		}, []string{"result"}),
		fetches: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sluice_jwks_fetches_total",
			Help: "Fetches of identity.jwt's jwks_url, by result (ok, error). A failed fetch keeps the keys fetched before.",
		}, []string{"result"}),
		keys: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "sluice_jwks_keys",
			Help: "Keys identity.jwt verifies tokens with now; 0 with identity.jwt set means every token is refused.",
		}),
	}
	reg.MustRegister(m.verified, m.fetches, m.keys)
	for _, r := range []string{"verified", "malformed", "key", "signature", "expired", "claims", "canceled"} {
		m.verified.WithLabelValues(r)
	}
	for _, r := range []string{"ok", "error"} {
		m.fetches.WithLabelValues(r)
	}
	return m
}

// fetched is the verifier's OnFetch.
func (m *tokenMetrics) fetched(keys int, err error) {
	if err != nil {
		m.fetches.WithLabelValues("error").Inc()
	} else {
		m.fetches.WithLabelValues("ok").Inc()
	}
	m.keys.Set(float64(keys))
}

// countedVerifier is a verifier whose results are counted.
type countedVerifier struct {
	v *jwt.Verifier
	m *tokenMetrics
}

func (c *countedVerifier) VerifyToken(ctx context.Context, token string) (httplimit.TokenClaims, error) {
	claims, err := c.v.VerifyToken(ctx, token)
	c.m.verified.WithLabelValues(resultOf(ctx, err)).Inc()
	return claims, err
}

// resultOf names the class of a verification's error.
func resultOf(ctx context.Context, err error) string {
	switch {
	case err == nil:
		return "verified"
	case ctx.Err() != nil:
		return "canceled"
	case errors.Is(err, jwt.ErrMalformed):
		return "malformed"
	case errors.Is(err, jwt.ErrKey):
		return "key"
	case errors.Is(err, jwt.ErrSignature):
		return "signature"
	case errors.Is(err, jwt.ErrExpired):
		return "expired"
	}
	return "claims"
}
