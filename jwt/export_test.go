package jwt

import "time"

// NewPaced is New, with now the clock that paces the fetches tokens
// prompt (Options.MinRefresh), so that tests can move it by hand.
func NewPaced(o Options, now func() time.Time) (*Verifier, error) {
	return newVerifier(o, now)
}
