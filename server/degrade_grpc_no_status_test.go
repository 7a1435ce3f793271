package server_test

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// errorRateConfig is grpcConfig's, with room for every call, and a level
// entered at an error rate of 0.5 over 5 answers.
func errorRateConfig(upstream string) string {
	return "upstream: " + upstream + "\n" + strings.Replace(grpcConfig, "quantity: 3,", "quantity: 100000,", 1) + `
degradation:
  min_answers: 5
  interval: 1m
  min_dwell: 1m
  levels:
    elevated: {enter: {error_rate: 0.5}, leave: {error_rate: 0.1}}
`
}

// A request labelled gRPC by its Content-Type alone (a GET with
// Content-Type: application/grpc-web, or application/grpc) to a plain HTTP
// upstream gets a whole 200 JSON answer, which carries no grpc-status
// because it is no gRPC answer: no failure, or any client could raise the
// level for everyone with a label. Only a gRPC answer the upstream broke
// off before its status is one (see
// TestAGRPCAnswerBrokenOffBeforeItsStatusIsAnUpstreamFailure): a gRPC-Web
// answer that ended whole without its trailer frame is none either.
func TestAnAnswerWithoutGRPCStatusIsNoFailureUnlessBrokenOff(t *testing.T) {
	for name, c := range map[string]struct{ label, answer string }{
		"JSON to application/grpc-web":           {"application/grpc-web", "application/json"},
		"JSON to application/grpc":               {"application/grpc", "application/json"},
		"gRPC-Web ended whole, no trailer frame": {"application/grpc-web", "application/grpc-web+proto"},
	} {
		t.Run(name, func(t *testing.T) {
			up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", c.answer)
				io.WriteString(w, `{"ok":true}`)
			}))
			t.Cleanup(up.Close)
			srv, _ := loadServer(t, t.TempDir(), errorRateConfig(up.URL))
			public := serveOn(t, srv).public
			srv.SampleNow()
			hc := &http.Client{Timeout: 5 * time.Second}
			for range 20 {
				req, _ := http.NewRequest("GET", "http://"+public+"/api/items", nil)
				req.Header.Set("Content-Type", c.label)
				resp, err := hc.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				b, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if err != nil || resp.StatusCode != 200 || string(b) != `{"ok":true}` {
					t.Fatalf("premise: status %d body %q err %v; want the upstream's whole 200", resp.StatusCode, b, err)
				}
			}
			level := srv.SampleNow()
			if sig := srv.Degradation().Signals; sig.Failures != 0 || level != 0 {
				t.Errorf("20 whole %s answers to requests labelled %s: answers %d, failures %d, error rate %v, level %v; want no failure, level 0",
					c.answer, c.label, sig.Answers, sig.Failures, sig.ErrorRate, level)
			}
		})
	}
}

// shortBodyGRPCCall sends one gRPC call over h2c to public, as a raw
// HTTP/2 client: short, it declares content-length 100 and, once the
// answer's headers came, ends its stream after 5 bytes (malformed: RFC
// 9113 §8.1.1); else it declares no length and sends the 5 bytes whole.
// It stays on the stream, neither resetting it nor leaving, until the
// stream ends, and returns whether the answer's headers came.
func shortBodyGRPCCall(t *testing.T, public string, short bool) bool {
	t.Helper()
	c, err := net.DialTimeout("tcp", public, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	io.WriteString(c, http2.ClientPreface)
	fr := http2.NewFramer(c, c)
	fr.WriteSettings()
	var hb bytes.Buffer
	enc := hpack.NewEncoder(&hb)
	for _, f := range [][2]string{{":method", "POST"}, {":scheme", "http"}, {":authority", "x"},
		{":path", "/chat.v1.Chat/Talk"}, {"content-type", "application/grpc"}, {"te", "trailers"}} {
		enc.WriteField(hpack.HeaderField{Name: f[0], Value: f[1]})
	}
	if short {
		enc.WriteField(hpack.HeaderField{Name: "content-length", Value: "100"})
	}
	fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: hb.Bytes(), EndHeaders: true})
	headers := false
	for {
		f, err := fr.ReadFrame()
		if err != nil {
			return headers
		}
		switch f := f.(type) {
		case *http2.SettingsFrame:
			if !f.IsAck() {
				fr.WriteSettingsAck()
			}
		case *http2.HeadersFrame:
			if !headers {
				headers = true
				fr.WriteData(1, true, []byte{0, 0, 0, 0, 0})
			}
			if f.StreamEnded() {
				return headers
			}
		case *http2.DataFrame:
			if f.StreamEnded() {
				return headers
			}
		case *http2.RSTStreamFrame, *http2.GoAwayFrame:
			return headers
		}
	}
}

// A gRPC call whose answer starts before its request ends (a stream), and
// whose client ends its request body short of the content-length it
// declared (malformed, RFC 9113 §8.1.1), is broken off by the proxy
// before its status: the body's read failed, which Go's server reports
// without resetting the stream, so the request's context is not done
// while the client waits on. A broken request body is the client's doing,
// as the proxy's ErrorHandler judges it: no failure of the upstream, which
// answers every well-formed call OK; else one client within its limits
// would drive the error rate to 1.
func TestAClientsShortGRPCBodyIsNoUpstreamFailure(t *testing.T) {
	addr := h2cUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/grpc")
		w.WriteHeader(http.StatusOK)
		http.NewResponseController(w).Flush() // a stream's answer starts at once
		if _, err := io.Copy(io.Discard, r.Body); err != nil {
			return
		}
		w.Header().Set(http.TrailerPrefix+"Grpc-Status", "0")
		w.Write([]byte{0, 0, 0, 0, 0})
	})
	srv, _ := loadServer(t, t.TempDir(), errorRateConfig(addr))
	public := serveOn(t, srv).public
	srv.SampleNow()
	for range 5 {
		if !shortBodyGRPCCall(t, public, false) {
			t.Fatal("premise: a well-formed call got no answer")
		}
	}
	time.Sleep(50 * time.Millisecond)
	srv.SampleNow()
	if sig := srv.Degradation().Signals; sig.Failures != 0 || sig.Answers != 5 {
		t.Fatalf("premise: 5 well-formed calls gave answers %d, failures %d; want 5 answers, no failure", sig.Answers, sig.Failures)
	}
	for range 20 {
		if !shortBodyGRPCCall(t, public, true) {
			t.Fatal("premise: the answer did not start before the body ended")
		}
	}
	time.Sleep(100 * time.Millisecond)
	level := srv.SampleNow()
	if sig := srv.Degradation().Signals; sig.Failures != 0 || level != 0 {
		t.Errorf("20 calls whose clients ended their bodies short of their content-length: answers %d, failures %d, error rate %v, level %v; want no failure, level 0",
			sig.Answers, sig.Failures, sig.ErrorRate, level)
	}
}
