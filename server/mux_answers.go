package server

import (
	"net/http"
	"path"
	"strings"
)

// ownMuxAnswers is mux with the answers ServeMux would give itself, in
// plain text or none, given as problem bodies: to a request target of "*"
// other than OPTIONS' (which http.Server answers before any handler), 400;
// to CONNECT in authority form (a tunnel to host:port, which sluice never
// opens), 404. A path that is not clean ("//", "." or ".." segments) is
// redirected to its clean form here (307, keeping the method) with its
// percent-escapes as the client wrote them, where ServeMux's redirect would
// escape them again (/a//b%20c to /a/b%2520c, another resource).
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
		case r.Method != http.MethodConnect && cleanMuxPath(r.URL.EscapedPath()) != r.URL.EscapedPath():
			loc := cleanMuxPath(r.URL.EscapedPath())
			if r.URL.RawQuery != "" {
				loc += "?" + r.URL.RawQuery
			}
			w.Header().Set("Location", loc)
			w.WriteHeader(http.StatusTemporaryRedirect)
		default:
			mux.ServeHTTP(w, r)
		}
	})
}

// cleanMuxPath is the clean form of the escaped path p as ServeMux cleans
// it: rooted, without "//", "." or ".." segments, keeping a trailing slash.
// It never starts with "//", so it is no reference to another host.
func cleanMuxPath(p string) string {
	if p == "" {
		return "/"
	}
	if p[0] != '/' {
		p = "/" + p
	}
	np := path.Clean(p)
	if strings.HasSuffix(p, "/") && np != "/" {
		np += "/"
	}
	return np
}
