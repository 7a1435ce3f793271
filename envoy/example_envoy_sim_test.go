package envoy_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	bootstrapv3 "github.com/envoyproxy/go-control-plane/envoy/config/bootstrap/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	ratelimitv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	headermutationv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/header_mutation/v3"
	ratelimitfilterv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ratelimit/v3"
	_ "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/router/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	_ "github.com/envoyproxy/go-control-plane/envoy/extensions/upstreams/http/v3"
	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"go.yaml.in/yaml/v3"
	"google.golang.org/protobuf/encoding/protojson"
)

// exampleBootstrap decodes examples/envoy/envoy.yaml with Envoy's own protos.
func exampleBootstrap(t *testing.T) *bootstrapv3.Bootstrap {
	t.Helper()
	var doc any
	if err := yaml.Unmarshal(must(os.ReadFile("../examples/envoy/envoy.yaml")), &doc); err != nil {
		t.Fatal(err)
	}
	var b bootstrapv3.Bootstrap
	if err := protojson.Unmarshal(must(json.Marshal(doc)), &b); err != nil {
		t.Fatal(err)
	}
	return &b
}

// edgeEnvoy is what the Envoy of examples/envoy/envoy.yaml does with a
// request up to its rate limit filter, by Envoy's documented rules: the
// client address it trusts (headers.rst, "x-forwarded-for"), the request
// headers the filters before the rate limit filter remove, the path it
// routes on (normalize_path, then merge_slashes), the route it picks (the
// first that matches, on the path without its query) and the descriptors
// the rate limit actions of that route and of its virtual host make, the
// route's first. Only the settings the example uses are simulated: any
// other fails the test, so that a change of the example is either
// simulated or refused, never misread.
type edgeEnvoy struct {
	t       *testing.T
	hcm     *hcmv3.HttpConnectionManager
	filter  string // the rate limit filter's name, its key in typed_per_filter_config
	rl      *ratelimitfilterv3.RateLimit
	removed []string // request headers removed before the rate limit filter
}

// edgeRequest is a request as a client sends it to the example's listener.
type edgeRequest struct {
	peer    string            // the client's address, the source of its connection
	target  string            // the request target as sent: path and query
	headers map[string]string // as the client sends them, lower-case names
	// verified holds the headers the operator's authentication filter sets
	// (between the example's filters and its rate limit filter, as
	// envoy.yaml asks) once it has verified the client's API key.
	verified map[string]string
}

// exampleEdge reads examples/envoy/envoy.yaml's first listener.
func exampleEdge(t *testing.T) *edgeEnvoy {
	t.Helper()
	b := exampleBootstrap(t)
	e := &edgeEnvoy{t: t, hcm: &hcmv3.HttpConnectionManager{}}
	if err := b.GetStaticResources().GetListeners()[0].GetFilterChains()[0].GetFilters()[0].GetTypedConfig().UnmarshalTo(e.hcm); err != nil {
		t.Fatal(err)
	}
	for _, f := range e.hcm.GetHttpFilters() {
		switch msg := must(f.GetTypedConfig().UnmarshalNew()).(type) {
		case *ratelimitfilterv3.RateLimit:
			e.filter, e.rl = f.GetName(), msg
			return e
		case *headermutationv3.HeaderMutation:
			for _, m := range msg.GetMutations().GetRequestMutations() {
				if m.GetRemove() == "" {
					t.Fatalf("http filter %s: request mutation %v is not simulated", f.GetName(), m)
				}
				e.removed = append(e.removed, strings.ToLower(m.GetRemove()))
			}
		default:
			t.Fatalf("http filter %s (%T) before the rate limit filter is not simulated", f.GetName(), msg)
		}
	}
	t.Fatal("examples/envoy/envoy.yaml: no rate limit filter")
	return nil
}

