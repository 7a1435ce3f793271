package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/internal/redact"
	"github.com/sluice-dev/sluice/server"
)

// printIdentity says how clients are told apart, in the order identity
// tries: API keys, tokens, the user header, the address; then where a plan
// header is believed from. Headers are believed only from the trusted
// proxies it lists, and it says so when none is; under unknown_keys: key
// it warns, as serve logs, that made-up keys are clients of their own. It
// never prints a secret.
func printIdentity(w io.Writer, cfg *config.Config) {
	id := cfg.Identity
	var trusted []string
	for _, p := range id.TrustedProxies {
		trusted = append(trusted, p.String())
	}
	if id.TrustUnixPeers {
		trusted = append(trusted, "unix:")
	}
	// A token not verified names no one, nor does a key not listed under
	// unknown_keys: ip: the client is told apart by what follows, the user
	// header when one is believed.
	userBelieved := id.UserHeader != "" && len(trusted) > 0
	unverified := "by address"
	if userBelieved {
		unverified = "as without a token"
	}
	parts := []string{fmt.Sprintf("API key in %s (unlisted: %s)", strings.Join(id.APIKeyHeaders, ", "), unlistedText(id.UnknownKeys, userBelieved))}
	if len(id.JWT) > 0 {
		var issuers []string
		for _, j := range id.JWT {
			issuers = append(issuers, jwtText(j, len(id.JWT) > 1, unverified))
		}
		where := ""
		if len(id.TokenHeaders) > 0 {
			where = "in " + strings.Join(id.TokenHeaders, ", ") + " "
		}
		parts = append(parts, "JWT "+where+strings.Join(issuers, " or "))
	}
	from := " from trusted proxies " + strings.Join(trusted, ", ")
	if id.UserHeader != "" && len(trusted) > 0 {
		parts = append(parts, "user in "+id.UserHeader+from)
	}
	parts = append(parts, fmt.Sprintf("address (IPv4 /%d, IPv6 /%d)", id.IPv4Prefix, id.IPv6Prefix))
	line := strings.Join(parts, " > ")
	switch headers := strings.Join(nonEmpty(id.UserHeader, id.PlanHeader), ", "); {
	case headers != "" && len(trusted) == 0:
		line += "; " + headers + ": never believed (no trusted_proxies)"
	case id.PlanHeader != "":
		line += "; plan in " + id.PlanHeader + from
	}
	if id.UnknownKeys == "key" {
		line += "; WARNING: " + server.UnknownKeysWarning
	}
	fmt.Fprintf(w, "IDENTITY  %s\n", line)
}

// nonEmpty returns the strings of ss that are not empty.
func nonEmpty(ss ...string) []string {
	var out []string
	for _, s := range ss {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// unlistedText says how a key not listed is told apart under unknownKeys:
// as a client of its own ("key"), else as a request without a key, by the
// user header when userBelieved, by address otherwise.
func unlistedText(unknownKeys string, userBelieved bool) string {
	switch {
	case unknownKeys == "key":
		return "a client of its own"
	case userBelieved:
		return "as without a key"
	}
	return "by address"
}

// jwtText describes an issuer of identity.jwt: whose keys, the claims it
// checks, and unverified, how a client whose token it refuses is told
// apart; named, when there are several.
func jwtText(j *config.JWT, named bool, unverified string) string {
	var keys string
	switch {
	case j.JWKSURL != "":
		keys = "keys from " + redact.URL(j.JWKSURL)
	case j.Discover:
		keys = "keys its discovery document names"
	case j.JWKSFile != "":
		keys = "keys of " + j.JWKSFile
	default:
		keys = "HMAC secret from " + j.SecretFile
	}
	s := "(" + keys
	if named {
		s = j.Name + " " + s
	}
	if j.Issuer != "" {
		s += ", iss " + redact.URL(j.Issuer)
	}
	if len(j.Audiences) > 0 {
		s += ", aud " + strings.Join(j.Audiences, " or ")
	}
	s += ", client from claim " + or(j.SubjectClaim, "sub")
	if j.PlanClaim != "" {
		s += ", plan from claim " + j.PlanClaim
	}
	if j.Plan != "" {
		s += ", else plan " + j.Plan
	}
	return s + "; not verified: " + unverified + ")"
}
