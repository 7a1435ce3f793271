package server

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"strconv"
	"sync/atomic"

	"github.com/sluice-dev/sluice/config"
)

// newProxy returns the handler admitted requests go to: a reverse proxy to
// cfg.Upstream, over TLS configured by tlsConfig when not nil, or the
// built-in demo upstream when there is none. The upstream gets the client's
// Host with cfg.PreserveHost, and learns of the client as id judges it
// (see forward). A request the upstream fails is logged to failures, its
// path cut to maxLoggedPath bytes. It has connections.write_timeout
// to start its answer (else 504), which may then stream for as long as it
// moves data (see streamWriter); connections switched to another protocol
// join switched. closeIdle closes the proxy's idle connections to the
// upstream, for a proxy replaced by a reload's (nil for the demo upstream).
func newProxy(cfg *config.Config, tlsConfig *tls.Config, failures *boundedWarnings, switched *switchedConns, id clientJudge) (h http.Handler, closeIdle func(), err error) {
	upstream, conns := cfg.Upstream, cfg.Connections
	if upstream == "" {
		return demoUpstream(), nil, nil
	}
	u, err := url.Parse(upstream)
	if err != nil {
		return nil, nil, fmt.Errorf("upstream: %w", err)
	}
	// The default Transport keeps two idle connections per host: under load
	// most requests would dial the upstream anew.
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.MaxIdleConns, transport.MaxIdleConnsPerHost = 1024, 256
	transport.ResponseHeaderTimeout = conns.WriteTimeout
	if u.Scheme == "h2c" { // HTTP/2 without TLS, for every request (a gRPC server)
		u.Scheme = "http"
		transport.Protocols = new(http.Protocols)
		transport.Protocols.SetUnencryptedHTTP2(true)
	}
	if tlsConfig != nil {
		transport.TLSClientConfig = tlsConfig
	}
	proxy := &httputil.ReverseProxy{
		Transport: transport,
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(u)
			if cfg.PreserveHost {
				pr.Out.Host = pr.In.Host
			}
			forward(pr, id)
		},
		// An upstream may answer a body that broke off (its handler read an
		// early EOF); the client's failure decides the answer then too.
		ModifyResponse: func(resp *http.Response) error {
			if b := bodyOf(resp.Request); b != nil && b.failed() != nil {
				resp.Body.Close()
				return b.failed()
			}
			return nil
		},
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			if b := bodyOf(r); b != nil && b.failed() != nil {
				// The client's body failed, not the upstream: a stalled body
				// (the listener's read_timeout) or a broken one. Checked
				// first: the server cancels the request's context then.
				status, detail := http.StatusBadRequest, "The request body could not be read whole."
				if errors.Is(b.failed(), os.ErrDeadlineExceeded) {
					status, detail = http.StatusRequestTimeout, "The request body did not arrive within the server's read timeout."
				}
				w.Header().Set("Connection", "close")
				writeJSONProblem(w, status, http.StatusText(status), detail)
				return
			}
			if errors.Is(err, r.Context().Err()) {
				return // the client went away
			}
			failures.warn("upstream failed", "upstream", u.Host, "path", cutText(r.URL.Path, maxLoggedPath), "err", err)
			if ne, ok := errors.AsType[net.Error](err); ok && ne.Timeout() {
				writeJSONProblem(w, http.StatusGatewayTimeout, "Gateway Timeout",
					"The upstream service did not answer in time; the request was admitted and counted. Retry later.")
				return
			}
			writeJSONProblem(w, http.StatusBadGateway, "Bad Gateway",
				"The upstream service did not answer; the request was admitted and counted. Retry later.")
		},
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithCancel(r.Context())
		defer cancel()
		var body *watchedBody
		if r.Body != nil && r.Body != http.NoBody {
			body = &watchedBody{ReadCloser: r.Body}
			ctx = context.WithValue(ctx, watchedKey{}, body)
		}
		r = r.WithContext(ctx)
		if body != nil {
			r.Body = body
		}
		sw := &streamWriter{ResponseWriter: w, rc: http.NewResponseController(w), idle: conns.StreamIdleTimeout,
			cancel: cancel, switched: switched, fields: w.Header().Clone()}
		defer sw.stop()
		proxy.ServeHTTP(sw, r)
	}), transport.CloseIdleConnections, nil
}

// watchedBody keeps the error that ended a request body early, so that the
// proxy can tell a client's failure from the upstream's. The transport reads
// it on a goroutine of its own.
type watchedBody struct {
	io.ReadCloser
	err atomic.Pointer[error]
}

func (b *watchedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && err != io.EOF {
		b.err.Store(&err)
	}
	return n, err
}

// watchedKey is the context key of a request's watchedBody: the proxy
// hands the error handler and ModifyResponse its outbound copy, whose body
// is wrapped again.
type watchedKey struct{}

func bodyOf(r *http.Request) *watchedBody {
	b, _ := r.Context().Value(watchedKey{}).(*watchedBody)
	return b
}

// failed is the error that ended the body early, or nil.
func (b *watchedBody) failed() error {
	if e := b.err.Load(); e != nil {
		return *e
	}
	return nil
}

// demoUpstream answers every request with a small JSON document, so that
// `sluice serve` without an upstream has something to protect.
func demoUpstream() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]string{
			"upstream": "sluice demo upstream",
			"method":   r.Method,
			"path":     r.URL.Path,
			"message":  "this request was admitted by sluice; see the RateLimit headers",
		})
	})
}

// problem is an RFC 9457 body for sluice's own errors.
type problem struct {
	Type   string `json:"type"`
	Title  string `json:"title"`
	Status int    `json:"status"`
	Detail string `json:"detail"`
}

func writeJSONProblem(w http.ResponseWriter, status int, title, detail string) {
	body, _ := json.Marshal(problem{Type: "about:blank", Title: title, Status: status, Detail: detail})
	w.Header().Set("Content-Type", "application/problem+json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)+1))
	w.WriteHeader(status)
	w.Write(append(body, '\n'))
}
