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

	"github.com/sluice-dev/sluice/degrade"
	"github.com/sluice-dev/sluice/server"
)

// grpcWebAnswer is a gRPC-Web service's answer to any call: one empty
// message, then the status in the body's trailer frame (PROTOCOL-WEB.md):
// 0 (OK), or the code the last element of the path names ("/pkg.S/M/5"
// answers NOT_FOUND). A request of application/grpc-web-text is answered
// in base64, a frame per chunk.
func grpcWebAnswer(w http.ResponseWriter, r *http.Request) {
	code := "0"
	if i := strings.LastIndexByte(r.URL.Path, '/'); i >= 0 && r.URL.Path[i+1:] != "" && r.URL.Path[i+1] <= '9' {
		code = r.URL.Path[i+1:]
	}
	trailer := "grpc-status: " + code + "\r\ngrpc-message: \r\n"
	frames := [][]byte{{0, 0, 0, 0, 0}, append([]byte{0x80, 0, 0, 0, byte(len(trailer))}, trailer...)}
	w.Header().Set("Access-Control-Allow-Origin", "https://app.example")
	if strings.HasPrefix(r.Header.Get("Content-Type"), "application/grpc-web-text") {
		w.Header().Set("Content-Type", "application/grpc-web-text+proto")
		for _, f := range frames {
			w.Write([]byte(base64.StdEncoding.EncodeToString(f)))
			w.(http.Flusher).Flush()
		}
		return
	}
	w.Header().Set("Content-Type", "application/grpc-web+proto")
	w.Write(bytes.Join(frames, nil))
}

// TestGRPCWebRefusalIsATrailersOnlyAnswer: a gRPC-Web client (a browser's
// grpc-web or Connect library, over HTTP/1.1) reads a refusal from a
// trailers-only answer — HTTP 200, its own Content-Type, grpc-status 8
// (RESOURCE_EXHAUSTED) with RetryInfo and QuotaFailure in
// grpc-status-details-bin, no body — which a page of an allowed origin may
// read (the grpc-* headers exposed). The service's own answers pass as
// they are; a plain HTTP client is still refused with a 429 problem.
func TestGRPCWebRefusalIsATrailersOnlyAnswer(t *testing.T) {
	_, public := grpcWebBehindSluice(t, strings.Replace(grpcConfig, "response: {", `response: {cors: {origins: ["https://app.example"]}, `, 1))

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

// grpcWebBehindSluice runs grpcWebAnswer's service behind sluice serve
// (cfg after its upstream line), returning sluice's server and public
// address.
func grpcWebBehindSluice(t *testing.T, cfg string) (*server.Server, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	up := &http.Server{Handler: http.HandlerFunc(grpcWebAnswer), ReadHeaderTimeout: time.Second}
	go up.Serve(ln)
	t.Cleanup(func() { up.Close() })
	srv, _ := loadServer(t, t.TempDir(), "upstream: http://"+ln.Addr().String()+"\n"+cfg)
	return srv, serveOn(t, srv).public
}

// grpcWebCall calls method through public as a gRPC-Web client does,
// returning the status at the end of the answer's body, or in its header
// for a trailers-only answer.
func grpcWebCall(t *testing.T, public, method, contentType string) string {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, "http://"+public+method, bytes.NewReader([]byte{0, 0, 0, 0, 0}))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", contentType)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body := readAll(t, resp)
	if s := resp.Header.Get("Grpc-Status"); s != "" {
		return s
	}
	if strings.HasPrefix(contentType, "application/grpc-web-text") {
		var dec []byte
		for len(body) >= 4 { // chunks padded one by one
			n := strings.IndexByte(body, '=')
			if n < 0 {
				n = len(body)
			}
			end := min(len(body), (n+3)/4*4)
			b, err := base64.StdEncoding.DecodeString(body[:end])
			if err != nil {
				t.Fatalf("text answer %q: %v", body, err)
			}
			dec, body = append(dec, b...), body[end:]
		}
		body = string(dec)
	}
	_, trailer, ok := strings.Cut(body, "grpc-status: ")
	if !ok {
		t.Fatalf("no status in the answer %q", body)
	}
	code, _, _ := strings.Cut(trailer, "\r")
	return code
}

// TestProxyCountsGRPCWebCallsByTheirStatus: a limit that counts only
// failures reads a gRPC-Web call's status at the end of its body (binary or
// base64 text), not the HTTP 200 every answer has: calls that succeed are
// refunded, NOT_FOUND ones counted, and the third of those refused.
func TestProxyCountsGRPCWebCallsByTheirStatus(t *testing.T) {
	_, public := grpcWebBehindSluice(t, strings.Replace(grpcConfig, "algorithm: gcra, quantity: 3, window: 1m}]",
		"algorithm: sliding-window-log, quantity: 3, window: 1m, count: failures}]", 1))
	for _, ct := range []string{"application/grpc-web+proto", "application/grpc-web-text"} {
		for i := range 3 {
			if got := grpcWebCall(t, public, "/pkg.S/Get", ct); got != "0" {
				t.Fatalf("%s success %d: status %s", ct, i, got)
			}
		}
	}
	for i, want := range []string{"5", "5", "5", "8"} {
		ct := []string{"application/grpc-web+proto", "application/grpc-web-text"}[i%2]
		if got := grpcWebCall(t, public, "/pkg.S/Get/5", ct); got != want {
			t.Fatalf("failing call %d (%s): status %s, want %s", i, ct, got, want)
		}
	}
}

// TestGRPCWebFailuresRaiseTheErrorRate: a gRPC-Web service failing its
// calls (UNAVAILABLE, at the end of bodies behind HTTP 200s) raises the
// degradation level that enters at an error rate of 0.5.
func TestGRPCWebFailuresRaiseTheErrorRate(t *testing.T) {
	srv, public := grpcWebBehindSluice(t, strings.Replace(grpcConfig, "quantity: 3,", "quantity: 1000,", 1)+`
degradation:
  min_answers: 1
  interval: 25ms
  levels:
    elevated: {enter: {error_rate: 0.5}, leave: {error_rate: 0.1}}
`)
	deadline := time.Now().Add(5 * time.Second)
	for srv.Degradation().Level == degrade.Normal && time.Now().Before(deadline) {
		if got := grpcWebCall(t, public, "/orders.v1.Orders/Get/14", "application/grpc-web+proto"); got != "14" {
			t.Fatalf("a call to the failing service: status %s", got)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if l := srv.Degradation().Level; l != degrade.Elevated {
		t.Fatalf("level %v after 5s of failing gRPC-Web calls, want elevated", l)
	}
}
