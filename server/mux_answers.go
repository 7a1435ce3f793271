package server

import "net/http"

// ownMuxAnswers is mux with the answers ServeMux would give itself, in
// plain text or none, given as problem bodies: to a request target of "*"
// other than OPTIONS' (which http.Server answers before any handler), 400;
// to CONNECT in authority form (a tunnel to host:port, which sluice never
// opens), 404. ServeMux's other answers of its own are redirects to a
// path's clean form (307, keeping the method).
func ownMuxAnswers(mux http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.RequestURI == "*":
			if r.ProtoAtLeast(1, 1) {
				w.Header().Set("Connection", "close")
			}
			writeJSONProblem(w, http.StatusBadRequest, "Bad Request", "The request target * is OPTIONS' alone (RFC 9110 §7.1).")
		case r.Method == http.MethodConnect && r.URL.Path == "":
			writeJSONProblem(w, http.StatusNotFound, "Not Found", "sluice opens no tunnels: CONNECT to host:port is not served here.")
		default:
			mux.ServeHTTP(w, r)
		}
	})
}
