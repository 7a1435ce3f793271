package client

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/sluice-dev/sluice"
)

// maxAnswer bounds the body read from the decision API.
const maxAnswer = 1 << 20

// DefaultTimeout bounds one decision round trip when New is not given an
// http.Client: a decision that takes longer is worth less than none.
const DefaultTimeout = 5 * time.Second

// Client asks a sluice server for decisions (POST /v1/check, docs/api.md):
// for services in front of which sluice does not sit as a proxy, and for
// pacing shared between processes (see Client.Gate). It is safe for
// concurrent use. The zero Client has no server: its calls return an error
// wrapping sluice.ErrStoreUnavailable. Make one with New.
type Client struct {
	url   string
	http  *http.Client
	token string // "Bearer <token>", or ""
}

// An Option configures a Client.
type Option func(*Client)

// WithHTTPClient makes the Client send its requests with a copy of hc
// (for TLS, proxies, authentication in front of sluice, or another
// timeout) instead of the default: an http.Client with DefaultTimeout and
// a Transport of its own that keeps up to 256 idle connections to the
// server. A nil hc keeps that default. Give hc's Transport as many idle connections per
// host (MaxIdleConnsPerHost) as checks may be in flight at once:
// http.DefaultTransport keeps 2, with which a service checking every
// request from many goroutines opens a connection (a TLS handshake) for
// nearly every check. The copy follows only the redirects that keep the
// decision API's POST (a 307 or 308 to the same origin), then as hc's
// CheckRedirect says; any other is an *APIError (see APIError).
func WithHTTPClient(hc *http.Client) Option {
	return func(c *Client) {
		if hc != nil {
			c.http = hc
		}
	}
}

// WithToken makes the Client authenticate as a caller of the server's admin
// listener: the token (from sluice token) is sent as Authorization: Bearer.
// Its caller needs the check scope, and override_plan to set
// CheckRequest.Plan; without them Check returns an *APIError with status
// 401 or 403.
func WithToken(token string) Option { return func(c *Client) { c.token = "Bearer " + token } }

// idleConnsPerHost is how many idle connections to the server the default
// http.Client of New keeps for reuse: as many checks as a busy service may
// have in flight at once, each of which would otherwise open a connection
// of its own.
const idleConnsPerHost = 256

// New returns a Client of the sluice server whose admin listener is at
// baseURL, e.g. "http://sluice:9090" (a trailing slash is ignored). A
// malformed baseURL is reported by the first Check. Without
// WithHTTPClient, each Client has an http.Client and a Transport of its
// own (a clone of http.DefaultTransport keeping up to 256 idle connections
// to the server).
func New(baseURL string, opts ...Option) *Client {
	c := &Client{url: strings.TrimRight(baseURL, "/") + "/v1/check"}
	for _, o := range opts {
		o(c)
	}
	if c.http == nil {
		c.http = defaultHTTPClient()
	}
	c.http = followingOnlyPOSTs(c.http)
	return c
}

// CloseIdleConnections closes the connections of the Client's pool that
// no request is using, as http.Client.CloseIdleConnections does (of the
// http.Client WithHTTPClient gave, its Transport's); connections in use
// close once idle. A program that replaces its Client (a reload) calls it
// on the old one, whose pool would otherwise keep its connections until
// they time out (90 s by default). The Client stays usable: a later Check
// dials again. The zero Client has no pool.
func (c *Client) CloseIdleConnections() {
	if c.http != nil {
		c.http.CloseIdleConnections()
	}
}

