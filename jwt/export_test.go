package jwt

import (
	"context"
	"time"

	josejwt "github.com/go-jose/go-jose/v4/jwt"

	"github.com/sluice-dev/sluice/httplimit"
)

// NewPaced is New, with now the clock that paces the fetches tokens
// prompt (Options.MinRefresh), so that tests can move it by hand.
func NewPaced(o Options, now func() time.Time) (*Verifier, error) {
	return newVerifier(o, hooks{now: now})
}

// NewResolving is New, with each connection of the Verifier's client for
// a "host:port" of hosts made to the address hosts maps it to, as though
// the host resolved there, where the Verifier checks the addresses it
// connects to (when Options.Client dials as http.DefaultTransport does).
func NewResolving(o Options, hosts map[string]string) (*Verifier, error) {
	return newVerifier(o, hooks{resolve: func(addr string) string {
		if to, ok := hosts[addr]; ok {
			return to
		}
		return addr
	}})
}

// A SetInUse is the set of keys a Verifier had in use at some moment.
type SetInUse struct{ s *keySet }

// SetInUse returns the set v has in use now.
func (v *Verifier) SetInUse() SetInUse { return SetInUse{v.set.Load()} }

// VerifyTokenFrom is VerifyToken of a token that looked at the set in use
// when seen was: of one that a fetch ending meanwhile overtook.
func (v *Verifier) VerifyTokenFrom(ctx context.Context, token string, seen SetInUse) (httplimit.TokenClaims, error) {
	tok, err := josejwt.ParseSigned(token, v.algs)
	if err != nil {
		return httplimit.TokenClaims{}, err
	}
	return v.verifySigned(ctx, tok, seen.s)
}
