package jwt

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/sluice-dev/sluice/internal/redact"
)

// hmacAlgs returns the algorithms a Secret verifies.
func hmacAlgs() []jose.SignatureAlgorithm {
	return []jose.SignatureAlgorithm{jose.HS256, jose.HS384, jose.HS512}
}

// hmacKeyLen returns the least length of a key for the HMAC algorithm a,
// in bytes: its hash's.
func hmacKeyLen(a jose.SignatureAlgorithm) int {
	switch a {
	case jose.HS384:
		return 48
	case jose.HS512:
		return 64
	}
	return 32
}

// keyAlgs returns the algorithms the keys of a JWK Set verify.
func keyAlgs() []jose.SignatureAlgorithm {
	return []jose.SignatureAlgorithm{
		jose.RS256, jose.RS384, jose.RS512, jose.PS256, jose.PS384, jose.PS512,
		jose.ES256, jose.ES384, jose.ES512, jose.EdDSA,
	}
}

// Validate returns nil when New accepts o, else the error New returns,
// which names the first field of o that is wrong ("jwt: Secret: ...").
// It reads Keys but fetches nothing.
func (o Options) Validate() error {
	_, _, err := o.validate()
	return err
}

// validate checks o and returns the algorithms it accepts and the set of
// Keys (nil without Keys), or an error naming the first field that is
// wrong.
func (o *Options) validate() ([]jose.SignatureAlgorithm, *keySet, error) {
	sources := 0
	for _, set := range []bool{len(o.Keys) > 0, o.KeysURL != "", o.Discover, len(o.Secret) > 0} {
		if set {
			sources++
		}
	}
	switch {
	case sources == 0:
		return nil, nil, fieldError("Keys, KeysURL, Discover, Secret", "one must be set")
	case sources > 1:
		return nil, nil, fieldError("Keys, KeysURL, Discover, Secret", "only one may be set")
	case o.Discover && o.Issuer == "":
		return nil, nil, fieldError("Discover", "needs Issuer, whose discovery document names the keys")
	case len(o.Secret) > 0 && len(o.Secret) < minSecret:
		return nil, nil, fieldError("Secret", "%d bytes, at least %d are needed", len(o.Secret), minSecret)
	}
	if o.KeysURL != "" {
		if err := checkURL(o.KeysURL); err != nil {
			return nil, nil, fieldError("KeysURL", "%w", err)
		}
	}
	if o.Discover {
		if err := checkURL(o.Issuer); err != nil {
			return nil, nil, fieldError("Issuer", "with Discover: %w", err)
		}
		if strings.ContainsAny(o.Issuer, "?#") {
			// Its discovery document's URL would end its query or its
			// fragment instead of its path.
			return nil, nil, fieldError("Issuer", "with Discover: %q has a query or a fragment, which an issuer never has (OpenID Connect Discovery 1.0, section 3)", redact.URL(o.Issuer))
		}
	}
	algs, err := o.algorithms()
	if err != nil {
		return nil, nil, err
	}
	if len(o.SubjectPrefix) > maxSubjectPrefix || strings.IndexFunc(o.SubjectPrefix, func(r rune) bool { return r <= ' ' || r > '~' }) >= 0 {
		return nil, nil, fieldError("SubjectPrefix", "%.80q: at most %d bytes of printable ASCII, no spaces", o.SubjectPrefix, maxSubjectPrefix)
	}
	for i, a := range o.Audiences {
		if a == "" {
			return nil, nil, fieldError("Audiences", "[%d] is empty", i)
		}
	}
	for _, d := range []struct {
		field string
		value int64
	}{{"Leeway", int64(o.Leeway)}, {"Refresh", int64(o.Refresh)}, {"MinRefresh", int64(o.MinRefresh)}} {
		if d.value < 0 {
			return nil, nil, fieldError(d.field, "negative")
		}
	}
	if o.Leeway > maxLeeway {
		return nil, nil, fieldError("Leeway", "%v is more than clocks disagree by: at most %v (an expired token would be believed that long)", o.Leeway, maxLeeway)
	}
	var keys *keySet
	if len(o.Keys) > 0 {
		if keys, err = parseSet(o.Keys); err != nil {
			return nil, nil, fieldError("Keys", "%w", err)
		}
	}
	return algs, keys, nil
}