// followingOnlyPOSTs returns a copy of hc that follows a redirect only
// when it keeps the decision API's POST, its body and its token: a 307 or
// 308 to the same origin (sluice's own redirect of a path that is not
// clean). Any other redirect is returned as it came, and post makes it an
// *APIError: followed, a 301, 302 or 303 turns the POST into a GET, which
// an SSO proxy's login page answers 200 with a page that is "not a
// decision" — sluice.ErrStoreUnavailable, which a caller's fallback may
// let through — and another origin is not the server the token is for.
// hc's own CheckRedirect, if any, then decides as it would.
func followingOnlyPOSTs(hc *http.Client) *http.Client {
	own := *hc
	then := hc.CheckRedirect
	own.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		code := req.Response.StatusCode
		first := via[0].URL
		if code != http.StatusTemporaryRedirect && code != http.StatusPermanentRedirect ||
			req.URL.Scheme != first.Scheme || !strings.EqualFold(req.URL.Host, first.Host) {
			return http.ErrUseLastResponse
		}
		if then != nil {
			return then(req, via)
		}
		if len(via) >= maxRedirects {
			return fmt.Errorf("stopped after %d redirects", maxRedirects)
		}
		return nil
	}
	return &own
}

// maxRedirects is how many redirects a request follows at most, as
// net/http's default.
const maxRedirects = 10

// defaultHTTPClient returns the http.Client of a Client made without
// WithHTTPClient. A program that made http.DefaultTransport something
// other than an *http.Transport keeps it.
func defaultHTTPClient() *http.Client {
	def, ok := http.DefaultTransport.(*http.Transport)
	if !ok {
		return &http.Client{Timeout: DefaultTimeout}
	}
	tr := def.Clone()
	tr.MaxIdleConns = max(tr.MaxIdleConns, idleConnsPerHost)
	tr.MaxIdleConnsPerHost = idleConnsPerHost
	return &http.Client{Timeout: DefaultTimeout, Transport: tr}
}

// CheckRequest is the body of POST /v1/check. Exactly one of Subject,
// APIKey, Token, User and IP identifies the client; IP may come with Token
// or APIKey.
type CheckRequest struct {
	// Subject is an opaque name of the client or of a shared budget
	// ("nightly-export"); the server keys it apart from API keys, users and
	// IPs, and applies the default plan unless Plan says otherwise.
	Subject string `json:"subject,omitempty"`
	// APIKey is a client's API key, limited under its configured plan. The
	// server hashes it; it is never stored or logged. With IP, a key the
	// server does not list leaves the client limited by IP when the server
	// counts unknown keys so (unknown_keys: ip, the default); without, the
	// caller vouching for it, such a key is a client of its own.
	APIKey string `json:"api_key,omitempty"`
	// Token is a client's bearer token (a JSON Web Token), for a server
	// that verifies them (identity.jwt): the client is the user it names.
	// With IP, a token the server does not verify leaves the client limited
	// by IP; without, it is refused (400). At most 8 KiB.
	Token string `json:"token,omitempty"`
	// User is a user id.
	User string `json:"user,omitempty"`
	// IP is a client address ("203.0.113.7", "2001:db8::1"), grouped by the
	// server's configured prefixes.
	IP string `json:"ip,omitempty"`
	// Plan names the plan to apply; empty means the identity's own.
	Plan string `json:"plan,omitempty"`
	// Method and Path select the endpoint's cost, exemptions and rules;
	// "GET" and "/" when empty. Path may end in the request's query
	// ("/search?tenant=acme"), for rules keyed by a query parameter.
	Method string `json:"method,omitempty"`
	Path   string `json:"path,omitempty"`
	// Host is the request's host (a port is ignored), for rules that match
	// hosts or are keyed by the host, and patterns that name one. At most
	// 255 bytes.
	Host string `json:"host,omitempty"`
	// Headers are the request's headers that rules require or are keyed
	// by ("X-Tenant": "acme"), one value each, names in any case; the
	// server believes them as the caller's word, as it does User and IP.
	// At most 32, each value at most 8 KiB.
	Headers map[string]string `json:"headers,omitempty"`
	// Cost overrides the endpoint's cost when set (a rule with a cost of its
	// own is still charged that); 0 is a peek that spends nothing of any
	// limit, a rule's included. At most sluice.MaxQuantity.
	Cost *int64 `json:"cost,omitempty"`
}

