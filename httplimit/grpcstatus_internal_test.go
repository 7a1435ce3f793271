package httplimit

import (
	"net/http"
	"testing"
)

// TestAnswerStatusJudgesGRPCByItsStatus: a gRPC answer is judged by its
// grpc-status, from its trailers (as a proxy copies them) or its header (a
// trailers-only answer); one without a valid status is a failure; a
// gRPC-Web answer is judged by its header's grpc-status when it has one; any
// other answer keeps its HTTP status.
func TestAnswerStatusJudgesGRPCByItsStatus(t *testing.T) {
	for _, c := range []struct {
		status int
		header map[string]string
		want   int
	}{
		{200, map[string]string{"Content-Type": "application/grpc", http.TrailerPrefix + "Grpc-Status": "0"}, 200},
		{200, map[string]string{"Content-Type": "application/grpc+proto", http.TrailerPrefix + "Grpc-Status": "5"}, 404},
		{200, map[string]string{"Content-Type": "application/grpc", "Grpc-Status": "14"}, 503},
		{200, map[string]string{"Content-Type": "application/grpc", "Grpc-Status": "8", http.TrailerPrefix + "Grpc-Status": "0"}, 200},
		{200, map[string]string{"Content-Type": "application/grpc"}, 500},
		{200, map[string]string{"Content-Type": "application/grpc", "Grpc-Status": "x"}, 500},
		{200, map[string]string{"Content-Type": "application/grpc", "Grpc-Status": "42"}, 500},
		{200, map[string]string{"Content-Type": "application/json", "Grpc-Status": "5"}, 200},
		{502, map[string]string{"Content-Type": "application/grpc", "Grpc-Status": "0"}, 502},
		{200, map[string]string{"Content-Type": "application/grpc; charset=utf-8", "Grpc-Status": "16"}, 401},
		// gRPC-Web: a trailers-only answer's status is in its header; the
		// status at the end of a body is not read, so the HTTP status stands.
		{200, map[string]string{"Content-Type": "application/grpc-web+proto", "Grpc-Status": "8"}, 429},
		{200, map[string]string{"Content-Type": "application/grpc-web-text", "Grpc-Status": "13"}, 500},
		{200, map[string]string{"Content-Type": "application/grpc-web+proto"}, 200},
		{503, map[string]string{"Content-Type": "application/grpc-web"}, 503},
	} {
		h := http.Header{}
		for k, v := range c.header {
			h[k] = []string{v}
		}
		if got := answerStatus(c.status, h); got != c.want {
			t.Errorf("%d %v: %d, want %d", c.status, c.header, got, c.want)
		}
	}
}
