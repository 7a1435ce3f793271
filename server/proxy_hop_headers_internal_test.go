package server

import (
	"maps"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"reflect"
	"testing"
)

// roundTripFunc is an http.RoundTripper of a function.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// asForwarded leaves the header httputil.ReverseProxy forwards: the
// header it gives the transport is the same with or without asForwarded
// before it, and asForwarded's is that header.
func TestAsForwardedLeavesWhatTheProxySends(t *testing.T) {
	var sent http.Header
	u, _ := url.Parse("http://upstream.example")
	proxy := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) { pr.SetURL(u) },
		Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
			sent = r.Header.Clone()
			delete(sent, "User-Agent") // the proxy's, when the request has none
			return &http.Response{StatusCode: 200, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
		}),
	}
	through := func(h http.Header) http.Header {
		r := httptest.NewRequest("GET", "/", nil)
		r.Header = h
		proxy.ServeHTTP(httptest.NewRecorder(), r)
		return sent
	}
	for _, h := range []http.Header{
		{"Connection": {"close, X-Beta"}, "X-Beta": {"1"}, "X-Other": {"2"}},
		{"Connection": {"keep-alive", " x-beta ,,close"}, "X-Beta": {"1"}, "Keep-Alive": {"timeout=5"}, "Close": {"x"}},
		{"Connection": {"X-A-Name-Longer-Than-Sixty-Four-Bytes-Which-Is-Still-A-Field-Name"}, "X-A-Name-Longer-Than-Sixty-Four-Bytes-Which-Is-Still-A-Field-Name": {"1"}},
		{"Connection": {"x beta"}, "X beta": {"1"}},
		{"Proxy-Connection": {"keep-alive"}, "Proxy-Authorization": {"Basic YTpi"}, "Trailer": {"X-Sum"}, "Te": {"gzip"}},
		{"Te": {"gzip", "trailers;q=1"}, "Connection": {"TE"}},
		{"Te": {"trailers"}, "Content-Type": {"application/grpc"}},
		{"Connection": {"keep-alive, Upgrade"}, "Upgrade": {"websocket", "other"}, "Sec-Websocket-Key": {"k"}},
		{"Upgrade": {"websocket"}},
		{"Connection": {"Upgrade"}, "Upgrade": {"h2c"}, "Http2-Settings": {"x"}},
	} {
		want := through(maps.Clone(h))
		judged := maps.Clone(h)
		asForwarded(judged)
		if !reflect.DeepEqual(judged, want) {
			t.Errorf("%v: judged as %v, want %v, as the proxy sends it", h, judged, want)
		}
		if got := through(judged); !reflect.DeepEqual(got, want) {
			t.Errorf("%v: sent as %v after asForwarded, %v without", h, got, want)
		}
	}
}

// A request of the usual hop-by-hop fields costs asForwarded no
// allocation: "Connection: keep-alive" as browsers send it, a gRPC call's
// "te: trailers", a Connection naming a header it does not have.
func TestAsForwardedAllocatesNothingForUsualRequests(t *testing.T) {
	for _, h := range []http.Header{
		{"Connection": {"keep-alive"}, "Accept": {"*/*"}},
		{"Te": {"trailers"}, "Content-Type": {"application/grpc"}},
		{"Connection": {"close, x-absent"}},
		{"Connection": {"keep-alive"}, "Keep-Alive": {"timeout=5"}},
	} {
		sent := maps.Clone(h)
		if n := testing.AllocsPerRun(100, func() {
			asForwarded(h)
			for k, v := range sent {
				h[k] = v
			}
		}); n != 0 {
			t.Errorf("%v: %v allocations, want 0", h, n)
		}
	}
}
