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
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/httplimit"
)

// newProxy returns the handler admitted requests go to: a reverse proxy to
// cfg.Upstream, over TLS configured by tlsConfig when not nil, or the
// built-in demo upstream when there is none. The upstream gets the client's
// Host with cfg.PreserveHost, and learns of the client as id judges it
// (see forward). A request the upstream fails is logged to failures, its
// path cut to maxLoggedPath bytes. It has connections.write_timeout
// to start its answer (else 504), which may then stream for as long as it
// moves data (see streamWriter); connections switched to another protocol
// join switched. A request's body, once the proxy reads it, is bounded by
// connections.read_timeout between reads, not in all (see watchedBody),
// as nginx's client_body_timeout: a client-streaming call sends messages
// for as long as it lasts, a stalled body is cut after read_timeout. The answer carries mw's RateLimit fields alone: the upstream's
// fields of the same names are dropped (see ownFields). closeIdle closes
// the proxy's idle connections to the upstream, for a proxy replaced by a
// reload's (nil for the demo upstream).
func newProxy(cfg *config.Config, tlsConfig *tls.Config, failures *boundedWarnings, switched *switchedConns, mw limitsInFront) (h http.Handler, closeIdle func(), err error) {
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
	own := ownFields(mw)
	proxy := &httputil.ReverseProxy{
		Transport: transport,
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(u)
			if cfg.PreserveHost {
				pr.Out.Host = pr.In.Host
			}
			forward(pr, mw)
		},
		// An upstream may answer a body that broke off (its handler read an
		// early EOF); the client's failure decides the answer then too.
		ModifyResponse: func(resp *http.Response) error {
			if b := bodyOf(resp.Request); b != nil && b.failed() != nil {
				resp.Body.Close()
				return b.failed()
			}
			for _, name := range own {
				delete(resp.Header, name)
			}
			return nil
		},
		// The proxy's own lines (an answer that broke off mid-body) are
		// upstream failures, bounded and logged as the others.
		ErrorLog: failures.loggerAs("upstream failed", "upstream", u.Host),
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			// What the handler writes is sluice's answer, not the
			// upstream's: an allowed origin may read it (see markOwn).
			markOwn(w)
			if b := bodyOf(r); b != nil && b.failed() != nil {
				// The client's body failed, not the upstream: a stalled body
				// (silent for connections.stream_idle_timeout) or a broken
				// one. Checked first: the server cancels the request's
				// context then.
				status, detail := http.StatusBadRequest, "The request body could not be read whole."
				if errors.Is(b.failed(), os.ErrDeadlineExceeded) {
					status, detail = http.StatusRequestTimeout, "The request body stalled: no data arrived within the server's timeout."
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
		rc := http.NewResponseController(w)
		var body *watchedBody
		if r.Body != nil && r.Body != http.NoBody {
			body = &watchedBody{ReadCloser: r.Body, rc: rc, idle: conns.ReadTimeout}
			ctx = context.WithValue(ctx, watchedKey{}, body)
			defer body.stop()
		}
		r = r.WithContext(ctx)
		if body != nil {
			r.Body = body
		}
		sw := &streamWriter{ResponseWriter: w, rc: rc, idle: conns.StreamIdleTimeout,
			cancel: cancel, switched: switched, fields: w.Header().Clone()}
		defer sw.stop()
		proxy.ServeHTTP(sw, r)
	}), transport.CloseIdleConnections, nil
}

// watchedBody is a request body the proxy reads. It keeps the error that
// ended the body early, so that the proxy can tell a client's failure from
// the upstream's. The listener's read_timeout bounds the request's headers
// and the bodies sluice reads itself; once the proxy reads, a body streams
// as long as it moves data: each read has idle (read_timeout, as nginx's
// client_body_timeout) to bring data, no bound with idle 0 — a stalled
// body is cut as soon as before, a moving one is not. A body read
// whole is bounded no more: on HTTP/1.1 the server then reads on, to learn
// whether the client left, for as long as the answer streams. The
// transport reads the body on a goroutine of its own, which may outlive
// the handler: stop, before the handler returns, ends the extensions (the
// connection may be serving another request by then).
type watchedBody struct {
	io.ReadCloser
	rc    *http.ResponseController
	idle  time.Duration
	err   atomic.Pointer[error]
	mu    sync.Mutex
	ended bool // the body ended, or the handler returned: no more extensions
}

func (b *watchedBody) Read(p []byte) (int, error) {
	b.extend()
	n, err := b.ReadCloser.Read(p)
	if err != nil {
		if err != io.EOF {
			b.err.Store(&err)
		}
		b.end(err == io.EOF)
	}
	return n, err
}

// extend gives the body idle more to bring its next byte (lifts the bound
// with idle 0), until it ends.
func (b *watchedBody) extend() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.ended {
		return
	}
	var deadline time.Time
	if b.idle > 0 {
		deadline = time.Now().Add(b.idle)
	}
	b.rc.SetReadDeadline(deadline)
}

// end ends the extensions; a body read whole lifts its bound.
func (b *watchedBody) end(whole bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.ended {
		return
	}
	b.ended = true
	if whole {
		b.rc.SetReadDeadline(time.Time{})
	}
}

// stop ends the extensions when the handler returns.
func (b *watchedBody) stop() { b.end(false) }

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

// limitsInFront is the middleware in front of the proxy
// (httplimit.Middleware): who a request's client is (see forward), and the
// fields it writes on the answers it admits.
type limitsInFront interface {
	clientJudge
	ResponseHeaders() []string
	Counts() map[string]string
}

// ownFields are the answer's fields that mw writes on an admitted request,
// the RateLimit fields of its modes: an upstream with a limiter of its own
// may send fields of the same names, which the proxy drops, so that the
// client reads one value of each, sluice's (Kong's plugins do the same). A
// field a limit reads what the upstream used from (count: "header:<Name>")
// is the upstream's to send and stays; so does Retry-After, which mw writes
// on refusals only.
func ownFields(mw limitsInFront) []string {
	var counted []string
	for _, count := range mw.Counts() {
		if name, ok := strings.CutPrefix(count, httplimit.CountHeader); ok {
			counted = append(counted, http.CanonicalHeaderKey(name))
		}
	}
	var own []string
	for _, name := range mw.ResponseHeaders() {
		name = http.CanonicalHeaderKey(name)
		if name != "Retry-After" && !slices.Contains(counted, name) {
			own = append(own, name)
		}
	}
	return own
}

// markOwn marks the answer w is about to write as sluice's own, not the
// upstream's, for CORS (statusWriter.own): the proxy's problem answers
// (502, 504, and 400 or 408 for a body that failed). The monitor still
// counts their status as the upstream's outcome.
func markOwn(w http.ResponseWriter) {
	for w != nil {
		if sw, ok := w.(*statusWriter); ok {
			sw.own = true
			return
		}
		u, ok := w.(interface{ Unwrap() http.ResponseWriter })
		if !ok {
			return
		}
		w = u.Unwrap()
	}
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
