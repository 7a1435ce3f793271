package server

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/textproto"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/failover"
)

// publicRoutes is the public listener: the client documentation and a
// health check (GET at the configuration's docs_path and health_path), and
// every other request through the limiter to the upstream — sluice's
// private paths included, which are the upstream's there. A path that is
// not clean is redirected (307) to its clean form before any of them sees
// it — by ownMuxAnswers, and here when its dot segments are percent-encoded
// ("%2e%2e", "..%2F"), which are resolved on the path as written, its other
// escapes kept (resolveDotSegments) — so the upstream gets the path the
// limiter judged, which no reading of its escapes resolves further.
// An offer to upgrade to HTTP/2 (Upgrade: h2c, h2 or HTTP/2.0, see
// offersHTTP2) is ignored: the upstream gets requests one by one, each
// judged. The limits judge a request without the fields the proxy does
// not forward (see asForwarded): a header a client names in its
// Connection field, which the upstream never sees, neither matches a rule
// nor leaves a request out of one.
func (s *Server) publicRoutes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if loc, ok := resolveDotSegments(r.URL.EscapedPath()); ok {
			if r.URL.RawQuery != "" {
				loc += "?" + r.URL.RawQuery
			}
			w.Header().Set("Location", loc)
			w.WriteHeader(http.StatusTemporaryRedirect)
			return
		}
		if offersHTTP2(r.Header["Upgrade"]) {
			// The client's offer to switch its connection to HTTP/2 would
			// reach the upstream, whose streams on it the limiter would
			// not see: ignored, as a server may (RFC 9110 §7.8).
			r.Header.Del("Upgrade")
			r.Header.Del("Http2-Settings")
		}
		if r.Method == http.MethodGet || r.Method == http.MethodHead {
			cfg := s.Config()
			switch p := r.URL.Path; {
			case p == cfg.HealthPath && p != "":
				handleHealth(w, r)
				return
			case p == cfg.DocsPath && p != "":
				s.handleDocs(w, r)
				return
			}
		}
		asForwarded(r.Header)
		s.protect(w, r)
	})
	return ownMuxAnswers(mux)
}

// offersHTTP2 reports whether the Upgrade values vs name HTTP/2 among
// their protocols, in any case: h2c (RFC 7540 §3.2), h2 (its name over
// TLS, which some servers switch to as well), their drafts' names (h2-14,
// h2c-14) and HTTP/2 with or without a minor version (HTTP/2.0).
func offersHTTP2(vs []string) bool {
	for _, v := range vs {
		for p := range strings.SplitSeq(v, ",") {
			p = textproto.TrimString(p)
			name, version, _ := strings.Cut(p, "/")
			switch {
			case strings.EqualFold(name, "http"):
				if version == "2" || strings.HasPrefix(version, "2.") {
					return true
				}
			case len(name) >= 2 && strings.EqualFold(name[:2], "h2"):
				rest := name[2:]
				if rest != "" && (rest[0] == 'c' || rest[0] == 'C') {
					rest = rest[1:]
				}
				if rest == "" || rest[0] == '-' {
					return true
				}
			}
		}
	}
	return false
}

