package server

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluice-dev/sluice/config"
)

// tokenMetrics count what the verifiers of identity.jwt said and fetched.
//
// sluice_jwks_fetches_total is labelled by entry (jwt: its entryName, as
// in its log lines), so that
// one issuer whose fetches fail is told apart from the others. Its label
// values are the configuration's: each entry that fetches (jwks_url or
// discover) of the configuration served has its two series from the
// start, at 0 until its first fetch, and an entry a reload drops or
// renames loses them. Fetches of a configuration that was refused are
// counted until the next one is served.
type tokenMetrics struct {
	verified *prometheus.CounterVec
	keys     prometheus.Gauge

	mu      sync.Mutex
	fetches *prometheus.CounterVec
	named   map[string]bool // the jwt label values fetches has
}

// The values of sluice_jwks_fetches_total's result label.
const (
	fetchOK    = "ok"
	fetchError = "error"
)

func newTokenMetrics(reg prometheus.Registerer) *tokenMetrics {
	m := &tokenMetrics{
		verified: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sluice_token_verifications_total",
			Help: "Bearer tokens verified (identity.jwt), by result: verified, or why not (malformed, key, signature, expired, claims, canceled). A token is verified again at most every 5 minutes (10 s once refused); a refused token's client is limited by its address.",
		}, []string{"result"}),
		fetches: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sluice_jwks_fetches_total",
			Help: "Fetches of the key set of each identity.jwt entry (jwt: its name, or its position) that fetches one (jwks_url, discover), by result (ok, error). A failed fetch keeps the keys fetched before.",
		}, []string{"jwt", "result"}),
		keys: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "sluice_jwks_keys",
			Help: "Usable keys of the identity.jwt issuer with the fewest now; 0 with identity.jwt set means an issuer's tokens are all refused.",
		}),
		named: map[string]bool{},
	}
	reg.MustRegister(m.verified, m.fetches, m.keys)
	for _, r := range []string{"verified", "malformed", "key", "signature", "expired", "claims", "canceled"} {
		m.verified.WithLabelValues(r)
	}
	return m
}

// fetched returns the OnFetch of the verifier of the entry named name: a
// fetch is counted, and the keys of the verifiers t serves are counted
// again.
func (m *tokenMetrics) fetched(t *tokenSource, name string) func(keys int, err error) {
	return func(_ int, err error) {
		result := fetchOK
		if err != nil {
			result = fetchError
		}
		m.mu.Lock()
		m.named[name] = true
		m.fetches.WithLabelValues(name, result).Inc()
		m.mu.Unlock()
		m.keys.Set(float64(t.fewestKeys()))
	}
}

// entries makes js the entries sluice_jwks_fetches_total names: those that
// fetch get their series (at 0 if new), every other name loses its own.
func (m *tokenMetrics) entries(js []*config.JWT) {
	keep := make(map[string]bool, len(js))
	for _, j := range js {
		if j.JWKSURL != "" || j.Discover {
			keep[entryName(j)] = true
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for name := range m.named {
		if !keep[name] {
			m.fetches.DeletePartialMatch(prometheus.Labels{"jwt": name})
			delete(m.named, name)
		}
	}
	for name := range keep {
		m.named[name] = true
		m.fetches.WithLabelValues(name, fetchOK)
		m.fetches.WithLabelValues(name, fetchError)
	}
}

// entryName names the identity.jwt entry j in metrics and logs: its name,
// which the configuration sets to its position ("1", "2"…) in a list when
// it has none, or "1" for the one entry of an identity.jwt that is not a
// list and has no name.
func entryName(j *config.JWT) string {
	if j.Name == "" {
		return "1"
	}
	return j.Name
}
