package server

import (
	"context"
	"crypto/tls"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/http/httputil"
	"net/textproto"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/net/http/httpguts"

	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/degrade"
	"github.com/sluice-dev/sluice/httplimit"
)

// newProxy returns the handler admitted requests go to: a reverse proxy to
// cfg.Upstream, over TLS configured by tlsConfig when not nil, or the
// built-in demo upstream when there is none. The upstream gets the client's
// Host with cfg.PreserveHost, and learns of the client as id judges it (see
// forward). A request the upstream fails is logged to failures, its path cut
// to maxLoggedPath bytes and the error to maxLoggedLine (it may quote the
// client's headers); one asking to switch to a protocol whose name is not
// printable ASCII, which the proxy refuses unsent, is the client's mistake:
// a 400, neither logged nor counted by the degradation monitor (markUnsent),
// as is one whose header list is larger than an HTTP/2 upstream advertised
// it accepts, which net/http's transport refuses unsent: a 431. A request
// switching protocols goes to an https upstream over HTTP/1.1, or over
// HTTP/2 without its Connection and Upgrade fields to one that does not
// speak HTTP/1.1 (see upgradesOverHTTP1), and to an h2c one without them,
// which HTTP/2 cannot carry: the upstream answers it as a request asking
// for no switch. It has connections.write_timeout to start its answer
// (else 504; counted from the request written to it whole, see answerWait),
// which may then stream for as long as it moves data (see streamWriter);
// connections switched to another protocol join switched. A request's body,
// once the proxy reads it, is bounded by connections.read_timeout between
// reads, not in all (see watchedBody), as nginx's client_body_timeout: a
// client-streaming call sends messages for as long as it lasts, a stalled
// body is cut after read_timeout. An answer mw set its RateLimit fields on
// carries them alone: the upstream's fields of the same names, in its header
// or its trailers, are dropped (see ownFields, streamWriter.dropOwn); a gRPC
// call's carries them in its trailers too, as a grpclimit.Server's does
// (see streamWriter.endTrailers).
// closeIdle closes the proxy's idle connections to the upstream, for a proxy
// replaced by a reload's (nil for the demo upstream).
func newProxy(cfg *config.Config, tlsConfig *tls.Config, failures *boundedWarnings, switched *switchedConns, mw limitsInFront) (h http.Handler, closeIdle func(), err error) {
	upstream, conns := cfg.Upstream, cfg.Connections
	if upstream == "" {
		return demoUpstream(), nil, nil
	}
	u, err := url.Parse(upstream)
	if err != nil {
		return nil, nil, fmt.Errorf("upstream: %w", err)
	}
	newTransport := func() *http.Transport {
		// The default Transport keeps two idle connections per host: under
		// load most requests would dial the upstream anew.
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.MaxIdleConns, t.MaxIdleConnsPerHost = 1024, 256
		t.ResponseHeaderTimeout = conns.WriteTimeout
		return t
	}
	transport := newTransport()
	var rt http.RoundTripper = transport
	closeIdle = transport.CloseIdleConnections
	h2c := u.Scheme == "h2c"
	// Whether requests may go to the upstream over HTTP/2: always to an
	// h2c one, by ALPN to an https one.
	h2 := h2c || u.Scheme == "https"
	if h2c { // HTTP/2 without TLS, for every request (a gRPC server)
		u.Scheme = "http"
		transport.Protocols = new(http.Protocols)
		transport.Protocols.SetUnencryptedHTTP2(true)
	}
	if tlsConfig != nil {
		transport.TLSClientConfig = tlsConfig
	}
	if u.Scheme == "https" {
		// A request switching protocols goes over HTTP/1.1, whatever the
		// upstream's ALPN would pick, unless the upstream does not speak
		// it (see upgradesOverHTTP1).
		h1 := newTransport()
		h1.Protocols = new(http.Protocols)
		h1.Protocols.SetHTTP1(true)
		h1.TLSClientConfig = new(tls.Config)
		if tlsConfig != nil {
			h1.TLSClientConfig = tlsConfig.Clone()
		}
		h1.TLSClientConfig.NextProtos = []string{"http/1.1"}
		h1.DialTLSContext = http1Dialer{dial: h1.DialContext, tls: h1.TLSClientConfig,
			handshakeTimeout: h1.TLSHandshakeTimeout}.dialTLS
		rt = upgradesOverHTTP1{rt: transport, h1: h1}
		closeIdle = func() {
			transport.CloseIdleConnections()
			h1.CloseIdleConnections()
		}
	}
	own, read := ownFields(mw), mw.RequestHeaders()
	proxy := &httputil.ReverseProxy{
		Transport: rt,
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(u)
			if cfg.PreserveHost {
				pr.Out.Host = pr.In.Host
			}
			forward(pr, mw)
			dropOtherSpellings(pr.Out.Header, read)
			if h2c {
				// HTTP/2 carries no Upgrade (RFC 9113 §8.2.2): the upstream
				// gets the request as an HTTP/1.1 server ignoring the
				// Upgrade would answer it (RFC 9110 §7.8).
				pr.Out.Header.Del("Connection")
				pr.Out.Header.Del("Upgrade")
			}
		},
		// An upstream may answer a body that broke off (its handler read an
		// early EOF); the client's failure decides the answer then too.
		ModifyResponse: func(resp *http.Response) error {
			if b := bodyOf(resp.Request); b != nil && b.failed() != nil {
				resp.Body.Close()
				return b.failed()
			}
			sw := answerOf(resp.Request)
			sw.dropOwn(resp.Header, "")
			sw.dropOwn(resp.Trailer, "") // announced: not announced to the client
			if grpcTrailed(resp) {
				sw.trailed = resp
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
				if r.ProtoMajor == 1 {
					// The rest of the body is not read; on HTTP/2 the
					// stream ends alone, the connection's others go on.
					w.Header().Set("Connection", "close")
				}
				writeJSONProblem(w, status, http.StatusText(status), detail)
				return
			}
			if errors.Is(err, r.Context().Err()) {
				if errors.Is(err, context.DeadlineExceeded) && grpcReplyType(r) != "" {
					// The call's own deadline passed (its grpc-timeout,
					// which the limits set on its context): a gRPC
					// status, DEADLINE_EXCEEDED, the caller's outcome
					// (grpcAnswer), not a reset stream.
					writeJSONProblem(w, http.StatusGatewayTimeout, "Gateway Timeout",
						"The call's deadline passed before the upstream service answered.")
					return
				}
				abortAnswer(r) // the client went away
				return
			}
			if invalidUpgrade(r.Header) {
				// The proxy refused to switch to the protocol the client
				// named: the request's fault, not the upstream's, which was
				// not asked.
				markUnsent(w)
				writeJSONProblem(w, http.StatusBadRequest, "Bad Request",
					"The Upgrade header names a protocol that is not printable ASCII.")
				return
			}
			if h2 && headerListTooLarge(err) {
				// Larger than the HTTP/2 upstream accepts, which the
				// transport knows from its SETTINGS: refused unsent, the
				// client's mistake, as the upstream's own 431 would say.
				markUnsent(w)
				writeJSONProblem(w, http.StatusRequestHeaderFieldsTooLarge, "Request Header Fields Too Large",
					"The request's header fields are larger than the upstream service accepts.")
				return
			}
			// err may repeat what the client sent (its Upgrade header, as
			// the upstream's answer to it quotes it): cut as the path is.
			failures.warn("upstream failed", "upstream", u.Host, "path", cutText(r.URL.Path, maxLoggedPath),
				"err", cutText(err.Error(), maxLoggedLine))
			if errors.Is(err, errNotHTTP1) {
				// Not the upstream's failure: it was asked in a protocol
				// it does not speak.
				markUnsent(w)
				writeJSONProblem(w, http.StatusBadGateway, "Bad Gateway",
					"The upstream service speaks HTTP/2, which carries no Upgrade, and did not answer a request switching protocols over HTTP/1.1. Send the request without Upgrade.")
				return
			}
			if errors.Is(err, errMaybeNotHTTP1) {
				// Asked in a protocol it may not speak, at the client's
				// choice: not counted as the upstream's outcome.
				markUnsent(w)
				writeJSONProblem(w, http.StatusBadGateway, "Bad Gateway",
					"The upstream service closed the connection of a request switching protocols over HTTP/1.1 without answering; it may speak only HTTP/2, which carries no Upgrade. The request may have been acted on: it was not sent again. Send it without Upgrade.")
				return
			}
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
		sw := &streamWriter{ResponseWriter: w, rc: rc, idle: conns.StreamIdleTimeout, cancel: cancel,
			switched: switched, fields: w.Header().Clone(), own: own}
		sw.wait = answerWait{rc: rc, write: conns.WriteTimeout}
		defer sw.stop()
		sw.wait.from(time.Now())
		ctx = context.WithValue(ctx, answerKey{}, sw)
		ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{WroteRequest: sw.wait.wroteRequest})
		if r.Body != nil && r.Body != http.NoBody {
			// The upstream may answer before it read the body: the
			// transport goes on sending it, and HTTP/1.1's server must not
			// drain it as the answer starts (HTTP/2 is full duplex).
			rc.EnableFullDuplex()
			sw.body = &watchedBody{ReadCloser: r.Body, rc: rc, idle: conns.ReadTimeout, wait: &sw.wait, req: upstreamRequest(w)}
			sw.http1 = r.ProtoMajor == 1
			defer sw.body.stop()
			if s := statusWriterOf(w); s != nil {
				s.body = sw.body // its failure is the client's (statusWriter.brokenOff)
			}
		}
		r = r.WithContext(ctx)
		if sw.body != nil {
			r.Body = sw.body
		}
		proxy.ServeHTTP(sw, r)
		sw.endTrailers(w.Header())
		if sw.body != nil && sw.body.stop() && r.ProtoMajor == 1 {
			// Answered before its body ended, on a connection the answer
			// closes (see streamWriter.closeUnlessBodyOver): the rest of
			// the body is not read. The read the transport may wait in
			// ends now, and the body is closed, so that net/http, which
			// would read the rest with no deadline before it closes the
			// connection, finds it ended: the answer ends, and the
			// connection closes as net/http closes one whose body it left
			// unread (the client has half a second to read the answer).
			rc.SetReadDeadline(time.Now())
			sw.body.ReadCloser.Close()
		}
	}), closeIdle, nil
}

