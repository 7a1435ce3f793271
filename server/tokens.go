package server

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/jwt"
)

// tokenSource keeps the verifiers of identity.jwt: the same ones for as
// long as the section is unchanged, so that a reload neither fetches the
// keys again nor forgets them; a changed section gets verifiers of its own
// once the configuration that has it is served.
type tokenSource struct {
	s       *Server
	metrics *tokenMetrics

	mu     sync.Mutex
	cfg    []*config.JWT
	vs     []*jwt.Verifier
	v      httplimit.TokenVerifier // of vs, counted; nil without
	plainV httplimit.TokenVerifier // of vs, not counted
}

// verifierFor returns the verifier of js (nil for none) and a function that
// settles it: called with true once the configuration of js is served (the
// verifiers it replaced are closed), with false when it is not (those made
// for it are closed).
func (t *tokenSource) verifierFor(js []*config.JWT) (httplimit.TokenVerifier, func(served bool), error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if slices.EqualFunc(js, t.cfg, (*config.JWT).Equal) {
		return t.v, func(bool) {}, nil
	}
	if len(js) == 0 {
		return nil, func(served bool) {
			if served {
				t.swap(nil, nil, nil, nil)
			}
		}, nil
	}
	vs := make([]*jwt.Verifier, 0, len(js))
	closeAll := func() {
		for _, v := range vs {
			v.Close()
		}
	}
	for _, j := range js {
		o := j.Options()
		o.Logger, o.OnFetch = t.s.log.With("jwt", j.Name), t.metrics.fetched(t)
		if t.s.ownClock {
			o.Clock = t.s.opts.Clock
		}
		v, err := jwt.New(o)
		if err != nil {
			closeAll()
			return nil, nil, fmt.Errorf("identity.jwt %s: %w", j.Name, err)
		}
		vs = append(vs, v)
	}
	var v httplimit.TokenVerifier = vs[0]
	if len(vs) > 1 {
		issuers, err := jwt.NewIssuers(vs...)
		if err != nil {
			closeAll()
			return nil, nil, fmt.Errorf("identity.jwt: %w", err)
		}
		v = issuers
	}
	plain := v
	v = &countedVerifier{v: v, m: t.metrics}
	return v, func(served bool) {
		if served {
			t.swap(js, vs, v, plain)
		} else {
			closeAll()
		}
	}, nil
}

// plain returns the verifier in use, its results not counted, or nil.
func (t *tokenSource) plain() httplimit.TokenVerifier {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.plainV
}

// swap makes vs, of js, the verifiers in use (v together, and plain
// uncounted) and closes those it replaces.
func (t *tokenSource) swap(js []*config.JWT, vs []*jwt.Verifier, v, plain httplimit.TokenVerifier) {
	t.mu.Lock()
	old := t.vs
	t.cfg, t.vs, t.v, t.plainV = js, vs, v, plain
	t.mu.Unlock()
	t.metrics.keys.Set(float64(t.fewestKeys()))
	for _, o := range old {
		if !slices.Contains(vs, o) {
			o.Close()
		}
	}
}

// fewestKeys returns the fewest usable keys of any verifier in use (0
// without any).
func (t *tokenSource) fewestKeys() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	fewest := 0
	for i, v := range t.vs {
		if n := v.Keys(); i == 0 || n < fewest {
			fewest = n
		}
	}
	return fewest
}

// close closes the verifiers in use.
func (t *tokenSource) close() { t.swap(nil, nil, nil, nil) }

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
			Help: "Fetches of identity.jwt's jwks_urls, by result (ok, error). A failed fetch keeps the keys fetched before.",
		}, []string{"result"}),
		keys: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "sluice_jwks_keys",
			Help: "Usable keys of the identity.jwt issuer with the fewest now; 0 with identity.jwt set means an issuer's tokens are all refused.",
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

// fetched returns the verifiers' OnFetch: a fetch is counted, and the
// keys of the verifiers t serves are counted again.
func (m *tokenMetrics) fetched(t *tokenSource) func(keys int, err error) {
	return func(_ int, err error) {
		if err != nil {
			m.fetches.WithLabelValues("error").Inc()
		} else {
			m.fetches.WithLabelValues("ok").Inc()
		}
		m.keys.Set(float64(t.fewestKeys()))
	}
}

// countedVerifier is a verifier whose results are counted.
type countedVerifier struct {
	v httplimit.TokenVerifier
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
