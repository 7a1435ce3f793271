package httplimit

import (
	"net/http"
	"strconv"

	"github.com/sluice-dev/sluice/internal/grpcweb"
)

// StatusOfGRPC returns the HTTP status that stands for a gRPC call's
// status code when limits count by response (Options.Count): 200 for OK
// (0), and for the others the status gRPC's HTTP mapping gives them —
// Canceled 499, InvalidArgument, FailedPrecondition and OutOfRange 400,
// Unauthenticated 401, PermissionDenied 403, NotFound 404, AlreadyExists
// and Aborted 409, ResourceExhausted 429, Unimplemented 501, Unavailable
// 503, DeadlineExceeded 504 — and 500 for the rest (Unknown, Internal,
// DataLoss, codes not yet defined).
func StatusOfGRPC(code uint32) int {
	switch code {
	case 0:
		return http.StatusOK
	case 1:
		return 499 // client closed request
	case 3, 9, 11:
		return http.StatusBadRequest
	case 16:
		return http.StatusUnauthorized
	case 7:
		return http.StatusForbidden
	case 5:
		return http.StatusNotFound
	case 6, 10:
		return http.StatusConflict
	case 8:
		return http.StatusTooManyRequests
	case 12:
		return http.StatusNotImplemented
	case 14:
		return http.StatusServiceUnavailable
	case 4:
		return http.StatusGatewayTimeout
	}
	return http.StatusInternalServerError
}

// answerStatus is the status an answer is judged by: status, or for a
// gRPC answer (Content-Type application/grpc, whose HTTP status is 200
// whatever the call's outcome) the StatusOfGRPC of its grpc-status,
// trailer or header. A gRPC answer that says no valid status is a failure
// (500). A gRPC-Web answer (application/grpc-web, -text) is judged by the
// grpc-status of its header when it has one (a trailers-only answer), else
// by status (Handler passes the StatusOfGRPC of the status at the end of its
// body, which it reads as the body passes).
func answerStatus(status int, h http.Header) int {
	if status != http.StatusOK {
		return status
	}
	switch _, base := grpcweb.Media(h.Get("Content-Type")); base {
	case "application/grpc":
		code, ok := GRPCStatusOf(h)
		if !ok {
			return http.StatusInternalServerError
		}
		return StatusOfGRPC(code)
	case "application/grpc-web", "application/grpc-web-text":
		if code, ok := GRPCStatusOf(h); ok {
			return StatusOfGRPC(code)
		}
	}
	return status
}

// GRPCStatusOf returns the grpc-status of a gRPC answer whose header
// (trailers included, under their names or http.TrailerPrefix) is h: its
// trailer's, else its header's (a trailers-only answer); ok is false when
// neither holds a status code.
func GRPCStatusOf(h http.Header) (code uint32, ok bool) {
	v := h.Get(http.TrailerPrefix + "Grpc-Status")
	if v == "" {
		v = h.Get("Grpc-Status")
	}
	c, err := strconv.ParseUint(v, 10, 32)
	return uint32(c), err == nil
}

// grpcCall reports whether r is a gRPC or gRPC-Web call: its Content-Type
// is application/grpc, application/grpc-web or application/grpc-web-text,
// with any +format suffix.
func grpcCall(r *http.Request) bool { return grpcType(r.Header) }

// grpcType reports whether h, a request's header, is a gRPC or gRPC-Web
// call's (see grpcCall).
func grpcType(h http.Header) bool {
	switch _, base := grpcweb.Media(h.Get("Content-Type")); base {
	case "application/grpc", "application/grpc-web", "application/grpc-web-text":
		return true
	}
	return false
}

// fieldsReadApart returns the detail of the 400 with which Handler refuses a
// request of header h, before any decision, when h holds fields that the
// limits and the handler after them may read apart; "" for none. They are
// Content-Type fields whose values differ, a field that is a singleton
// (RFC 9110 §8.3): the limits read the first (grpcCall), grpc-go's HTTP/2
// transport takes a call for gRPC by any valid one, so a call the limits
// judge no gRPC call would be one to it; in a gRPC or gRPC-Web call,
// grpc-timeout fields whose values differ: the limits take the first for
// its deadline (grpcDeadline), grpc-go's transport obeys the last; and in
// a Connect call (grpcweb.Connect), Connect-Timeout-Ms fields whose values
// differ: the deadline sluice judges the call's outcome by is the first's
// (connect-go reads the first too), a service that joins them reads none.
// Fields repeated with one value read alike wherever they are read.
func fieldsReadApart(h http.Header) string {
	if valuesNotOne(h["Content-Type"]) {
		return "The request has Content-Type fields that differ: a request has one Content-Type (RFC 9110 §8.3), and which of them the service would read is unknown."
	}
	if valuesNotOne(h["Grpc-Timeout"]) && grpcType(h) {
		return "The call has grpc-timeout fields that differ: a call has one deadline, and which of them the service would obey is unknown."
	}
	if valuesNotOne(h["Connect-Timeout-Ms"]) && grpcweb.Connect(h) {
		return "The call has Connect-Timeout-Ms fields that differ: a call has one deadline, and which of them the service would obey is unknown."
	}
	return ""
}

// valuesNotOne reports whether vs, a field's values, are not all the same.
func valuesNotOne(vs []string) bool {
	for _, v := range vs[min(1, len(vs)):] {
		if v != vs[0] {
			return true
		}
	}
	return false
}