// upgradesOverHTTP1 is the transport to an https upstream: a request
// switching protocols (one with an Upgrade field: httputil.ReverseProxy
// forwards the field only then) goes over h1, a transport speaking
// HTTP/1.1 alone whose connections offer http/1.1 by ALPN (see
// http1Dialer), the others over rt. HTTP/2 has no Upgrade (RFC 9113
// §8.2.2), and net/http's HTTP/2 transport refuses such a request unsent;
// net/http keeps a WebSocket's on HTTP/1.1 itself, but not another
// protocol's, which an upstream negotiating h2 would never be asked. Over
// HTTP/1.1 the upstream switches, or answers the request ignoring the
// Upgrade (RFC 9110 §7.8), as an http:// upstream does.
//
// A proxy must not retry a non-idempotent request (RFC 9110 §9.2.2): a
// request the attempt failed is sent again only on evidence from the
// attempt's own connection that the upstream did not act on it, whatever
// another connection to it would speak. Such evidence is the upstream's
// TLS alert refusing http/1.1 (no_application_protocol, RFC 7301 §3.2),
// which ends the handshake before anything is sent, or an HTTP/2 frame a
// server sends before any request as the first bytes it sent on a new
// connection (see http1Conn.answersInHTTP2): it took the request for a
// malformed preface of its protocol. A request without a body is then
// sent over rt without its Connection and Upgrade fields, as to an h2c
// upstream, and the upstream's answer is the request's; one with a body,
// which the attempt may have read, is not sent again: its error wraps
// errNotHTTP1, a 502 logged but not counted by the degradation monitor.
// A request without a body that is replayable as net/http judges it (see
// replayable) is sent again as well after a failure other than a timeout
// on a new connection on which the upstream did not confirm http/1.1 by
// ALPN. Another request failed on such a connection that the upstream
// closed without a byte (or one reached through a proxy, HTTPS_PROXY,
// whose TLS net/http adds and whose bytes are not watched: no evidence
// either way) is not sent again: an HTTP/1.1 server without
// ALPN failing a request it acted on does that, and so does grpc-go
// ending a connection that negotiated no protocol. Its error wraps
// errMaybeNotHTTP1, a 502 logged but not counted: the request was sent
// in a protocol the upstream may not speak, at its client's choice, and
// a client within its limits must not raise the degradation level by
// asking a gRPC upstream to switch protocols. Every other failure is the
// upstream's own: one on a connection that confirmed http/1.1, or on
// which the upstream answered; a timeout; a failure of the dial before
// TLS.
type upgradesOverHTTP1 struct {
	rt, h1 http.RoundTripper
}

