package config

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/jwt"
)

// minJWKSRefresh is the least time between two scheduled fetches of a
// jwks_url.
const minJWKSRefresh = time.Minute

// maxJWTLeeway is the most clock skew identity.jwt allows on exp and nbf.
const maxJWTLeeway = 10 * time.Minute

// maxJWKSFileBytes bounds a JWK Set file: a set of a hundred keys is
// under 100 KB.
const maxJWKSFileBytes = 1 << 20

// JWT configures the verification of the tokens of one issuer (one entry
// of identity.jwt): whose signatures are believed, and which claims name
// the client and its plan. See jwt.Options, which it becomes.
type JWT struct {
	// Name labels the issuer in logs ("1", "2"… by position when empty);
	// Load refuses two issuers of one name.
	Name string
	// JWKSURL is the identity provider's JWK Set, fetched at start and
	// refreshed (https://, or http:// to a loopback host).
	JWKSURL string
	// Discover, instead of JWKSURL, reads the key set's URL from Issuer's
	// OpenID Connect discovery document at every fetch.
	Discover bool
	// CAFile names a PEM bundle of the CAs that sign JWKSURL's certificate
	// (and the discovery document's),
	// trusted instead of the system's roots (a cluster's own CA); CA is its
	// content, read when the configuration is loaded. Empty: the system's
	// roots.
	CAFile string
	CA     []byte
	// JWKSFile names a file holding a JWK Set, read when the configuration
	// is loaded (again at every reload); Keys is its content.
	JWKSFile string
	Keys     []byte
	// SecretFile names a file holding a shared secret for HS256, HS384 and
	// HS512 (see ReadSecret), read when the configuration is loaded;
	// Secret is its content.
	SecretFile string
	Secret     []byte
	// Issuer, when set, is the "iss" every token must carry; Audiences,
	// when set, the "aud"s of which a token must carry one.
	Issuer    string
	Audiences []string
	// SubjectClaim names the claim naming the client ("sub" when empty);
	// PlanClaim the claim naming its plan (none when empty).
	SubjectClaim, PlanClaim string
	// SubjectPrefix is written before the subject in the client's name
	// (jwt.Options.SubjectPrefix): "" lets every issuer, and a trusted
	// user header, name the same users.
	SubjectPrefix string
	// Plan names the plan of the tokens whose PlanClaim names none (the
	// default plan when empty).
	Plan string
	// Algorithms are the "alg"s accepted (those of the keys' kind when
	// empty).
	Algorithms []string
	// Leeway is the clock skew allowed on exp and nbf (1 minute when 0);
	// Refresh how often JWKSURL is fetched again (15 minutes when 0).
	Leeway, Refresh time.Duration
}

// Options returns the options of the verifier j describes, with a Client
// that trusts only j's CA when ca_file names one. Clock, Logger and
// OnFetch are left for the caller to set.
func (j *JWT) Options() jwt.Options {
	o := jwt.Options{Keys: j.Keys, KeysURL: j.JWKSURL, Discover: j.Discover, Secret: j.Secret, Algorithms: slices.Clone(j.Algorithms),
		Issuer: j.Issuer, Audiences: slices.Clone(j.Audiences), SubjectClaim: j.SubjectClaim, SubjectPrefix: j.SubjectPrefix, PlanClaim: j.PlanClaim,
		Plan: j.Plan, Leeway: j.Leeway, Refresh: j.Refresh}
	if j.CA != nil {
		o.Client = clientTrusting(j.CA)
	}
	return o
}

// clientTrusting returns an HTTP client that trusts only the CAs of pem
// (checked at load) for the fetches of a JWK Set.
func clientTrusting(pem []byte) *http.Client {
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(pem)
	tr := &http.Transport{Proxy: http.ProxyFromEnvironment, DisableKeepAlives: true,
		TLSClientConfig: &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}}
	return &http.Client{Transport: tr, Timeout: 10 * time.Second}
}

// Equal reports whether j and o verify alike (the same settings and the
// same file contents).
func (j *JWT) Equal(o *JWT) bool {
	if j == nil || o == nil {
		return j == o
	}
	return j.Name == o.Name && j.Plan == o.Plan && j.JWKSURL == o.JWKSURL && j.Discover == o.Discover && j.CAFile == o.CAFile && string(j.CA) == string(o.CA) && j.JWKSFile == o.JWKSFile && string(j.Keys) == string(o.Keys) &&
		j.SecretFile == o.SecretFile && string(j.Secret) == string(o.Secret) && j.Issuer == o.Issuer &&
		slices.Equal(j.Audiences, o.Audiences) && j.SubjectClaim == o.SubjectClaim && j.SubjectPrefix == o.SubjectPrefix && j.PlanClaim == o.PlanClaim &&
		slices.Equal(j.Algorithms, o.Algorithms) && j.Leeway == o.Leeway && j.Refresh == o.Refresh
}