// CheckResponse is the server's decision. Durations are in milliseconds,
// rounded up.
type CheckResponse struct {
	// Allowed reports whether the request was admitted (its cost spent).
	Allowed bool `json:"allowed"`
	// Identity is the kind of client the request was keyed as: "external"
	// for a Subject, "api-key", "user" or "ip".
	Identity string `json:"identity"`
	// Plan is the plan applied; Cost the units the request spent or would
	// have spent.
	Plan string `json:"plan,omitempty"`
	Cost int64  `json:"cost"`
	// Exempt is true for an endpoint no limit applies to; the decision
	// fields are then zero and Allowed is true.
	Exempt bool `json:"exempt,omitempty"`
	// Limit names the deciding limit: when refused, the violated limit
	// with the longest wait; when admitted, the one with the least
	// Remaining.
	Limit        string `json:"limit,omitempty"`
	Remaining    int64  `json:"remaining"`
	ResetAfterMs int64  `json:"resetAfterMs"`
	// RetryAfter (whole seconds, at least 1, as the Retry-After header) and
	// RetryAfterMs are set when refused, unless no wait can admit the
	// request (its cost exceeds a burst): then both are 0.
	RetryAfter   int64 `json:"retryAfter,omitempty"`
	RetryAfterMs int64 `json:"retryAfterMs,omitempty"`
	// DelayMs is how long an admitted request must wait before it
	// proceeds (leaky-bucket queues).
	DelayMs int64 `json:"delayMs,omitempty"`
	// Violated names every limit that refused, empty when admitted.
	Violated []string `json:"violated,omitempty"`
	// Limits is every limit checked, plan limits first, then global ones.
	Limits []LimitStatus `json:"limits,omitempty"`
	// Headers are the RateLimit headers a proxy would send for this
	// decision, ready to copy onto a response.
	Headers map[string]string `json:"headers,omitempty"`
	// Type is the problem type
	// https://iana.org/assignments/http-problem-types#temporary-reduced-capacity
	// when the service's capacity, not the client's quota, refused the
	// request: the proxy answers such a request 503. Either the server
	// refused it before deciding it, its limits unread — a degradation level
	// shed it: Detail then says why, for the request's client, Level names
	// the level ("elevated", "high" or "critical"), RetryAfter and
	// RetryAfterMs say when to try again, and Identity, Plan, Limit and
	// Limits are empty — or its limits refused it for the service: the
	// global limits alone under response.global_status 503, or the store
	// could not be reached under on_store_error deny (Detail says so; the
	// client's quota is not spent). Type is empty for any other decision.
	Type   string `json:"type,omitempty"`
	Detail string `json:"detail,omitempty"`
	Level  string `json:"level,omitempty"`
	// Settle is set when the admitted request charged limits that count by
	// its answer (a configuration's count: successes, failures,
	// status:<list> or header:<Name>): report the answer with
	// Client.Settle, or POST /v1/settle, once it is known, to the same
	// server. Unsettled, the request stays counted in full.
	Settle string `json:"settle,omitempty"`
}

// Wait is how long the caller should wait before proceeding: DelayMs when
// admitted, RetryAfterMs (before asking again) when refused, and
// sluice.Never when refused and no wait can admit the request.
func (r *CheckResponse) Wait() time.Duration {
	switch {
	case r.Allowed:
		return millis(r.DelayMs)
	case r.RetryAfterMs <= 0:
		return sluice.Never
	}
	return millis(r.RetryAfterMs)
}

// LimitStatus is one limit's part of a decision: the limit as configured
// (Quantity units per Window under Algorithm, up to Burst at once), and its
// own outcome. A Shadow limit is reported but never refuses; a Global one
// is shared by every client.
type LimitStatus struct {
	Name      string `json:"name"`
	Algorithm string `json:"algorithm"`
	Quantity  int64  `json:"quantity"`
	// Window is written as in the configuration: "1s", "1m", "1d", "90s".
	Window string `json:"window"`
	Burst  int64  `json:"burst"`
	Shadow bool   `json:"shadow,omitempty"`
	Global bool   `json:"global,omitempty"`
	// Allowed, Remaining, ResetAfterMs and RetryAfterMs are this limit's
	// own: a limit may allow while another refuses (then nothing is spent).
	Allowed      bool  `json:"allowed"`
	Remaining    int64 `json:"remaining"`
	ResetAfterMs int64 `json:"resetAfterMs"`
	RetryAfterMs int64 `json:"retryAfterMs,omitempty"`
}