func (t upgradesOverHTTP1) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Header.Get("Upgrade") == "" {
		return t.rt.RoundTrip(r)
	}
	var a http1Attempt
	ctx := httptrace.WithClientTrace(r.Context(), &httptrace.ClientTrace{GotConn: a.gotConn})
	resp, err := t.h1.RoundTrip(r.WithContext(ctx))
	if err == nil || r.Context().Err() != nil {
		return resp, err
	}
	if ne, ok := errors.AsType[net.Error](err); ok && ne.Timeout() {
		return nil, err
	}
	bodyless := r.Body == nil || r.Body == http.NoBody
	switch {
	case refusedHTTP1(err) || a.answeredInHTTP2():
		if !bodyless {
			return nil, fmt.Errorf("%w: %w", errNotHTTP1, err)
		}
	case a.unconfirmed && bodyless && replayable(r):
	case a.unconfirmed && (a.conn == nil || a.conn.silent()):
		return nil, fmt.Errorf("%w: %w", errMaybeNotHTTP1, err)
	default:
		return nil, err
	}
	r = r.Clone(r.Context())
	r.Header.Del("Connection")
	r.Header.Del("Upgrade")
	return t.rt.RoundTrip(r)
}

// replayable reports whether r, a request without a body, may be sent
// again without its sender's consent, as net/http's transport judges a
// request it retries: GET, HEAD, OPTIONS or TRACE (safe methods, RFC 9110
// §9.2.1), or any method with an Idempotency-Key or X-Idempotency-Key
// field, whatever its value.
func replayable(r *http.Request) bool {
	switch r.Method {
	case "", http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace:
		return true
	}
	_, ok := r.Header["Idempotency-Key"]
	if !ok {
		_, ok = r.Header["X-Idempotency-Key"]
	}
	return ok
}

