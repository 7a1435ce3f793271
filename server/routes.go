package server

import (
	"context"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// routes mounts sluice's own endpoints; every other path goes through the
// limiter to the upstream.
func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/check", s.handleCheck)
	mux.HandleFunc("/v1/check", onlyPost) // sluice's path: never proxied
	mux.HandleFunc("/v1/forward-auth", s.handleForwardAuth)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok\n")) })
	mux.HandleFunc("GET /readyz", s.handleReady)
	mux.Handle("GET /metrics", promhttp.HandlerFor(s.opts.Registry, promhttp.HandlerOpts{}))
	mux.HandleFunc("GET /docs", s.handleDocs)
	mux.HandleFunc("GET /dashboard", s.handleDashboard)
	mux.HandleFunc("GET /dashboard/data", s.handleDashboardData)
	mux.HandleFunc("/v1/degradation", s.handleDegradation)
	mux.HandleFunc("GET /designer", s.handleDesigner)
	mux.HandleFunc("POST /designer/run", s.handleDesignerRun)
	mux.HandleFunc("/designer/run", onlyPost)
	mux.HandleFunc("/", s.protect)
	return mux
}

func (s *Server) handleReady(w http.ResponseWriter, r *http.Request) {
	if s.opts.Ready != nil {
		if err := s.opts.Ready(r.Context()); err != nil {
			http.Error(w, "store not reachable: "+err.Error(), http.StatusServiceUnavailable)
			return
		}
	}
	w.Write([]byte("ready\n"))
}

func contextWithTimeout(r *http.Request, d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(r.Context(), d)
}

func onlyPost(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Allow", http.MethodPost)
	writeJSONProblem(w, http.StatusMethodNotAllowed, "Method Not Allowed", "use POST with a JSON body")
}
