package server

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

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
		o.Logger, o.OnFetch = t.s.log.With("jwt", entryName(j)), t.metrics.fetched(t, entryName(j))
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
	t.metrics.entries(js)
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