// errNotHTTP1 is the error of a request switching protocols, with a body,
// that an https upstream refused on the HTTP/1.1 attempt's own connection
// (see upgradesOverHTTP1): no outcome of the upstream's.
var errNotHTTP1 = errors.New("the upstream speaks HTTP/2 and did not answer over HTTP/1.1")

// errMaybeNotHTTP1 is the error of a request switching protocols that an
// https upstream, negotiating no protocol by ALPN, failed on a new
// connection without sending a byte (or through a proxy, where its bytes
// are not watched), and that was not sent again (see
// upgradesOverHTTP1): the upstream may speak no HTTP/1.1, and the failure
// is not counted as its outcome.
var errMaybeNotHTTP1 = errors.New("the upstream negotiated no protocol by ALPN and failed the request unanswered: it may speak no HTTP/1.1")

// http1Dialer makes the TLS connections of upgradesOverHTTP1's h1
// transport as net/http's transport would, with dial: the TLS
// configuration tls (offering http/1.1 by ALPN) with ServerName set to the
// host dialled when tls sets none, the handshake bounded by
// handshakeTimeout when positive. net/http calls it for the upstream, or
// for an HTTPS proxy (HTTPS_PROXY), through which it then adds the TLS to
// the upstream itself, as it does through any other proxy.
type http1Dialer struct {
	dial             func(ctx context.Context, network, addr string) (net.Conn, error)
	tls              *tls.Config
	handshakeTimeout time.Duration
}