// unmadeVerifier stands for identity.jwt's verifier in the options
// HTTPLimitOptions returns, which makes no verifier (one that fetches keys
// runs until closed): it refuses every token, until the caller puts the
// verifier it makes in its place.
type unmadeVerifier struct{}

func (unmadeVerifier) VerifyToken(context.Context, string) (httplimit.TokenClaims, error) {
	return httplimit.TokenClaims{}, errors.New("config: identity.jwt's verifier is not made: set httplimit.Options.Tokens to the jwt.Verifier of each Identity.JWT's Options (jwt.NewIssuers of them, for several)")
}

// jwts reads identity.jwt: one issuer's mapping, or a list of them, each
// with an issuer of its own when there are several.
func (d *decoder) jwts(n *yaml.Node, path string, raw *rawConfig) []*JWT {
	if n.Kind != yaml.SequenceNode {
		return []*JWT{d.jwt(n, path, raw, 0)}
	}
	var out []*JWT
	issuers := map[string]bool{}
	names := map[string]string{} // name → the entry's path
	d.List(n, path, func(i int, e *yaml.Node, p string) {
		j := d.jwt(e, p, raw, i)
		if j.Name == "" {
			j.Name = fmt.Sprint(i + 1)
		}
		if was, dup := names[j.Name]; dup {
			d.Errorf(e, p+".name", "%q is already the name of %s: give each issuer a name of its own", j.Name, was)
		} else {
			names[j.Name] = p
		}
		switch {
		case len(n.Content) > 1 && j.Issuer == "":
			d.Errorf(e, p, "each of several issuers needs its issuer: the iss of its tokens, which tells them apart")
		case issuers[j.Issuer]:
			d.Errorf(e, p+".issuer", "%q is already the issuer of another entry", j.Issuer)
		}
		issuers[j.Issuer] = true
		out = append(out, j)
	})
	if len(out) == 0 {
		d.Errorf(n, path, "an empty list: name an issuer, or leave identity.jwt out")
	}
	d.prefixesApart(n, out)
	return out
}

// prefixesApart refuses issuers whose clients could be one another's
// though their prefixes differ: a client is its issuer's subject_prefix
// and the token's subject as text, so where one entry's prefix begins
// another's ("" begins every one), a token of the first whose subject is
// the rest of the other's prefix and a name (sub "svc.alice" beside
// "svc.") is the other's client of that name. Entries of one prefix share
// their clients, as documented (the same people at two issuers).
func (d *decoder) prefixesApart(n *yaml.Node, issuers []*JWT) {
	if len(issuers) < 2 {
		return
	}
	for i, a := range issuers {
		for _, b := range issuers[i+1:] {
			short, long := a, b
			if len(long.SubjectPrefix) < len(short.SubjectPrefix) {
				short, long = long, short
			}
			if short.SubjectPrefix != long.SubjectPrefix && strings.HasPrefix(long.SubjectPrefix, short.SubjectPrefix) {
				d.Errorf(n, "identity.jwt", "issuers %s and %s: subject_prefix %q begins %q, so a token of %s whose subject is %q is %s's client %q: "+
					"give each issuer a prefix that begins no other's (users: idp., services: svc.)",
					short.Name, long.Name, short.SubjectPrefix, long.SubjectPrefix, short.Name,
					long.SubjectPrefix[len(short.SubjectPrefix):]+"alice", long.Name, "alice")
			}
		}
	}
}

// jwtPlanField is where rawConfig.locs keeps the place of identity.jwt[i].plan.
func jwtPlanField(i int) string { return fmt.Sprintf("jwt:%d.plan", i) }

