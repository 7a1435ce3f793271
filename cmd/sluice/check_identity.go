package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/sluice-dev/sluice/config"
)

// printIdentity says how clients are told apart, in the order identity
// tries: API keys, tokens, the user header, the address. It never prints
// a secret.
func printIdentity(w io.Writer, cfg *config.Config) {
	id := cfg.Identity
	parts := []string{fmt.Sprintf("API key in %s (unlisted: %s)", strings.Join(id.APIKeyHeaders, ", "), unlistedText(id.UnknownKeys))}
	if len(id.JWT) > 0 {
		var issuers []string
		for _, j := range id.JWT {
			issuers = append(issuers, jwtText(j, len(id.JWT) > 1))
		}
		where := ""
		if len(id.TokenHeaders) > 0 {
			where = "in " + strings.Join(id.TokenHeaders, ", ") + " "
		}
		parts = append(parts, "JWT "+where+strings.Join(issuers, " or "))
	}
	if id.UserHeader != "" {
		parts = append(parts, "user in "+id.UserHeader+" from trusted proxies")
	}
	parts = append(parts, fmt.Sprintf("address (IPv4 /%d, IPv6 /%d)", id.IPv4Prefix, id.IPv6Prefix))
	fmt.Fprintf(w, "IDENTITY  %s\n", strings.Join(parts, " > "))
}

func unlistedText(unknownKeys string) string {
	if unknownKeys == "key" {
		return "a client of its own"
	}
	return "by address"
}

// jwtText describes an issuer of identity.jwt: whose keys, and the claims
// it checks; named, when there are several.
func jwtText(j *config.JWT, named bool) string {
	var keys string
	switch {
	case j.JWKSURL != "":
		keys = "keys from " + j.JWKSURL
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
		s += ", iss " + j.Issuer
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
	return s + "; not verified: by address)"
}