// dialTLS returns a connection to addr past its TLS handshake, as an
// *http1Conn.
func (d http1Dialer) dialTLS(ctx context.Context, network, addr string) (net.Conn, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	dial := d.dial
	if dial == nil {
		dial = (&net.Dialer{}).DialContext
	}
	raw, err := dial(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	cfg := d.tls
	if cfg.ServerName == "" {
		cfg = cfg.Clone()
		cfg.ServerName = host
	}
	hctx := ctx
	if d.handshakeTimeout > 0 {
		var cancel context.CancelFunc
		hctx, cancel = context.WithTimeout(ctx, d.handshakeTimeout)
		defer cancel()
	}
	c := tls.Client(raw, cfg)
	if err := c.HandshakeContext(hctx); err != nil {
		raw.Close()
		return nil, err
	}
	return &http1Conn{Conn: c}, nil
}

// http1Conn is a connection of upgradesOverHTTP1's h1 transport: it keeps
// the first bytes the upstream sends on it. Read is the transport's;
// answersInHTTP2 may be called from any goroutine.
type http1Conn struct {
	*tls.Conn
	full  atomic.Bool // first holds all it keeps
	mu    sync.Mutex
	first [http2FrameHeaderLen]byte
	n     int
}

// http2FrameHeaderLen is the length of an HTTP/2 frame's header (RFC 9113
// §4.1).
const http2FrameHeaderLen = 9

func (c *http1Conn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 && !c.full.Load() {
		c.mu.Lock()
		c.n += copy(c.first[c.n:], p[:n])
		c.full.Store(c.n == len(c.first))
		c.mu.Unlock()
	}
	return n, err
}

// silent reports whether nothing was read from c.
func (c *http1Conn) silent() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n == 0
}

// answersInHTTP2 reports whether the first bytes read from c are the
// header of a frame on stream 0 that an HTTP/2 server sends before any
// request: SETTINGS, not an acknowledgment, its connection preface (RFC
// 9113 §3.4), or GOAWAY. Such a server took what it got for a malformed
// client preface, a connection error, and acted on no request of it. An
// HTTP/1.1 answer begins with "HTTP/".
func (c *http1Conn) answersInHTTP2() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	h := c.first
	if c.n < len(h) || binary.BigEndian.Uint32(h[5:])&(1<<31-1) != 0 {
		return false
	}
	length := uint32(h[0])<<16 | uint32(h[1])<<8 | uint32(h[2])
	const typeSettings, typeGoAway, flagAck = 0x4, 0x7, 0x1
	switch h[3] {
	case typeSettings:
		return h[4]&flagAck == 0 && length%6 == 0
	case typeGoAway:
		return length >= 8
	}
	return false
}

// http1Attempt follows a request sent over HTTP/1.1 to an https upstream:
// conn is the new connection the transport got for it (nil for one
// reused, or reached through a proxy), and unconfirmed is set when
// the upstream did not confirm http/1.1 by ALPN on a new connection. The
// transport calls gotConn on the goroutine of its RoundTrip.
type http1Attempt struct {
	conn        *http1Conn
	unconfirmed bool
}

func (a *http1Attempt) gotConn(info httptrace.GotConnInfo) {
	a.conn, a.unconfirmed = nil, false
	if info.Reused {
		return
	}
	var cs tls.ConnectionState
	switch c := info.Conn.(type) {
	case *http1Conn:
		a.conn, cs = c, c.ConnectionState()
	case *tls.Conn: // through an HTTPS proxy
		cs = c.ConnectionState()
	default:
		return
	}
	a.unconfirmed = cs.NegotiatedProtocol != "http/1.1"
}

// answeredInHTTP2 reports whether the upstream sent its HTTP/2 connection
// preface on the attempt's new connection (see http1Conn.answersInHTTP2).
func (a *http1Attempt) answeredInHTTP2() bool {
	return a.conn != nil && a.conn.answersInHTTP2()
}

// refusedHTTP1 reports whether err, an attempt's failure, is the
// upstream's TLS alert refusing every protocol offered by ALPN (RFC 7301
// §3.2), which ends the handshake before the request is sent.
func refusedHTTP1(err error) bool {
	// crypto/tls reports an alert received as a *net.OpError "remote
	// error" whose Err, of an unexported type, reads as tls.AlertError's.
	oe, ok := errors.AsType[*net.OpError](err)
	return ok && oe.Op == "remote error" && oe.Err != nil &&
		oe.Err.Error() == tls.AlertError(alertNoApplicationProtocol).Error()
}

// alertNoApplicationProtocol is the TLS alert of a server that speaks
// none of the protocols the client offered by ALPN (RFC 7301 §3.2).
const alertNoApplicationProtocol = 120