// APIError is a decision API answer other than a decision: an RFC 9457
// problem (or, from something in between, any other body). A request the
// server finds invalid (400, 413, 422) wraps sluice.ErrInvalidCheck; an
// answer that means "no decision could be made" (5xx, 408, 429) wraps
// sluice.ErrStoreUnavailable, so that callers apply their failure policy
// with errors.Is as they would for a local store. A redirect that Client
// does not follow (any but a 307 or 308 to the same origin: an SSO proxy
// sending the caller to its login page, a URL that moved) wraps neither,
// as 401 and 403 do not: a misconfiguration is no outage to fail open on.
type APIError struct {
	// StatusCode is the HTTP status.
	StatusCode int
	// Type, Title and Detail are the problem's, each cut to its first KiB
	// and an ellipsis; Detail says what was wrong ("identify the client
	// with exactly one of subject, api_key, token, user or ip"). For a
	// body that is not a problem, Detail holds its first 200 bytes.
	Type   string
	Title  string
	Detail string
	// RetryAfter is the answer's Retry-After (delay-seconds or an
	// HTTP-date), 0 when it has none or a malformed one: the server says
	// when a 503 or 429 is worth asking again. See Client.Settle for the
	// two 503s of a settlement.
	RetryAfter time.Duration
}

// Error implements error.
func (e *APIError) Error() string {
	s := fmt.Sprintf("sluice decision API: %d %s", e.StatusCode, http.StatusText(e.StatusCode))
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	return s
}

// Unwrap returns sluice.ErrInvalidCheck, sluice.ErrStoreUnavailable or nil
// as the type's documentation says.
func (e *APIError) Unwrap() error {
	switch {
	case e.StatusCode == http.StatusBadRequest || e.StatusCode == http.StatusRequestEntityTooLarge ||
		e.StatusCode == http.StatusUnprocessableEntity:
		return sluice.ErrInvalidCheck
	case e.StatusCode >= 500 || e.StatusCode == http.StatusRequestTimeout || e.StatusCode == http.StatusTooManyRequests:
		return sluice.ErrStoreUnavailable
	}
	return nil
}

// Check asks the server to decide req. A decision, admitted or refused, is
// a response and a nil error. Otherwise the error is an *APIError for an
// answer that is not a decision, or wraps sluice.ErrStoreUnavailable when
// the server could not be reached or answered something unreadable (a
// body that is not JSON, or JSON without "allowed", which every decision
// has), or is the context's error when ctx ended first. A string of req
// (Headers' names and values too) that is not UTF-8 is an error wrapping
// sluice.ErrInvalidCheck, and nothing is sent: JSON would carry its bytes
// as U+FFFD, making two different subjects ("a\xff", "a\xfe") one client.
func (c *Client) Check(ctx context.Context, req CheckRequest) (*CheckResponse, error) {
	if err := utf8Request(&req); err != nil {
		return nil, fmt.Errorf("client: check: %w: %w", err, sluice.ErrInvalidCheck)
	}
	body, err := json.Marshal(req)
	if err != nil {
		return nil, fmt.Errorf("client: check: %w", err) // unreachable: plain fields
	}
	data, err := c.post(ctx, "check", c.url, body)
	if err != nil {
		return nil, err
	}
	// Every decision names "allowed"; a body without it (a health page's
	// {"status":"ok"}, null) is some other service's answer, not a refusal.
	var out struct {
		CheckResponse
		Allowed *bool `json:"allowed"`
	}
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, fmt.Errorf("client: check: the answer is not a decision (%v): %w", err, sluice.ErrStoreUnavailable)
	}
	if out.Allowed == nil {
		return nil, fmt.Errorf("client: check: the answer is not a decision (no \"allowed\"): %w", sluice.ErrStoreUnavailable)
	}
	out.CheckResponse.Allowed = *out.Allowed
	return &out.CheckResponse, nil
}

