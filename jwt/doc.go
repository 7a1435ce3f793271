// Package jwt verifies JSON Web Tokens (RFC 7519) for httplimit: a Verifier
// is an httplimit.TokenVerifier, so that the middleware limits a client as
// the user its bearer token names, which no header the client writes can
// make it.
//
// A token is accepted when it is a signed JWT in compact form (three
// base64url parts joined by dots, at most 16 KiB) whose "alg" is one of
// Options.Algorithms, whose signature verifies with one of the issuer's
// keys, and whose claims hold: "exp" not passed and "nbf" reached (each
// with Options.Leeway; a token without "exp" does not expire), "iss" and
// "aud" as Options requires, and a non-empty string in the subject claim.
// The checks that need no key come first, so that junk costs no
// cryptography; the claims are read only once the signature verifies.
//
// The keys are a JWK Set (RFC 7517), given once (Options.Keys) or fetched
// from the issuer and refreshed (Options.KeysURL, or where the issuer's
// OpenID Connect discovery document says with Options.Discover), or a
// secret shared with the issuer for the HMAC algorithms (Options.Secret). Asymmetric and HMAC
// algorithms are never both accepted by one Verifier, and "none" never is:
// a token cannot choose to be checked with a public key used as an HMAC
// secret, nor with no key at all.
//
// Every error VerifyToken returns wraps exactly one of ErrMalformed, ErrKey,
// ErrSignature, ErrExpired and ErrClaims, for callers that count refusals
// by class (errors.Is).
package jwt
