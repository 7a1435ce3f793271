package server

import (
	"net/http"
	"testing"

	"google.golang.org/grpc/codes"
)

// A header list larger than an HTTP/2 upstream accepts is the client's
// mistake, as a body too large is: a gRPC call gets INVALID_ARGUMENT, not
// UNKNOWN.
func TestAHeaderTooLargeIsAnInvalidArgumentOfTheCall(t *testing.T) {
	for _, status := range []int{http.StatusRequestEntityTooLarge, http.StatusRequestHeaderFieldsTooLarge} {
		if c := grpcCode(status); c != codes.InvalidArgument {
			t.Errorf("grpcCode(%d) = %v, want InvalidArgument", status, c)
		}
	}
}
