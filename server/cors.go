package server

import (
	"net/http"
	"slices"
	"strings"

	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/httplimit"
)

// corsPolicy lets the browser origins of response.cors read what sluice
// answers on the public listener.
type corsPolicy struct {
	cfg config.CORS
	// expose lists the headers a script of an allowed origin may read:
	// the RateLimit fields of the configured modes and Retry-After;
	// exposeGRPCWeb adds, for a gRPC-Web call, the status of sluice's
	// trailers-only answers (see grpcAnswer).
	expose, exposeGRPCWeb string
}

// newCORS returns the policy of cfg for the headers mw writes, or nil when
// cfg allows no origin.
func newCORS(cfg config.CORS, mw *httplimit.Middleware) *corsPolicy {
	if len(cfg.Origins) == 0 {
		return nil
	}
	expose := strings.Join(mw.ResponseHeaders(), ", ")
	return &corsPolicy{cfg: cfg, expose: expose, exposeGRPCWeb: expose + ", " + grpcExposed}
}

// allowOf returns the Access-Control-Allow-Origin value for r, or "" when
// r comes from no origin the policy allows (or c is nil).
func (c *corsPolicy) allowOf(r *http.Request) string {
	if c == nil {
		return ""
	}
	return c.cfg.Allows(r.Header.Get("Origin"))
}

// exposeOf returns the exposed headers of an answer to r.
func (c *corsPolicy) exposeOf(r *http.Request) string {
	if strings.HasPrefix(grpcReplyType(r), "application/grpc-web") {
		return c.exposeGRPCWeb
	}
	return c.expose
}

// annotate adds to h, a response's header about to be written to a request
// whose origin may read it as allow says, what lets that origin's script
// read it (exposing the headers expose lists): for a response sluice makes itself, Access-Control-Allow-Origin
// (with Vary: Origin, and Access-Control-Allow-Credentials when the pages
// send credentials) and the exposed headers; for the upstream's answer, the
// exposed headers only, and only when the upstream lets the origin read it
// (its own Access-Control-Allow-Origin), never an origin of sluice's over
// the upstream's.
func (c *corsPolicy) annotate(h http.Header, allow, expose string, upstream bool) {
	if _, ok := h["Access-Control-Allow-Origin"]; ok {
		if !slices.Contains(h.Values("Access-Control-Expose-Headers"), expose) { // a stale copy has it
			h.Add("Access-Control-Expose-Headers", expose)
		}
		return
	}
	if upstream {
		return
	}
	h.Set("Access-Control-Allow-Origin", allow)
	if allow != "*" {
		h.Add("Vary", "Origin")
	}
	if c.cfg.Credentials {
		h.Set("Access-Control-Allow-Credentials", "true")
	}
	h.Set("Access-Control-Expose-Headers", expose)
}