// utf8Request returns an error naming the first field of req (as JSON
// names it) that is not UTF-8, or nil.
func utf8Request(req *CheckRequest) error {
	for _, f := range [...]struct{ name, v string }{{"subject", req.Subject}, {"api_key", req.APIKey},
		{"token", req.Token}, {"user", req.User}, {"ip", req.IP}, {"plan", req.Plan}, {"method", req.Method},
		{"path", req.Path}, {"host", req.Host}} {
		if !utf8.ValidString(f.v) {
			return fmt.Errorf("%s is not UTF-8", f.name)
		}
	}
	for k, v := range req.Headers {
		if !utf8.ValidString(k) || !utf8.ValidString(v) {
			return fmt.Errorf("headers: %q is not UTF-8", k)
		}
	}
	return nil
}

// Settle reports the answer to a request that Check admitted with a
// CheckResponse.Settle id: the answer's HTTP status (0 for none) and its
// header (nil for none), from which the server refunds what the limits
// counting by the answer do not count (POST /v1/settle). Of each field the
// first value is sent; a header larger than a settlement carries (256
// fields, 64 KiB) is sent as the fields that fit, the shortest first. It
// returns nil only for the server's answer of a settlement (200
// {"settled":true}); any other 200 (a proxy's page, another service's
// JSON) settled nothing, and is an error wrapping
// sluice.ErrStoreUnavailable, as Check's "not a decision" is.
//
// Settle each id once, at the server that gave it (with signed ids, at any
// server of the fleet); an id settled, expired (after 15 minutes) or
// unknown is an *APIError of status 404, and its request stays counted in
// full. An *APIError of status 503 is one of two answers, told apart by
// its RetryAfter. With a RetryAfter (sluice sends 1 s), the shared store
// could not tell whether a signed id was settled: the id is not spent, and
// may be settled again after that wait. Without, the server's store failed
// the refund: the id is spent (a refund that failed may have reached the
// store, and is never tried twice), its request stays counted, and
// settling it again answers 404.
func (c *Client) Settle(ctx context.Context, id string, status int, header http.Header) error {
	req := struct {
		ID      string            `json:"id"`
		Status  int               `json:"status"`
		Headers map[string]string `json:"headers,omitempty"`
	}{ID: id, Status: status}
	envelope, err := json.Marshal(req)
	if err != nil {
		return fmt.Errorf("client: settle: %w", err) // unreachable: plain fields
	}
	req.Headers = settleHeaders(header, maxSettleBody-len(envelope)-len(`,"headers":{}`))
	body, err := json.Marshal(req)
	if err != nil {
		return fmt.Errorf("client: settle: %w", err) // unreachable: plain fields
	}
	data, err := c.post(ctx, "settle", strings.TrimSuffix(c.url, "/v1/check")+"/v1/settle", body)
	if err != nil {
		return err
	}
	// The server answers a settlement {"settled":true}: anything else is
	// some other service's answer, which settled nothing.
	var out struct {
		Settled bool `json:"settled"`
	}
	if err := json.Unmarshal(data, &out); err != nil {
		return fmt.Errorf("client: settle: the answer is not a settlement (%v): %w", err, sluice.ErrStoreUnavailable)
	}
	if !out.Settled {
		return fmt.Errorf("client: settle: the answer is not a settlement (no \"settled\": true): %w", sluice.ErrStoreUnavailable)
	}
	return nil
}

// Bounds of a settlement's body (docs/api.md, POST /v1/settle).
const (
	maxSettleBody   = 64 << 10 // bytes
	maxSettleFields = 256
)