// clientAddress is the trusted client address, which the remote_address
// action sends: with use_remote_address false and xff_num_trusted_hops N,
// the (N+1)th X-Forwarded-For entry from the right; with it true, the Nth;
// the connection's source when N is 0 then, or when X-Forwarded-For has
// fewer entries.
func (e *edgeEnvoy) clientAddress(r edgeRequest) string {
	if len(e.hcm.GetOriginalIpDetectionExtensions()) > 0 {
		e.t.Fatal("original_ip_detection_extensions are not simulated")
	}
	var xff []string
	for _, a := range strings.Split(r.headers["x-forwarded-for"], ",") {
		if a = strings.TrimSpace(a); a != "" {
			xff = append(xff, a)
		}
	}
	n := int(e.hcm.GetXffNumTrustedHops())
	if !e.hcm.GetUseRemoteAddress().GetValue() {
		n++
	}
	if n == 0 || len(xff) < n {
		return r.peer
	}
	return xff[len(xff)-n]
}

// path is the path Envoy routes a target on: without its query, its dot
// segments removed (normalize_path) and runs of slashes merged
// (merge_slashes), in that order.
func (e *edgeEnvoy) path(target string) string {
	p, _, _ := strings.Cut(target, "?")
	if e.hcm.GetNormalizePath().GetValue() {
		p = removeDotSegments(p)
	}
	if e.hcm.GetMergeSlashes() {
		for strings.Contains(p, "//") {
			p = strings.ReplaceAll(p, "//", "/")
		}
	}
	return p
}

// removeDotSegments resolves "." and ".." in an absolute path (RFC 3986,
// 5.2.4).
func removeDotSegments(p string) string {
	segs := strings.Split(p, "/")[1:]
	var out []string
	for i, s := range segs {
		last := i == len(segs)-1
		switch s {
		case ".":
		case "..":
			if len(out) > 0 {
				out = out[:len(out)-1]
			}
		default:
			out = append(out, s)
			continue
		}
		if last {
			out = append(out, "")
		}
	}
	return "/" + strings.Join(out, "/")
}

// route is the first route of the virtual host that matches path.
func (e *edgeEnvoy) route(path string) (*routev3.VirtualHost, *routev3.Route) {
	vhs := e.hcm.GetRouteConfig().GetVirtualHosts()
	if len(vhs) != 1 || len(vhs[0].GetDomains()) != 1 || vhs[0].GetDomains()[0] != "*" {
		e.t.Fatal("only one virtual host, of domains [\"*\"], is simulated")
	}
	for _, r := range vhs[0].GetRoutes() {
		if e.matches(r.GetMatch(), path) {
			return vhs[0], r
		}
	}
	return vhs[0], nil
}

// matches reports whether m matches path.
func (e *edgeEnvoy) matches(m *routev3.RouteMatch, path string) bool {
	if len(m.GetHeaders())+len(m.GetQueryParameters())+len(m.GetCookies())+len(m.GetDynamicMetadata())+len(m.GetFilterState()) > 0 ||
		m.GetGrpc() != nil || m.GetTlsContext() != nil || m.GetRuntimeFraction() != nil {
		e.t.Fatalf("route match %v: only path matching is simulated", m)
	}
	fold := func(s string) string { return s }
	if m.GetCaseSensitive() != nil && !m.GetCaseSensitive().GetValue() {
		fold = strings.ToLower
	}
	switch spec := m.GetPathSpecifier().(type) {
	case *routev3.RouteMatch_Prefix:
		return strings.HasPrefix(fold(path), fold(spec.Prefix))
	case *routev3.RouteMatch_Path:
		return fold(path) == fold(spec.Path)
	case *routev3.RouteMatch_PathSeparatedPrefix:
		p := spec.PathSeparatedPrefix
		return len(path) >= len(p) && fold(path[:len(p)]) == fold(p) && (len(path) == len(p) || path[len(p)] == '/')
	default:
		e.t.Fatalf("route match %v is not simulated", m)
		return false
	}
}

// descriptors is what the rate limit filter asks for r.
func (e *edgeEnvoy) descriptors(r edgeRequest) []*ratelimitv3.RateLimitDescriptor {
	headers := map[string]string{}
	for k, v := range r.headers {
		headers[k] = v
	}
	for _, k := range e.removed {
		delete(headers, k)
	}
	for k, v := range r.verified {
		headers[k] = v
	}
	path := e.path(r.target)
	if _, q, ok := strings.Cut(r.target, "?"); ok {
		headers[":path"] = path + "?" + q
	} else {
		headers[":path"] = path
	}
	vh, route := e.route(path)
	if route == nil {
		return nil // no route: a 404, never asked about
	}
	groups := route.GetRoute().GetRateLimits()
	if e.includeVirtualHost(route) {
		groups = append(groups[:len(groups):len(groups)], vh.GetRateLimits()...)
	}
	var ds []*ratelimitv3.RateLimitDescriptor
	for _, g := range groups {
		if g.GetStage().GetValue() != e.rl.GetStage() {
			continue
		}
		if d := e.descriptor(g, e.clientAddress(r), headers); d != nil {
			ds = append(ds, d)
		}
	}
	return ds
}

