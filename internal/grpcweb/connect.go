package grpcweb

import "net/http"

// Connect reports whether h, a request's header, may be a call of the
// Connect protocol (connect-go, connect-es, buf's clients), whose deadline
// is its Connect-Timeout-Ms: it has a Connect-Protocol-Version field, or
// its Content-Type is a Connect stream's (application/connect+proto,
// +json…) or a Connect unary call's (application/proto, application/json),
// which a connect-go service serves as Connect calls without that field
// unless told to require it. A request of those types that is no Connect
// call carries no Connect-Timeout-Ms, whose only meaning is a Connect
// call's deadline.
func Connect(h http.Header) bool {
	if len(h["Connect-Protocol-Version"]) > 0 {
		return true
	}
	switch media, base := Media(h.Get("Content-Type")); {
	case base == "application/connect" && media != base:
		return true
	case media == "application/proto", media == "application/json":
		return true
	}
	return false
}