// jwt reads one issuer of identity.jwt, the i-th, and has the verifier's
// options judged.
func (d *decoder) jwt(n *yaml.Node, path string, raw *rawConfig, i int) *JWT {
	j := &JWT{}
	before := len(d.Errs)
	read := map[string]*yaml.Node{} // each key's value, for jwtOptionsError
	fields := map[string]field{
		"name": func(n *yaml.Node, p string) { j.Name = d.label(n, p) },
		"plan": func(n *yaml.Node, p string) {
			j.Plan = d.Str(n, p)
			raw.at(jwtPlanField(i), n, p)
		},
		"jwks_url": func(n *yaml.Node, p string) { j.JWKSURL = d.Str(n, p) },
		"discover": func(n *yaml.Node, p string) { j.Discover = d.Bool(n, p) },
		"ca_file": func(n *yaml.Node, p string) {
			if j.CAFile = d.file(n, p); d.unread || j.CAFile == "" {
				return
			}
			b, err := readBounded(j.CAFile, maxPEMBytes)
			if err == nil && !x509.NewCertPool().AppendCertsFromPEM(b) {
				err = fmt.Errorf("%s holds no PEM certificate", j.CAFile)
			}
			if err != nil {
				d.Errorf(n, p, "%v", err)
			}
			j.CA = b
		},
		"jwks_file": func(n *yaml.Node, p string) {
			if j.JWKSFile = d.file(n, p); d.unread {
				j.Keys = []byte(unreadJWKS)
				return
			}
			b, err := readBounded(j.JWKSFile, maxJWKSFileBytes)
			if err != nil && j.JWKSFile != "" {
				d.Errorf(n, p, "%v", err)
			}
			j.Keys = b
		},
		"secret_file": func(n *yaml.Node, p string) {
			j.SecretFile = d.file(n, p)
			s, err := d.secret(j.SecretFile)
			if err != nil && j.SecretFile != "" {
				d.Errorf(n, p, "%v", err)
			}
			j.Secret = []byte(s)
		},
		"issuer": func(n *yaml.Node, p string) { j.Issuer = d.Str(n, p) },
		"audiences": func(n *yaml.Node, p string) {
			d.emptyList(n, p, "aud not checked", "list the audiences a token must carry one of, or leave audiences out")
			j.Audiences = d.Strings(n, p)
		},
		"subject_claim":  func(n *yaml.Node, p string) { j.SubjectClaim = d.Str(n, p) },
		"subject_prefix": func(n *yaml.Node, p string) { j.SubjectPrefix = d.Str(n, p) },
		"plan_claim":     func(n *yaml.Node, p string) { j.PlanClaim = d.Str(n, p) },
		"algorithms": func(n *yaml.Node, p string) {
			d.emptyList(n, p, "every asymmetric algorithm (with a secret, the HMAC ones it is long enough for)", "list the algorithms, or leave algorithms out")
			j.Algorithms = d.Strings(n, p)
		},
		"leeway": func(n *yaml.Node, p string) {
			if j.Leeway = d.Duration(n, p); j.Leeway > maxJWTLeeway {
				d.Errorf(n, p, "%v is more than clocks disagree by: at most %v (an expired token would be believed that long)", j.Leeway, maxJWTLeeway)
			}
		},
		"refresh": func(n *yaml.Node, p string) {
			if j.Refresh = d.Duration(n, p); j.Refresh > 0 && j.Refresh < minJWKSRefresh {
				d.Errorf(n, p, "%v is too often: at least %v (a key the provider rotates in is fetched when a token names it)", j.Refresh, minJWKSRefresh)
			}
		},
	}
	for key, f := range fields {
		fields[key] = func(n *yaml.Node, p string) { read[key] = n; f(n, p) }
	}
	d.Mapping(n, path, fields)
	sources := 0
	for _, set := range []bool{j.JWKSURL != "", j.Discover, j.JWKSFile != "", j.SecretFile != ""} {
		if set {
			sources++
		}
	}
	switch {
	case sources != 1:
		d.Errorf(n, path, "name exactly one of jwks_url, discover, jwks_file and secret_file: the keys that sign the tokens")
	case j.CAFile != "" && j.JWKSURL == "" && !j.Discover:
		d.Errorf(n, path+".ca_file", "only for a jwks_url or discover, whose server's certificate it checks")
	case len(d.Errs) == before:
		if err := j.Options().Validate(); err != nil {
			d.jwtOptionsError(n, path, read, err)
		}
	}
	return j
}

// jwtKeys are the keys of an issuer's mapping by the field of jwt.Options
// each sets.
var jwtKeys = map[string]string{"KeysURL": "jwks_url", "Keys": "jwks_file", "Secret": "secret_file", "Discover": "discover",
	"Issuer": "issuer", "Audiences": "audiences", "SubjectClaim": "subject_claim", "SubjectPrefix": "subject_prefix",
	"PlanClaim": "plan_claim", "Algorithms": "algorithms", "Leeway": "leeway", "Refresh": "refresh"}

// jwtWords names the fields of jwt.Options in the words of the file.
var jwtWords = strings.NewReplacer("Keys or KeysURL", "jwks_url or jwks_file", "KeysURL", "jwks_url",
	"Secret", "secret_file", "Discover", "discover", "Issuer", "issuer")

// jwtOptionsError reports err, jwt.Options.Validate's of the issuer read
// from n at path ("jwt: Field: message"), at the key that set Field (read
// holds each key's value), with its message in the file's words; an
// audience at its place in the list. An error of no key read is reported
// at n.
func (d *decoder) jwtOptionsError(n *yaml.Node, path string, read map[string]*yaml.Node, err error) {
	field, msg, ok := strings.Cut(strings.TrimPrefix(err.Error(), "jwt: "), ": ")
	key, known := jwtKeys[field]
	at := read[key]
	if !ok || !known || at == nil {
		d.Errorf(n, path, "%v", err)
		return
	}
	p := path + "." + key
	var i int
	if _, scanErr := fmt.Sscanf(msg, "[%d] ", &i); scanErr == nil && at.Kind == yaml.SequenceNode && i < len(at.Content) {
		at, p, msg = at.Content[i], fmt.Sprintf("%s[%d]", p, i), strings.TrimPrefix(msg, fmt.Sprintf("[%d] ", i))
	}
	d.Errorf(at, p, "%s", jwtWords.Replace(msg))
}
