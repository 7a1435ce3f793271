package server_test

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// unaryGRPCCall sends one unary gRPC call (no deadline) over h2c to
// public and returns what the caller reads: the grpc-status, or the
// transport's error.
func unaryGRPCCall(t *testing.T, hc *http.Client, public string) string {
	req, _ := http.NewRequest("POST", "http://"+public+"/orders.v1.Orders/Get", bytes.NewReader([]byte{0, 0, 0, 0, 0}))
	req.Header.Set("Content-Type", "application/grpc")
	req.Header.Set("Te", "trailers")
	resp, err := hc.Do(req)
	if err != nil {
		return "error: " + err.Error()
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err != nil {
		return "error: " + err.Error()
	}
	if s := resp.Trailer.Get("Grpc-Status"); s != "" {
		return s
	}
	if s := resp.Header.Get("Grpc-Status"); s != "" {
		return s
	}
	return "no status"
}

// A gRPC upstream whose calls break off after their answer started (the
// service's process dies, or its handler's stream is reset: RST_STREAM
// INTERNAL_ERROR, no trailers) fails every call: a gRPC client reads
// INTERNAL or UNAVAILABLE, never OK. docs/decisions.md says the
// degradation error rate judges "a gRPC answer by its grpc-status, not the
// 200 every gRPC answer has", and httplimit's own judgment of an answer
// (answerStatus) takes "a gRPC answer that says no valid status" for a
// failure (500). So does the monitor: an upstream failing every call so
// reads as an error rate of 1, not as the 200s its headers said. The calls
// here have no deadline and their callers wait for the end: nothing of
// the caller's ended them.
func TestAGRPCAnswerBrokenOffBeforeItsStatusIsAnUpstreamFailure(t *testing.T) {
	addr := h2cUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/grpc")
		w.WriteHeader(http.StatusOK)
		w.Write([]byte{0, 0, 0, 0, 0}) // an empty message
		http.NewResponseController(w).Flush()
		time.Sleep(5 * time.Millisecond)
		panic(http.ErrAbortHandler) // the stream is reset: no trailers, no grpc-status
	})
	srv, _ := loadServer(t, t.TempDir(), "upstream: "+addr+"\n"+strings.Replace(grpcConfig, "quantity: 3,", "quantity: 100000,", 1)+`
degradation:
  min_answers: 5
  interval: 1m
  min_dwell: 1m
  levels:
    elevated: {enter: {error_rate: 0.5}, leave: {error_rate: 0.1}}
`)
	public := serveOn(t, srv).public
	srv.SampleNow()

	tr := &http.Transport{Protocols: new(http.Protocols)}
	tr.Protocols.SetUnencryptedHTTP2(true)
	t.Cleanup(tr.CloseIdleConnections)
	hc := &http.Client{Transport: tr, Timeout: 5 * time.Second}
	okCalls, seen := 0, ""
	for range 20 {
		c := unaryGRPCCall(t, hc, public)
		if c == "0" {
			okCalls++
		}
		seen = c
	}
	if okCalls != 0 {
		t.Fatalf("%d of 20 calls read OK; the premise (every call fails for its caller) failed", okCalls)
	}
	level := srv.SampleNow()
	sig := srv.Degradation().Signals
	if sig.Failures < 20 || level == 0 {
		t.Errorf("20 calls, each broken off by the upstream after its answer started (no grpc-status; the caller reads a failure): "+
			"answers %d, failures %d, error rate %v, level %v; want 20 failures, an error rate of 1 and the level raised (a caller read: %s)",
			sig.Answers, sig.Failures, sig.ErrorRate, level, seen)
	}
}
