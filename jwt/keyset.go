package jwt

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	jose "github.com/go-jose/go-jose/v4"
)

// A keySet is the keys a Verifier verifies with. It is never modified once
// made, so that it can be read without a lock.
type keySet struct {
	keys []key
	// anyKid: the keys verify tokens whatever their "kid" (a Secret).
	anyKid bool
}

// A key is one key of a set.
type key struct {
	id  string                  // its "kid"
	alg jose.SignatureAlgorithm // its "alg": the only one it verifies; "": any its type fits
	pub any                     // *rsa.PublicKey, *ecdsa.PublicKey, ed25519.PublicKey or []byte (HMAC)
}

// secretSet returns the set of one key, secret, for the HMAC algorithms.
func secretSet(secret []byte) *keySet {
	return &keySet{keys: []key{{pub: secret}}, anyKid: true}
}

// len returns how many keys s holds; 0 for a nil s.
func (s *keySet) len() int {
	if s == nil {
		return 0
	}
	return len(s.keys)
}

// candidates returns the keys of s that may verify a token of kid and alg:
// those of its kid (any, for a token without one, or when s.anyKid) whose
// type fits alg. A token without a kid is tried with at most
// maxKidlessKeys keys: when more fit, candidates returns an error wrapping
// ErrKey and no key. A nil s has none.
func (s *keySet) candidates(kid string, alg jose.SignatureAlgorithm) ([]key, error) {
	if s == nil {
		return nil, nil
	}
	var out []key
	for _, k := range s.keys {
		if (kid == "" || s.anyKid || k.id == kid) && k.fits(alg) {
			out = append(out, k)
		}
	}
	if kid == "" && !s.anyKid && len(out) > maxKidlessKeys {
		return nil, fmt.Errorf("%w: the token names no kid, and %d keys of the set fit alg %s: "+
			"a token without a kid is verified only by a set of at most %d keys of its alg", ErrKey, len(out), alg, maxKidlessKeys)
	}
	return out, nil
}

// fits says whether k may verify a signature of alg.
func (k key) fits(alg jose.SignatureAlgorithm) bool {
	if k.alg != "" && k.alg != alg {
		return false
	}
	switch pub := k.pub.(type) {
	case *rsa.PublicKey:
		switch alg {
		case jose.RS256, jose.RS384, jose.RS512, jose.PS256, jose.PS384, jose.PS512:
			return true
		}
	case *ecdsa.PublicKey:
		switch alg {
		case jose.ES256:
			return pub.Curve == elliptic.P256()
		case jose.ES384:
			return pub.Curve == elliptic.P384()
		case jose.ES512:
			return pub.Curve == elliptic.P521()
		}
	case ed25519.PublicKey:
		return alg == jose.EdDSA
	case []byte:
		switch alg {
		case jose.HS256, jose.HS384, jose.HS512:
			return true
		}
	}
	return false
}

// parseSet reads a JWK Set document and returns the set of its usable
// keys (see Options.KeysURL), or an error when it is not a JWK Set or has
// no usable key.
func parseSet(doc []byte) (*keySet, error) {
	var raw struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := json.Unmarshal(doc, &raw); err != nil {
		return nil, fmt.Errorf("not a JWK Set: %w", err)
	}
	if raw.Keys == nil {
		return nil, errors.New(`not a JWK Set: no "keys" array`)
	}
	set := &keySet{}
	var skipped []error
	for i, r := range raw.Keys {
		if len(set.keys) == maxKeys {
			break
		}
		k, err := usable(r)
		if err != nil {
			if len(skipped) < 3 { // the first few say enough
				skipped = append(skipped, fmt.Errorf("key %d: %w", i, err))
			}
			continue
		}
		set.keys = append(set.keys, k)
	}
	if len(set.keys) == 0 {
		return nil, fmt.Errorf("no usable key among %d: %w", len(raw.Keys), errors.Join(skipped...))
	}
	return set, nil
}

// usable returns the public part of the JWK doc, or why it is not used.
func usable(doc []byte) (key, error) {
	var jwk jose.JSONWebKey
	if err := jwk.UnmarshalJSON(doc); err != nil {
		return key{}, err
	}
	if jwk.Use != "" && jwk.Use != "sig" {
		return key{}, fmt.Errorf("use %q", jwk.Use)
	}
	if err := verifies(doc); err != nil {
		return key{}, err
	}
	pub := jwk.Public() // a private key's public part; nothing of a symmetric one
	switch p := pub.Key.(type) {
	case *rsa.PublicKey:
		if bits := p.N.BitLen(); bits < 2048 {
			return key{}, fmt.Errorf("RSA key of %d bits, fewer than 2048", bits)
		}
	case *ecdsa.PublicKey:
		switch p.Curve {
		case elliptic.P256(), elliptic.P384(), elliptic.P521():
		default:
			return key{}, fmt.Errorf("EC key on %s", p.Curve.Params().Name)
		}
	case ed25519.PublicKey:
		if len(p) != ed25519.PublicKeySize {
			return key{}, errors.New("Ed25519 key of the wrong size")
		}
	default:
		return key{}, fmt.Errorf("key type %q not used for signatures", keyType(doc))
	}
	return key{id: jwk.KeyID, alg: jose.SignatureAlgorithm(jwk.Algorithm), pub: pub.Key}, nil
}

// verifies returns nil when the JWK doc may verify signatures by its
// "key_ops" (RFC 7517 section 4.3): it has none (or null), or an array of
// strings that names "verify".
func verifies(doc []byte) error {
	var k struct {
		Ops json.RawMessage `json:"key_ops"`
	}
	if err := json.Unmarshal(doc, &k); err != nil || k.Ops == nil || string(k.Ops) == "null" {
		return err // doc has been read as a JWK already
	}
	var ops []string
	if err := json.Unmarshal(k.Ops, &ops); err != nil {
		return fmt.Errorf("key_ops %.64s: not an array of strings", k.Ops)
	}
	if !slices.Contains(ops, "verify") {
		return fmt.Errorf("key_ops %q: no verify", ops)
	}
	return nil
}

// keyType returns the "kty" of the JWK doc, for errors.
func keyType(doc []byte) string {
	var k struct {
		Kty string `json:"kty"`
	}
	_ = json.Unmarshal(doc, &k) // doc has been read as a JWK already
	return k.Kty
}
