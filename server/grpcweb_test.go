package server_test

import (
	"bytes"
	"encoding/base64"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	grpcstatus "google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	spb "google.golang.org/genproto/googleapis/rpc/status"
)

// grpcWebAnswer is a gRPC-Web service's answer to any call: one empty
// message, then the status in the body's trailer frame (PROTOCOL-WEB.md).
func grpcWebAnswer(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/grpc-web+proto")
	w.Header().Set("Access-Control-Allow-Origin", "https://app.example")
	trailer := "grpc-status: 0\r\ngrpc-message: \r\n"
	var b bytes.Buffer
	b.Write([]byte{0, 0, 0, 0, 0})
	b.Write([]byte{0x80, 0, 0, 0, byte(len(trailer))})
	b.WriteString(trailer)
	w.Write(b.Bytes())
}

// TestGRPCWebRefusalIsATrailersOnlyAnswer: a gRPC-Web client (a browser's
// grpc-web or Connect library, over HTTP/1.1) reads a refusal from a
// trailers-only answer — HTTP 200, its own Content-Type, grpc-status 8
// (RESOURCE_EXHAUSTED) with RetryInfo and QuotaFailure in
// grpc-status-details-bin, no body — which a page of an allowed origin may
// read (the grpc-* headers exposed). The service's own answers pass as
// they are; a plain HTTP client is still refused with a 429 problem.
func TestGRPCWebRefusalIsATrailersOnlyAnswer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	up := &http.Server{Handler: http.HandlerFunc(grpcWebAnswer), ReadHeaderTimeout: time.Second}
	go up.Serve(ln)
	t.Cleanup(func() { up.Close() })
	cfg := strings.Replace(grpcConfig, "response: {", `response: {cors: {origins: ["https://app.example"]}, `, 1)
	srv, _ := loadServer(t, t.TempDir(), "upstream: http://"+ln.Addr().String()+"\n"+cfg)
	public := serveOn(t, srv).public

	call := func(contentType string) *http.Response {
		t.Helper()
		req, err := http.NewRequest(http.MethodPost, "http://"+public+"/grpc.health.v1.Health/Check", bytes.NewReader([]byte{0, 0, 0, 0, 0}))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", contentType)
		req.Header.Set("X-Grpc-Web", "1")
		req.Header.Set("Origin", "https://app.example")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		return resp
	}
	for i := range 3 {
		resp := call("application/grpc-web+proto")
		body := readAll(t, resp)
		if resp.StatusCode != 200 || resp.Header.Get("Grpc-Status") != "" || !strings.Contains(body, "grpc-status: 0") {
			t.Fatalf("call %d: %d, grpc-status header %q, body %q; want the service's answer as it is", i+1, resp.StatusCode, resp.Header.Get("Grpc-Status"), body)
		}
	}
	for _, ct := range []string{"application/grpc-web+proto", "application/grpc-web-text", "application/grpc-web"} {
		resp := call(ct)
		body := readAll(t, resp)
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != ct || body != "" {
			t.Fatalf("%s refused: %d %q, body %q; want 200, %s, no body", ct, resp.StatusCode, resp.Header.Get("Content-Type"), body, ct)
		}
		if got := resp.Header.Get("Grpc-Status"); got != "8" {
			t.Fatalf("%s refused: grpc-status %q, want 8 (RESOURCE_EXHAUSTED)", ct, got)
		}
		raw, err := base64.RawStdEncoding.DecodeString(resp.Header.Get("Grpc-Status-Details-Bin"))
		if err != nil {
			t.Fatalf("grpc-status-details-bin: %v", err)
		}
		var sp spb.Status
		if err := proto.Unmarshal(raw, &sp); err != nil {
			t.Fatal(err)
		}
		st := grpcstatus.FromProto(&sp)
		retry, qf, _ := detailsOf(st)
		if st.Code() != codes.ResourceExhausted || retry == nil || retry.RetryDelay.AsDuration() < time.Second ||
			qf == nil || len(qf.Violations) != 1 || qf.Violations[0].QuotaId != "per-minute" {
			t.Fatalf("%s refused: %v, details %v", ct, st, st.Details())
		}
		if resp.Header.Get("Access-Control-Allow-Origin") != "https://app.example" ||
			!strings.Contains(resp.Header.Get("Access-Control-Expose-Headers"), "Grpc-Status-Details-Bin") {
			t.Fatalf("%s refused: CORS %q, exposed %q; the page cannot read the status", ct,
				resp.Header.Get("Access-Control-Allow-Origin"), resp.Header.Get("Access-Control-Expose-Headers"))
		}
	}
	resp := call("application/json")
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Content-Type") != "application/problem+json" {
		t.Fatalf("a plain HTTP call refused: %d %q, want 429 application/problem+json", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
}