// headerListTooLarge reports whether err, a request's failure over
// net/http's HTTP/2 transport, is that transport refusing the request
// unsent because its header list (or its trailers') is larger than the
// upstream's SETTINGS_MAX_HEADER_LIST_SIZE. The error is not exported
// (golang.org/x/net/http2's copy neither): the innermost error's whole
// text is matched, which both share. An error merely quoting that text
// (httputil.ReverseProxy's, naming the client's Upgrade) does not match.
func headerListTooLarge(err error) bool {
	for u := errors.Unwrap(err); u != nil; u = errors.Unwrap(u) {
		err = u
	}
	return err.Error() == "request header list larger than peer's advertised limit"
}

// invalidUpgrade reports whether h asks to switch protocols (Connection
// lists "upgrade") to an Upgrade value that is not printable ASCII (a tab,
// a control byte, a byte above 0x7e), which httputil.ReverseProxy refuses
// to forward.
func invalidUpgrade(h http.Header) bool {
	if !httpguts.HeaderValuesContainsToken(h["Connection"], "Upgrade") {
		return false
	}
	v := h.Get("Upgrade")
	for i := range len(v) {
		if v[i] < ' ' || v[i] > '~' {
			return true
		}
	}
	return false
}

// hopByHop are the fields of a request that httputil.ReverseProxy does not
// forward whatever its Connection field names (RFC 9110 §7.6.1; RFC 2616
// §13.5.1), canonical.
var hopByHop = []string{"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate",
	"Proxy-Authorization", "Te", "Trailer", "Transfer-Encoding", "Upgrade"}

// asForwarded removes from h, the header of a request the proxy is to
// forward, the fields httputil.ReverseProxy removes before the upstream
// sees them, so that the limits judge the request the upstream gets: every
// field a Connection field names (each of its lines, a comma-separated
// list, a name matched in any case as Header.Del matches it) and the
// hop-by-hop fields (hopByHop). It keeps, as the proxy does, "Te: trailers"
// of a request whose TE lists trailers (a gRPC call's), and "Connection:
// Upgrade" with the first Upgrade value of one asking to switch protocols.
// It allocates only for a request switching protocols.
func asForwarded(h http.Header) {
	conn := h["Connection"]
	upgrade := ""
	if httpguts.HeaderValuesContainsToken(conn, "Upgrade") {
		upgrade = h.Get("Upgrade")
	}
	te := h["Te"]
	trailers := httpguts.HeaderValuesContainsToken(te, "trailers")
	for _, line := range conn {
		for line != "" {
			var name string
			name, line, _ = strings.Cut(line, ",")
			if name = textproto.TrimString(name); name != "" {
				delFold(h, name)
			}
		}
	}
	for _, name := range hopByHop {
		delete(h, name)
	}
	if trailers {
		te[0] = "trailers"
		h["Te"] = te[:1]
	}
	if upgrade != "" {
		h.Set("Connection", "Upgrade")
		h.Set("Upgrade", upgrade)
	}
}

// delFold removes from h every field whose name is name in any case: what
// h.Del(name) removes of a request's header, whose names net/http has made
// canonical, without making name canonical (an allocation when it is not).
// A name that is no field name is removed as it is, as Del does.
func delFold(h http.Header, name string) {
	if !httpguts.ValidHeaderFieldName(name) {
		h.Del(name)
		return
	}
	for k := range h {
		if strings.EqualFold(k, name) {
			delete(h, k)
		}
	}
}

// paramOverride returns the method by which the limits of st judge r, and
// the one its _method names ("" for none, or its own): a POST (in any
// case: Symfony upper-cases the method before it reads _method)
// whose query's _method parameter (methodParam, read by paramOverrideOf)
// names another method, which Laravel serves as that method, is judged as the method named when cfg judges
// that at least as strictly as a POST (judgedAsStrictly), so that the
// client pays what the upstream serves; as the POST it is when cfg judges
// the POST at least as strictly as the method named (it is charged at
// least as much). Any other request, a POST naming no other method, and
// every request under a cfg that judges none by its method
// (st.namesMethod) are judged as sent. An error, the detail of a 400
// given before the limits decide, for a POST naming a method neither of
// which judges it alone, two methods, or one that is not a method, and
// for a _method pair that does not parse (overrides.addQuery).
func paramOverride(st *state, r *http.Request) (judged, named string, err error) {
	if !strings.EqualFold(r.Method, http.MethodPost) || !st.namesMethod {
		return r.Method, "", nil
	}
	cfg := st.cfg
	m, err := paramOverrideOf(r)
	switch {
	case err != nil:
		return "", "", err
	case m == "" || m == http.MethodPost:
		return r.Method, "", nil
	case judgedAsStrictly(cfg, m, http.MethodPost):
		return m, m, nil
	case judgedAsStrictly(cfg, http.MethodPost, m):
		return r.Method, m, nil
	}
	return "", "", fmt.Errorf("a POST with _method=%s, which upstreams that honour it (Laravel, Rails) serve as a %s: the configuration judges some request more strictly as a POST than as a %s and some more strictly as a %s than as a POST (a cost, rule or exemption by method), so neither method alone judges it; send the %s itself", m, m, m, m, m)
}