// adminRoutes is the admin listener. Each endpoint names the scope its
// callers need; /healthz and /readyz need none (orchestrators probe them).
func (s *Server) adminRoutes() http.Handler {
	read := func(h http.HandlerFunc) http.HandlerFunc {
		return s.guard(config.ScopeRead, false, func(w http.ResponseWriter, r *http.Request, _ caller) { h(w, r) })
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", handleHealth)
	mux.HandleFunc("GET /readyz", s.handleReady)
	mux.HandleFunc("POST /v1/check", s.guard(config.ScopeCheck, false, s.handleCheck))
	mux.HandleFunc("/v1/check", onlyPost)
	mux.HandleFunc("POST /v1/settle", s.guard(config.ScopeCheck, false, s.handleSettle))
	mux.HandleFunc("/v1/settle", onlyPost)
	// Forward-auth's Authorization is the described client's API key: its
	// callers send their token in Sluice-Token.
	mux.HandleFunc("/v1/forward-auth", s.guard(config.ScopeCheck, true, s.handleForwardAuth))
	mux.Handle("GET /metrics", read(boundAtOnce(maxScrapes, "scrapes of /metrics", promhttp.HandlerFor(s.opts.Registry, promhttp.HandlerOpts{}))))
	mux.HandleFunc("GET /docs", s.handleDocs)
	mux.HandleFunc("GET /dashboard", read(s.handleDashboard))
	mux.HandleFunc("GET /dashboard/data", read(boundAtOnce(maxDashboardReads, "reads of /dashboard/data", http.HandlerFunc(s.handleDashboardData))))
	// Reading the level needs read, changing it admin: the handler checks.
	mux.HandleFunc("/v1/degradation", s.guard(0, false, s.handleDegradation))
	s.keyRoutes(mux)
	s.envoyRoutes(mux)
	mux.HandleFunc("GET /designer", read(s.handleDesigner))
	mux.HandleFunc("POST /designer/run", read(s.handleDesignerRun))
	mux.HandleFunc("/designer/run", onlyPost)
	mux.HandleFunc("POST /designer/import", read(s.handleDesignerImport))
	mux.HandleFunc("/designer/import", onlyPost)
	for _, path := range []string{"/healthz", "/readyz", "/metrics", "/docs", "/dashboard", "/dashboard/data", "/designer"} {
		mux.HandleFunc(path, allowOnly("GET, HEAD"))
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeJSONProblem(w, http.StatusNotFound, "Not Found", "No such endpoint on sluice's admin listener; the API it protects is on the public listener.")
	})
	return ownMuxAnswers(mux)
}

