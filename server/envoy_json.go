package server

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/envoy"
)

// envoyRoutes adds to the admin listener's mux the endpoints of Envoy's
// rate limit service that are not gRPC: POST /json.
func (s *Server) envoyRoutes(mux *http.ServeMux) {
	mux.HandleFunc("POST /json", s.guard(config.ScopeCheck, false, s.handleEnvoyJSON))
	mux.HandleFunc("/json", onlyPost)
}

// handleEnvoyJSON answers POST /json as envoyproxy/ratelimit's HTTP port
// does: a RateLimitRequest in protobuf's JSON (of at most envoyMaxMessage
// bytes, as a gRPC call's) is decided by the Envoy service, as a
// ShouldRateLimit call, and answered with the RateLimitResponse in
// protobuf's JSON, 200 when OK and 429 when OVER_LIMIT. A body that is not
// one RateLimitRequest, or that the service refuses (InvalidArgument), is
// 400, one too large 413, and a request the service could not decide 503,
// each with a problem body; none of them spends anything. A body of more
// than envoy.MaxDescriptors descriptors, or of a descriptor of more than
// envoy.MaxEntries entries, is refused as the gRPC service refuses it,
// once counted and before protojson makes a message of any of them
// (checkEnvoyJSONBounds).
func (s *Server) handleEnvoyJSON(w http.ResponseWriter, r *http.Request, _ caller) {
	if s.envoy == nil {
		writeJSONProblem(w, http.StatusNotFound, "Not Found", "This server has no envoy section: Envoy's rate limit service, and its /json, are not served.")
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, envoyMaxMessage))
	if tooBig := (*http.MaxBytesError)(nil); errors.As(err, &tooBig) {
		writeJSONProblem(w, http.StatusRequestEntityTooLarge, "Content Too Large", fmt.Sprintf("The body is larger than %d bytes.", envoyMaxMessage))
		return
	} else if err != nil {
		writeJSONProblem(w, http.StatusBadRequest, "Bad Request", "The body could not be read: "+err.Error())
		return
	}
	start := time.Now()
	if b := checkEnvoyJSONBounds(body); b.beyond != nil {
		s.refuseEnvoyJSONBeyondBounds(w, b, start)
		return
	}
	var req rlsv3.RateLimitRequest
	if err := protojson.Unmarshal(body, &req); err != nil {
		writeJSONProblem(w, http.StatusBadRequest, "Bad Request", "The body is not a RateLimitRequest in protobuf's JSON: "+err.Error())
		return
	}
	resp, err := s.envoy.ShouldRateLimit(r.Context(), &req)
	if err != nil {
		st := status.Convert(err)
		if st.Code() == codes.InvalidArgument {
			writeJSONProblem(w, http.StatusBadRequest, "Bad Request", st.Message())
			return
		}
		w.Header().Set("Retry-After", "1")
		writeJSONProblem(w, http.StatusServiceUnavailable, "Service Unavailable", "The request was not decided: "+st.Message())
		return
	}
	out, err := protojson.Marshal(resp)
	if err != nil {
		writeJSONProblem(w, http.StatusInternalServerError, "Internal Server Error", "The response could not be written: "+err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(out)))
	if resp.GetOverallCode() == rlsv3.RateLimitResponse_OVER_LIMIT {
		w.WriteHeader(http.StatusTooManyRequests)
	}
	w.Write(out)
}

// refuseEnvoyJSONBeyondBounds answers a /json body beyond the service's
// bounds 400, and tells the service's observer of the refusal, as the
// service answers and observes a gRPC request the codec found beyond them:
// InvalidArgument, "invalid request: " and why.
func (s *Server) refuseEnvoyJSONBeyondBounds(w http.ResponseWriter, b envoyJSONBounds, start time.Time) {
	st := status.New(codes.InvalidArgument, "invalid request: "+b.beyond.Error())
	s.observeEnvoy(&envoy.Result{Domain: b.domain, Now: start}, time.Since(start), st.Err())
	writeJSONProblem(w, http.StatusBadRequest, "Bad Request", st.Message())
}