// sentMethodKey is the context key of the method a request judged as
// another (judgedAs) was sent with.
type sentMethodKey struct{}

// judgedAs returns r as the limits judge it by the method m
// (paramOverride): r itself when m is its method, else a shallow copy of
// r with m for method, whose context keeps r's for sentAs.
func judgedAs(r *http.Request, m string) *http.Request {
	if m == r.Method {
		return r
	}
	j := r.WithContext(context.WithValue(r.Context(), sentMethodKey{}, r.Method))
	j.Method = m
	return j
}

// sentAs returns r, a request the limits judged (judgedAs), with the
// method it was sent with: a shallow copy, r itself when that is its
// method.
func sentAs(r *http.Request) *http.Request {
	m, ok := r.Context().Value(sentMethodKey{}).(string)
	if !ok || m == r.Method {
		return r
	}
	s := r.WithContext(r.Context())
	s.Method = m
	return s
}

// paramOverrideOf returns the method that the methodParam parameters of
// r's query string name (overrides.addQuery: however many pairs the query
// has). A _method of a form body is not read:
// reading a body before the limits decide would ask a refused client for
// it (Expect: 100-continue) and hold its first bytes to the listener's
// read_timeout in all; such a POST is judged as the POST it is, as
// forward-auth, which never sees a body, judges it.
func paramOverrideOf(r *http.Request) (string, error) {
	var o overrides
	o.addQuery(r.URL.RawQuery)
	return o.named("the query's _method parameters")
}

// watchedBody is a request body the proxy reads. It keeps the error that
// ended the body early, so that the proxy can tell a client's failure from
// the upstream's. The listener's read_timeout bounds the request's headers
// and the bodies sluice reads itself; once the proxy reads, a body streams
// as long as it moves data: each read has idle (read_timeout, as nginx's
// client_body_timeout) to bring data, no bound with idle 0 — a stalled
// body is cut as soon as before, a moving one is not. A body read
// whole is bounded no more: on HTTP/1.1 the server then reads on, to learn
// whether the client left, for as long as the answer streams. Until the
// answer starts, each read and the body's end also move the wait for it
// (wait.from, see answerWait): on HTTP/2 the listener's write_timeout runs
// from the stream's opening and resets the stream when it passes, which
// would cut a client-streaming call or a long upload that still moves
// data. The time spent in its reads, waiting on the client, is not the
// upstream's latency: each read pauses req (the degradation monitor's
// count of the request, nil for none), so the latency keeps the dial, the
// body's sending at the upstream's pace and the wait for the answer, not
// the client's upload. The transport reads the body on a goroutine of its
// own, which may outlive the handler: stop, before the handler returns,
// ends the extensions (the connection may be serving another request by
// then).
type watchedBody struct {
	io.ReadCloser
	rc    *http.ResponseController
	idle  time.Duration
	wait  *answerWait
	req   *degrade.Request
	err   atomic.Pointer[error]
	mu    sync.Mutex
	ended bool // the body ended, or the handler returned: no more extensions
	over  bool // the body ended, whole or broken off
}

func (b *watchedBody) Read(p []byte) (int, error) {
	b.extend()
	if b.req != nil {
		b.req.Pause()
	}
	n, err := b.ReadCloser.Read(p)
	if b.req != nil {
		b.req.Resume()
	}
	if err != nil {
		if err != io.EOF {
			b.err.Store(&err)
		}
		b.end(err == io.EOF)
	}
	return n, err
}

