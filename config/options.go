package config

import (
	"bytes"
	"errors"
	"slices"
	"strings"

	"github.com/sluice-dev/sluice/envoy"
	"github.com/sluice-dev/sluice/httplimit"
)

// HTTPLimitOptions returns the options of the HTTP middleware that c
// describes: its plans and global limits, keys (in the order of their
// SHA-256), identity, exempt routes and response. Logger, Clock, Observer,
// ErrorHandler and StoreLeases (whether the store in force leases quota,
// which a reload does not change) are left for the caller to set, and so
// is Tokens: with identity.jwt it is a stand-in that refuses every token,
// to be replaced by the jwt.Verifier of each of c.Identity.JWT's Options
// (jwt.NewIssuers of them, for several), which the caller closes. Fields c leaves empty
// stay empty, which httplimit takes as its defaults; the options share c's
// plans and slices.
func (c *Config) HTTPLimitOptions() httplimit.Options {
	keys := make([]httplimit.Key, 0, len(c.Keys))
	for h, k := range c.Keys {
		keys = append(keys, httplimit.Key{Name: k.Name, SHA256: h, Plan: k.Plan})
	}
	slices.SortFunc(keys, func(a, b httplimit.Key) int { return bytes.Compare(a.SHA256[:], b.SHA256[:]) })
	return c.httpLimitOptions(keys)
}

// httpLimitOptions is HTTPLimitOptions with the keys given.
func (c *Config) httpLimitOptions(keys []httplimit.Key) httplimit.Options {
	pol := c.Policy
	if pol == nil {
		pol = &httplimit.Policy{}
	}
	id := &c.Identity
	var tokens httplimit.TokenVerifier
	if len(id.JWT) > 0 {
		tokens = unmadeVerifier{}
	}
	return httplimit.Options{Tokens: tokens,
		Plans: pol.Plans, Global: pol.Global, DefaultPlan: pol.DefaultPlan, AnonymousPlan: pol.AnonymousPlan,
		Keys: keys, APIKeyHeaders: id.APIKeyHeaders, TokenHeaders: id.TokenHeaders, UserHeader: id.UserHeader, PlanHeader: id.PlanHeader,
		TrustedProxies: id.TrustedProxies, TrustUnixPeers: id.TrustUnixPeers, ForwardedHeader: id.ForwardedHeader,
		IPv4Prefix: id.IPv4Prefix, IPv6Prefix: id.IPv6Prefix, UnknownKeys: id.UnknownKeys,
		Rules: c.Rules, Penalty: c.Penalty, Exempt: c.Exempt, ExemptAddresses: c.ExemptAddresses, ExemptKeys: c.ExemptKeys,
		ExemptUsers: c.ExemptUsers, ExemptPlans: c.ExemptPlans, RefusalTemplate: c.Response.Template, HiddenLimits: c.Response.Hide, Count: c.Count, GlobalStatus: c.Response.GlobalStatus, RetryJitter: c.Response.RetryJitter, Headers: c.Response.Headers, DocsURL: c.Response.DocsURL,
	}
}

// EnvoyOptions returns the options of the Envoy rate limit service that c
// describes. Observer is left for the caller to set.
func (c *Config) EnvoyOptions() envoy.Options {
	e := &c.Envoy
	return envoy.Options{Headers: e.Headers, LimitHeader: e.LimitHeader, RemainingHeader: e.RemainingHeader, ResetHeader: e.ResetHeader}
}

// envoyFields prefixes the fields of envoy.Options in rawConfig.locs.
const envoyFields = "envoy:"

// fieldOf returns the field a field error of httplimit or envoy names and
// what it says of it; for another error, no field and its text.
func fieldOf(err error) (field, msg string) {
	var he *httplimit.FieldError
	if errors.As(err, &he) {
		return he.Field, he.Err.Error()
	}
	var ee *envoy.FieldError
	if errors.As(err, &ee) {
		return ee.Field, ee.Err.Error()
	}
	return "", err.Error()
}

// parentField returns the field that encloses field: "Plans[0]" for
// "Plans[0].Limits" and for `Plans[0].Costs["GET /a.b"]` once its index is
// gone; "" at the top.
func parentField(field string) string {
	if strings.HasSuffix(field, "\"]") {
		if i := strings.LastIndex(field, "[\""); i > 0 {
			return field[:i]
		}
	}
	if strings.HasSuffix(field, "]") {
		if i := strings.LastIndexByte(field, '['); i > 0 {
			return field[:i]
		}
	}
	if i := strings.LastIndexByte(field, '.'); i > 0 {
		return field[:i]
	}
	return ""
}
