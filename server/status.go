package server

import (
	"net/http"

	"github.com/sluice-dev/sluice/degrade"
)

// serveStatus answers response.status_path: the client's own standing
// (httplimit.Middleware.StatusHandler) under the limits in force at level
// (the reduced ones while degraded), never proxied. Only GET and HEAD.
func (st *state) serveStatus(w http.ResponseWriter, r *http.Request, level degrade.Level) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		writeJSONProblem(w, http.StatusMethodNotAllowed, "Method Not Allowed", "the status path answers GET and HEAD")
		return
	}
	st.deciderAt(level).StatusHandler().ServeHTTP(w, r)
}
