package server

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/internal/routes"
)

// namesHost reports whether cfg decides anything by a request's host: a
// rule's hosts (of its match or its except) or its "host" key, or a
// pattern with a host among the plans' costs, the exemptions and the
// degradation classes. A forward-auth request without X-Forwarded-Host
// has no host, and every one of these then decides it as a request to no
// host.
func namesHost(cfg *config.Config) bool {
	for _, r := range cfg.Rules {
		hasHosts := func(m httplimit.Match) bool { return len(m.Hosts) > 0 }
		if slices.ContainsFunc(r.Alternatives(), hasHosts) || slices.ContainsFunc(r.Except, hasHosts) ||
			slices.Contains(r.Key, httplimit.KeyHost) {
			return true
		}
	}
	if cfg.Policy != nil {
		for _, p := range cfg.Policy.Plans {
			for pattern := range p.Costs {
				if patternHasHost(pattern) {
					return true
				}
			}
		}
	}
	d := &cfg.Degradation
	return slices.ContainsFunc(cfg.Exempt, patternHasHost) || slices.ContainsFunc(d.Expensive, patternHasHost) ||
		slices.ContainsFunc(d.Critical, patternHasHost) || slices.ContainsFunc(d.Health, patternHasHost)
}

// patternHasHost reports whether the ServeMux pattern p names a host.
func patternHasHost(p string) bool {
	i, j := routes.HostSpan(p)
	return i < j
}

// describedHost returns the host that h's X-Forwarded-Host and the hosts of
// its X-Original-URL (hosts) describe, and named, whether any describes
// it: hostless when an X-Original-URL names none (a request without Host),
// which makes the request one to no host. X-Original-URL's host is the
// client's Host header; X-Forwarded-Host, as ingress-nginx is set up to
// send it ($host), the host nginx routes by, which an absolute-form target
// names instead ("GET http://www.example.com/ HTTP/1.1" with "Host:
// api.example.com" is served as www.example.com's). So the two must name
// the same host (sameHost: in any case, a port or a final dot aside), and
// the host is X-Forwarded-Host's when it is sent. Beside a hostless
// X-Original-URL, X-Forwarded-Host must be absent or catchAllServer
// ($host of a request without Host that ingress-nginx's default server
// takes). Descriptions that differ are an error, as is a host validHost
// refuses.
func describedHost(h http.Header, hosts []string, hostless bool) (host string, named bool, err error) {
	forwarded, ok := described(h["X-Forwarded-Host"])
	original, ok2 := described(hosts)
	if hostless && forwarded == catchAllServer {
		forwarded = ""
	}
	agree := ok && ok2 && (forwarded == "" || original == "" || sameHost(forwarded, original))
	if !agree || hostless && firstOf(forwarded, original) != "" {
		return "", false, errors.New("X-Forwarded-Host and X-Original-URL name different hosts: the front proxy passed on a client's own, or routed by the host of an absolute-form target that is not the Host header's; have it clear the headers it does not set (ingress-nginx: X-Forwarded-Host: $host in auth-proxy-set-headers)")
	}
	host = firstOf(forwarded, original)
	if err := validHost(host); err != nil {
		return "", false, fmt.Errorf("X-Forwarded-Host / X-Original-URL: %w", err)
	}
	return host, host != "" || hostless, nil
}

// catchAllServer is the server_name of ingress-nginx's default server,
// which serves the Ingresses without a host and so requests without Host:
// nginx's $host for such a request.
const catchAllServer = "_"

// sameHost reports whether the hosts a and b (with or without a port) name
// one host as rules, keys and patterns match it: in any case, without the
// port and the final dots.
func sameHost(a, b string) bool {
	return strings.EqualFold(strings.TrimRight(hostOnlyOf(a), "."), strings.TrimRight(hostOnlyOf(b), "."))
}

// originalURLs splits each X-Original-URL of h (ingress-nginx's
// description of the request, $scheme://$http_host$request_uri: its host
// is the Host header's, not the request line's) into its
// host and request URI (originalURL), an empty line being no description;
// hostless reports one that names no host.
func originalURLs(h http.Header) (hosts, uris []string, hostless bool, err error) {
	for _, v := range h["X-Original-Url"] {
		if v == "" {
			continue
		}
		host, uri, err := originalURL(v)
		if err != nil {
			return nil, nil, false, err
		}
		hosts, uris = append(hosts, host), append(uris, uri)
		hostless = hostless || host == ""
	}
	return hosts, uris, hostless, nil
}

// originalURL splits an X-Original-URL into its host and request URI. It
// is "http://" or "https://", then the host as the client sent it ("" for
// a request without Host), then the request URI from the first "/" on,
// which describe checks as any other (describedTarget). A host holds no
// "/" (nginx refuses a Host with one); one with "?", "#", "@" or "\", or
// one validHost refuses, names no host a proxy routes by, and is an error,
// as is a value of any other form.
func originalURL(v string) (host, uri string, err error) {
	rest, ok := strings.CutPrefix(v, "http://")
	if !ok {
		rest, ok = strings.CutPrefix(v, "https://")
	}
	i := strings.IndexByte(rest, '/')
	if !ok || i < 0 {
		return "", "", errors.New(`X-Original-URL: want "http://" or "https://", the host and the request URI, as ingress-nginx sends it`)
	}
	host, uri = rest[:i], rest[i:]
	if strings.ContainsAny(host, `?#@\`) || validHost(host) != nil {
		return "", "", fmt.Errorf(`X-Original-URL: its host is not a host name or address (a space, a control character, "?", "#", "@" or "\" in it, or over %d bytes)`, maxHostLen)
	}
	return host, uri, nil
}