// extend gives the body idle more to bring its next byte (lifts the bound
// with idle 0), and moves the wait for an answer not started yet, until
// the body ends.
func (b *watchedBody) extend() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.ended {
		return
	}
	now := time.Now()
	var deadline time.Time
	if b.idle > 0 {
		deadline = now.Add(b.idle)
	}
	b.rc.SetReadDeadline(deadline)
	b.wait.from(now)
}

// end ends the extensions as the body ends (whole, or broken off): a body
// read whole lifts its bound, and the wait for an answer not started yet
// runs from now (the upstream's, or the proxy's answer to a failed body).
func (b *watchedBody) end(whole bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.ended {
		return
	}
	b.ended, b.over = true, true
	if whole {
		b.rc.SetReadDeadline(time.Time{})
	}
	b.wait.from(time.Now())
}

// stop ends the extensions when the handler returns, and reports whether
// the body had not ended by then.
func (b *watchedBody) stop() (unended bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.ended = true
	return !b.over
}

// isOver reports whether the body ended, whole or broken off.
func (b *watchedBody) isOver() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.over
}

// answerKey is the context key of a request's streamWriter: the proxy
// hands the error handler and ModifyResponse its outbound copy, whose body
// is wrapped again.
type answerKey struct{}

// answerOf returns the streamWriter of r, a request the proxy handles.
func answerOf(r *http.Request) *streamWriter {
	w, _ := r.Context().Value(answerKey{}).(*streamWriter)
	return w
}

// bodyOf returns the watchedBody of r, a request the proxy handles; nil
// for a request without a body.
func bodyOf(r *http.Request) *watchedBody {
	if w := answerOf(r); w != nil {
		return w.body
	}
	return nil
}

// failed is the error that ended the body early, or nil.
func (b *watchedBody) failed() error {
	if e := b.err.Load(); e != nil {
		return *e
	}
	return nil
}

// limitsInFront is the middleware in front of the proxy
// (httplimit.Middleware): who a request's client is (see forward), the
// headers it reads (see dropOtherSpellings), and the fields it writes on
// the answers it admits.
type limitsInFront interface {
	clientJudge
	RequestHeaders() []string
	ResponseHeaders() []string
	Counts() map[string]string
}

// ownFields are the answer's fields that mw writes on an admitted request,
// the RateLimit fields of its modes: an upstream with a limiter of its own
// may send fields of the same names, which the proxy drops from an answer
// mw set them on, so that the client reads one value of each, sluice's
// (Kong's plugins do the same); an exempt request's answer, on which mw
// sets none, keeps the upstream's (see streamWriter.dropOwn). A
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
	if sw := statusWriterOf(w); sw != nil {
		sw.own = true
	}
}

// markUnsent marks the answer w is about to write as sluice's own to a
// request the proxy refused without sending it (an Upgrade that is not
// printable ASCII, a header list larger than an HTTP/2 upstream accepts),
// or sent in a protocol the upstream does not speak (errNotHTTP1) or may
// not (errMaybeNotHTTP1): no
// outcome of the upstream's, which was not asked, or not in its protocol.
// The monitor ends the request with status 0 (statusWriter.upstreamStatus),
// counting neither its status nor its latency; for CORS and for a gRPC
// call it is one of sluice's own answers.
func markUnsent(w http.ResponseWriter) {
	if sw := statusWriterOf(w); sw != nil {
		sw.own, sw.upstream = true, false
	}
}

// statusWriterOf returns the statusWriter beneath w, or nil.
func statusWriterOf(w http.ResponseWriter) *statusWriter {
	for w != nil {
		if sw, ok := w.(*statusWriter); ok {
			return sw
		}
		u, ok := w.(interface{ Unwrap() http.ResponseWriter })
		if !ok {
			return nil
		}
		w = u.Unwrap()
	}
	return nil
}

// abortAnswer ends the handling of r, whose client left before the
// upstream answered, with no answer: the limits that count by response
// count it as none (a 500), not as the 200 an empty answer would be. It
// panics with http.ErrAbortHandler, which an http.Server recovers
// silently, as the proxy does when an answer breaks off; outside one (a
// handler called directly) it returns.
func abortAnswer(r *http.Request) {
	if r.Context().Value(http.ServerContextKey) != nil {
		panic(http.ErrAbortHandler)
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
