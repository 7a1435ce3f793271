package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
)

// newProxy returns the handler admitted requests go to: a reverse proxy to
// upstream, or the built-in demo upstream when upstream is empty.
func newProxy(upstream string, log *slog.Logger) (http.Handler, error) {
	if upstream == "" {
		return demoUpstream(), nil
	}
	u, err := url.Parse(upstream)
	if err != nil {
		return nil, fmt.Errorf("upstream: %w", err)
	}
	// The default Transport keeps two idle connections per host: under load
	// most requests would dial the upstream anew.
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.MaxIdleConns, transport.MaxIdleConnsPerHost = 1024, 256
	return &httputil.ReverseProxy{
		Transport: transport,
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(u)
			pr.SetXForwarded()
		},
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			if errors.Is(err, r.Context().Err()) {
				return // the client went away
			}
			log.Warn("upstream failed", "upstream", u.Host, "path", r.URL.Path, "err", err)
			writeJSONProblem(w, http.StatusBadGateway, "Bad Gateway",
				"The upstream service did not answer; the request was admitted and counted. Retry later.")
		},
	}, nil
}

// demoUpstream answers every request with a small JSON document, so that
// `sluice serve` without an upstream has something to protect.
func demoUpstream() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]string{
			"upstream": "sluice demo upstream",
			"method":   r.Method,
			"path":     r.URL.Path,
			"message":  "this request was admitted by sluice; see the RateLimit headers",
		})
	})
}

// problem is an RFC 9457 body for sluice's own errors.
type problem struct {
	Type   string `json:"type"`
	Title  string `json:"title"`
	Status int    `json:"status"`
	Detail string `json:"detail"`
}

func writeJSONProblem(w http.ResponseWriter, status int, title, detail string) {
	body, _ := json.Marshal(problem{Type: "about:blank", Title: title, Status: status, Detail: detail})
	w.Header().Set("Content-Type", "application/problem+json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)+1))
	w.WriteHeader(status)
	w.Write(append(body, '\n'))
}