// algorithms returns the algorithms o accepts: Algorithms, or the default
// of o's kind of key.
func (o *Options) algorithms() ([]jose.SignatureAlgorithm, error) {
	known, other, kind := keyAlgs(), hmacAlgs(), "Keys or KeysURL"
	if len(o.Secret) > 0 {
		known, other, kind = hmacAlgs(), keyAlgs(), "Secret"
	}
	if len(o.Algorithms) == 0 {
		// Each HMAC algorithm needs a key as long as its hash.
		return slices.DeleteFunc(known, func(a jose.SignatureAlgorithm) bool {
			return len(o.Secret) > 0 && len(o.Secret) < hmacKeyLen(a)
		}), nil
	}
	algs := make([]jose.SignatureAlgorithm, 0, len(o.Algorithms))
	for _, s := range o.Algorithms {
		a := jose.SignatureAlgorithm(s)
		switch {
		case len(o.Secret) > 0 && slices.Contains(hmacAlgs(), a) && len(o.Secret) < hmacKeyLen(a):
			return nil, fieldError("Algorithms", "%s needs a Secret of at least %d bytes (RFC 7518 section 3.2), not %d", s, hmacKeyLen(a), len(o.Secret))
		case strings.EqualFold(s, "none"):
			return nil, fieldError("Algorithms", `"none" is never accepted: it is a token without a signature`)
		case slices.Contains(other, a):
			return nil, fieldError("Algorithms", "%s cannot be accepted with %s: HMAC and public-key algorithms are never mixed (algorithm confusion)", s, kind)
		case !slices.Contains(known, a):
			return nil, fieldError("Algorithms", "%q is not one of %v", s, known)
		case !slices.Contains(algs, a):
			algs = append(algs, a)
		}
	}
	return algs, nil
}

// checkURL says whether s may be fetched a JWK Set from: https://, or
// http:// to a loopback host. Its error never shows s's password: it
// names s as redact.URL shows it, and why url.Parse refuses s in
// url.Parse's words alone (parseReason).
func checkURL(s string) error {
	u, err := url.Parse(s)
	if err != nil {
		return fmt.Errorf("%q is not a URL: %s", redact.URL(s), parseReason(err))
	}
	return checkParsedURL(u)
}

// parseReason returns why url.Parse refused a URL (its error err)
// without the URL and without the part of it that its words quote,
// which may be a password's: `parse "…": invalid port ":secret" after
// host` is "invalid port".
func parseReason(err error) string {
	if uerr, ok := errors.AsType[*url.Error](err); ok {
		err = uerr.Err
	}
	reason, _, _ := strings.Cut(err.Error(), `"`)
	return strings.TrimSpace(reason)
}

// redacted returns u as an error names it: without its password.
func redacted(u *url.URL) string { return redact.URL(u.String()) }

// checkHop says whether a fetch may go on from the URL from to the URL to
// (a redirect, or the "jwks_uri" of a discovery document): to must be a
// URL a set may be fetched from, not http:// when from is https://, and
// not on a loopback host, nor on a name of the local host (localName),
// when from is not on a loopback host.
func checkHop(from, to *url.URL) error {
	switch {
	case from.Scheme == "https" && to.Scheme != "https":
		return fmt.Errorf("%q: from https:// to %s://", redacted(to), to.Scheme)
	case (loopback(to.Hostname()) || localName(to.Hostname())) && !loopback(from.Hostname()):
		return fmt.Errorf("%q: to a loopback host from %q, which is not one", redacted(to), from.Hostname())
	}
	return checkParsedURL(to)
}

// checkParsedURL is checkURL of a parsed URL.
func checkParsedURL(u *url.URL) error {
	switch {
	case u.Scheme == "https" && u.Host != "":
		return nil
	case u.Scheme == "http" && loopback(u.Hostname()):
		return nil
	case u.Scheme == "http":
		return fmt.Errorf("%q: http:// only to a loopback host (127.0.0.0/8, ::1, 0.0.0.0, ::, localhost); use https://", redacted(u))
	default:
		return fmt.Errorf("%q is not an https:// URL", redacted(u))
	}
}