// settleHeaders returns the first value of each field of header, as a
// settlement carries them: all of them when they fit in room bytes of JSON
// and maxSettleFields fields, else those that fit, the shortest first (a
// header that limits count by is a number, rarely long); nil for none.
func settleHeaders(header http.Header, room int) map[string]string {
	type field struct {
		name, value string
		size        int // of its JSON, separators included
	}
	fields := make([]field, 0, len(header))
	for k, vs := range header {
		if len(vs) == 0 {
			continue
		}
		// Indexed, not Get: a name not in canonical form (a header made by
		// hand, from gRPC metadata) is found as it is.
		name, _ := json.Marshal(k)
		value, _ := json.Marshal(vs[0])
		fields = append(fields, field{k, vs[0], len(name) + len(value) + 2})
	}
	slices.SortFunc(fields, func(a, b field) int {
		return cmp.Or(cmp.Compare(a.size, b.size), cmp.Compare(a.name, b.name))
	})
	var out map[string]string
	for _, f := range fields {
		if len(out) == maxSettleFields || f.size > room {
			break
		}
		if out == nil {
			out = map[string]string{}
		}
		out[f.name] = f.value
		room -= f.size
	}
	return out
}

// post sends body to url as JSON and returns the 200 answer's body; what
// names the call in errors.
func (c *Client) post(ctx context.Context, what, url string, body []byte) ([]byte, error) {
	if c.http == nil {
		return nil, fmt.Errorf("client: %s: %w: the zero Client has no server (make one with New)", what, sluice.ErrStoreUnavailable)
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("client: %s: %w", what, err)
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "application/json, application/problem+json")
	if c.token != "" {
		hreq.Header.Set("Authorization", c.token)
	}
	resp, err := c.http.Do(hreq)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("client: %s: %w", what, ctx.Err())
		}
		return nil, fmt.Errorf("client: %s: %w: %w", what, sluice.ErrStoreUnavailable, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("client: %s: %w", what, ctx.Err())
		}
		return nil, fmt.Errorf("client: %s: reading the answer: %w: %w", what, sluice.ErrStoreUnavailable, err)
	}
	if resp.StatusCode >= 300 && resp.StatusCode < 400 {
		return nil, redirectError(resp)
	}
	if resp.StatusCode != http.StatusOK {
		e := apiError(resp.StatusCode, data)
		e.RetryAfter, _ = ParseRetryAfter(resp.Header, time.Now())
		return nil, e
	}
	return data, nil
}

// redirectError is the *APIError of a redirect that post does not follow,
// naming where it points.
func redirectError(resp *http.Response) *APIError {
	to := resp.Header.Get("Location")
	if u, err := resp.Location(); err == nil {
		to = u.String()
	}
	detail := fmt.Sprintf("redirected to %q, not followed: only a 307 or 308 to the same origin keeps "+
		"the decision API's POST (check the server's URL, and what stands in front of it)", to)
	return &APIError{StatusCode: resp.StatusCode, Detail: cut(detail, maxProblemField)}
}

// apiError reads a problem body, or keeps the start of any other body.
func apiError(status int, body []byte) *APIError {
	e := &APIError{StatusCode: status}
	var p struct {
		Type   string `json:"type"`
		Title  string `json:"title"`
		Detail string `json:"detail"`
	}
	if json.Unmarshal(body, &p) == nil && (p.Title != "" || p.Detail != "") {
		e.Type, e.Title, e.Detail = cut(p.Type, maxProblemField), cut(p.Title, maxProblemField), cut(p.Detail, maxProblemField)
		return e
	}
	e.Detail = cut(strings.TrimSpace(string(body)), 200)
	return e
}

// maxProblemField bounds each field of a problem kept in an APIError: far
// more than any of the server's, far less than the megabyte a body may
// hold, which an error would carry into every log line that prints it.
const maxProblemField = 1 << 10

// cut returns s, or its first n bytes and an ellipsis when it is longer,
// in valid UTF-8.
func cut(s string, n int) string {
	if len(s) > n {
		s = s[:n] + "…"
	}
	return strings.ToValidUTF8(s, "�")
}