// includeVirtualHost reports whether the virtual host's rate limits apply
// on route: its vh_rate_limits (per-route config of the rate limit filter)
// or include_vh_rate_limits, else only when the route has none.
func (e *edgeEnvoy) includeVirtualHost(route *routev3.Route) bool {
	if route.GetRoute().GetIncludeVhRateLimits().GetValue() {
		return true
	}
	option := ratelimitfilterv3.RateLimitPerRoute_OVERRIDE
	if cfg, ok := route.GetTypedPerFilterConfig()[e.filter]; ok {
		var per ratelimitfilterv3.RateLimitPerRoute
		if err := cfg.UnmarshalTo(&per); err != nil {
			e.t.Fatal(err)
		}
		if len(per.GetRateLimits()) > 0 || per.GetDomain() != "" {
			e.t.Fatalf("route %s: per-route rate_limits and domain are not simulated", route.GetName())
		}
		option = per.GetVhRateLimits()
	}
	switch option {
	case ratelimitfilterv3.RateLimitPerRoute_INCLUDE:
		return true
	case ratelimitfilterv3.RateLimitPerRoute_IGNORE:
		return false
	default:
		return len(route.GetRoute().GetRateLimits()) == 0
	}
}

// descriptor is the descriptor g's actions make, or nil when a header an
// action reads is absent (Envoy then sends none for g).
func (e *edgeEnvoy) descriptor(g *routev3.RateLimit, client string, headers map[string]string) *ratelimitv3.RateLimitDescriptor {
	var kv []string
	for _, a := range g.GetActions() {
		switch spec := a.GetActionSpecifier().(type) {
		case *routev3.RateLimit_Action_RemoteAddress_:
			kv = append(kv, "remote_address", client)
		case *routev3.RateLimit_Action_GenericKey_:
			key := spec.GenericKey.GetDescriptorKey()
			if key == "" {
				key = "generic_key"
			}
			kv = append(kv, key, spec.GenericKey.GetDescriptorValue())
		case *routev3.RateLimit_Action_RequestHeaders_:
			v, ok := headers[strings.ToLower(spec.RequestHeaders.GetHeaderName())]
			switch {
			case ok:
				kv = append(kv, spec.RequestHeaders.GetDescriptorKey(), v)
			case !spec.RequestHeaders.GetSkipIfAbsent():
				return nil
			}
		default:
			e.t.Fatalf("rate limit action %v is not simulated", a)
		}
	}
	if len(kv) == 0 {
		return nil
	}
	return desc(kv...)
}

// decide sends r's descriptors to h as the example's filter does, in its
// domain; a request without descriptors is not sent, and is allowed.
func (e *edgeEnvoy) decide(h *harness, r edgeRequest) *rlsv3.RateLimitResponse {
	ds := e.descriptors(r)
	if len(ds) == 0 {
		return &rlsv3.RateLimitResponse{OverallCode: ok}
	}
	return h.ask(request(e.rl.GetDomain(), 0, ds...))
}

// limitNames lists the names of the limits that decided resp, "" for a
// rule without a name, "none" for a descriptor no limit counts (an
// unlimited rule's, or one no rule reaches).
func limitNames(resp *rlsv3.RateLimitResponse) []string {
	var names []string
	for _, st := range resp.GetStatuses() {
		if st.GetCurrentLimit() == nil {
			names = append(names, "none")
			continue
		}
		names = append(names, st.GetCurrentLimit().GetName())
	}
	return names
}

// exampleRules serves examples/envoy/ratelimit-config.yaml.
func exampleRules(t *testing.T) *harness {
	return serve(t, string(must(os.ReadFile("../examples/envoy/ratelimit-config.yaml"))))
}
