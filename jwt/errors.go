package jwt

import "errors"

// The classes of the errors VerifyToken returns; each error it returns
// wraps exactly one of them.
var (
	// ErrMalformed: the token is not one the Verifier can read: longer than
	// 16 KiB, not a JWS in compact form (three base64url parts joined by
	// dots), an "alg" not among Options.Algorithms, a header or a payload
	// that is not the JSON it must be ("exp", "nbf" and "iat" must be
	// numbers), or a "crit" header it does not understand.
	ErrMalformed = errors.New("jwt: malformed token")
	// ErrKey: no key of the set in use may verify the token: none has its
	// "kid" (or, for a token without one, none fits its "alg", or more than
	// 4 do), or no set has been fetched yet.
	ErrKey = errors.New("jwt: no key for the token")
	// ErrSignature: the signature does not verify with any key the token
	// may be verified with.
	ErrSignature = errors.New("jwt: signature does not verify")
	// ErrExpired: the token is not valid at this time: its "exp" has
	// passed, or its "nbf" or "iat" is yet to come, by more than
	// Options.Leeway.
	ErrExpired = errors.New("jwt: token expired or not valid yet")
	// ErrClaims: a claim is not as the Verifier requires: "iss" is not
	// Options.Issuer, "aud" names none of Options.Audiences, or the subject
	// claim is missing, empty or not a string.
	ErrClaims = errors.New("jwt: claims not accepted")
)