func handleHealth(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok\n")) }

// handleReady answers /readyz: 503 once the server is shutting down, or
// while its store is not reachable under on_store_error deny (see
// Options.Ready and readyProbe); otherwise 200, saying so when the store is
// not reachable and decisions follow on_store_error. It needs no
// credentials: why the store is not reachable (its error, which names its
// address) is told only to a caller holding the read scope, and logged
// when the store stops or starts answering.
func (s *Server) handleReady(w http.ResponseWriter, r *http.Request) {
	w.Header()["Cache-Control"] = noStore
	if s.draining.Load() {
		http.Error(w, "shutting down", http.StatusServiceUnavailable)
		return
	}
	if s.ready != nil {
		err := s.ready.check(r.Context())
		state := "not reachable"
		if err == nil && s.storeFailing() {
			err, state = errStoreFailing, "failing every decision"
		}
		if err != nil {
			why := ""
			if s.callerOf(r, false).scopes.Has(config.ScopeRead) {
				why = ": " + err.Error()
			}
			policy := s.storeErrorPolicy()
			if policy == "deny" {
				http.Error(w, "store "+state+", and on_store_error deny refuses every request"+why, http.StatusServiceUnavailable)
				return
			}
			fmt.Fprintf(w, "ready, deciding by on_store_error %s: the store is %s%s\n", policy, state, why)
			return
		}
	}
	w.Write([]byte("ready\n"))
}

// errStoreFailing is /readyz's reason when the store answers its probe
// while its decisions fail (see storeFailing).
var errStoreFailing = errors.New("the store answers its probe but fails its decisions (circuit open on every node)")

// storeFailing reports whether every node of the store that the failover
// routed to lately has its breaker open or half-open: the store answers
// its probe but decides nothing (Redis full under noeviction, a Cluster
// down, a replica). One node's failure (a full shard of a Cluster) leaves
// the others deciding, and the instance serving the keys of their slots:
// it is no reason to take it out of a load balancer.
func (s *Server) storeFailing() bool {
	if s.opts.Failover == nil {
		return false
	}
	st := s.opts.Failover.Stats()
	if len(st.Nodes) == 0 {
		return st.Breaker != failover.BreakerClosed
	}
	for _, n := range st.Nodes {
		if n.Breaker == failover.BreakerClosed {
			return false
		}
	}
	return true
}

// storeErrorPolicy returns the on_store_error the running store decides
// by: that of the configuration it was opened with, which a reload does
// not change (the store section changes at the next start).
func (s *Server) storeErrorPolicy() string {
	return cmp.Or(s.opts.Config.Store.Redis.OnStoreError, "local")
}

// readyTimeout bounds one probe of the store for /readyz: a store that has
// not answered within it is not reachable.
const readyTimeout = 2 * time.Second

// readyProbe calls Options.Ready for /readyz, which needs no credentials,
// one call at a time, each within readyTimeout: the probes that arrive
// while one runs take its result, so that a flood of /readyz makes one
// store call at a time. It logs when the store stops answering its
// probes (with the error) and when it answers again. It is safe for
// concurrent use.
type readyProbe struct {
	ready func(context.Context) error
	log   *slog.Logger

	mu   sync.Mutex
	call *readyCall // the call running, nil when none
	down bool       // the last call failed
}

// readyCall is one call of readyProbe's: err is set when done is closed.
type readyCall struct {
	done chan struct{}
	err  error
}

// check returns the result of the call running, or of a new one it makes,
// or ctx's error if ctx ends first.
func (p *readyProbe) check(ctx context.Context) error {
	p.mu.Lock()
	if c := p.call; c != nil {
		p.mu.Unlock()
		select {
		case <-c.done:
			return c.err
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	c := &readyCall{done: make(chan struct{})}
	p.call = c
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		p.call = nil
		was := p.down
		p.down = c.err != nil
		p.mu.Unlock()
		close(c.done)
		switch {
		case c.err != nil && !was:
			p.log.Warn("readyz: the store is not reachable", "err", c.err)
		case c.err == nil && was:
			p.log.Info("readyz: the store is reachable again")
		}
	}()
	// Its waiters are served whether or not its own caller stays.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), readyTimeout)
	defer cancel()
	c.err = p.ready(ctx)
	return c.err
}

func contextWithTimeout(r *http.Request, d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(r.Context(), d)
}

// allowOnly answers a method an endpoint does not take: 405 naming those it
// takes, allow, as the Allow header lists them.
func allowOnly(allow string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Allow", allow)
		writeJSONProblem(w, http.StatusMethodNotAllowed, "Method Not Allowed", "This endpoint takes "+allow+".")
	}
}

func onlyPost(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Allow", http.MethodPost)
	writeJSONProblem(w, http.StatusMethodNotAllowed, "Method Not Allowed", "use POST with a JSON body")
}

// maxScrapes bounds the /metrics answers gathered at once: each gathers
// every metric of the process and reads /proc. Two Prometheus servers of a
// pair, and someone looking, fit.
const maxScrapes = 4

// maxDashboardReads bounds the /dashboard/data answers made at once: one
// of the last hour merges up to 360 slots' counts holding the lock every
// decision takes to count itself. A page polls once a second; a few people
// looking fit.
const maxDashboardReads = 4

// boundAtOnce serves h for at most n requests at once, and answers 503
// with Retry-After to one beyond them, saying that n of what are being
// answered.
func boundAtOnce(n int, what string, h http.Handler) http.HandlerFunc {
	slots := make(chan struct{}, n)
	return func(w http.ResponseWriter, r *http.Request) {
		select {
		case slots <- struct{}{}:
			defer func() { <-slots }()
			h.ServeHTTP(w, r)
		default:
			w.Header().Set("Retry-After", "1")
			writeJSONProblem(w, http.StatusServiceUnavailable, "Service Unavailable",
				fmt.Sprintf("%d %s are being answered, the most at once; retry in a second.", n, what))
		}
	}
}
