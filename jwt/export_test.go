package jwt

import "time"

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
