package server

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
)

// A signed settlement id (settle.secret_file set) holds what its
// settlement needs, so that any instance with the same secret and limits
// settles it: base64url(expiry ‖ nonce ‖ payload) "." base64url(tag), the
// expiry in Unix seconds (8 bytes, big-endian), the nonce 8 random bytes
// (two charges alike to the microsecond are two settlements), the payload
// httplimit.Pending's encoding, and the tag the first 16 bytes of
// HMAC-SHA256 under the secret of settleContext ‖ expiry ‖ nonce ‖ payload. An id settles once: the
// first settlement spends a limit of one per settleOnceWindow, keyed by the
// tag, on the store every instance shares — never on a local fallback,
// where each instance would allow it once: while the shared store cannot
// decide, a settlement waits (503) and its charge stands.
const (
	settleContext    = "sluice settle v1\x00"
	settleTagBytes   = 16
	settleHeader     = 16 // expiry and nonce
	settleOnceWindow = settleTTL + time.Minute
	settleOnceKey    = "settle/"
)

// settledOnce returns the limit that lets each signed id settle once.
func settledOnce() sluice.Limit { return sluice.GCRA(1, settleOnceWindow).Named("settled") }

// settleID returns the id under which p is settled: signed when the
// configuration has a settle secret, else held by this instance.
func (s *Server) settleID(p *httplimit.Pending) string {
	secret := s.Config().Settle.Secret
	if secret == nil {
		return s.pending.put(p)
	}
	payload, _ := p.MarshalBinary() // never fails
	body := binary.BigEndian.AppendUint64(make([]byte, 0, settleHeader+len(payload)), uint64(s.opts.Clock().Add(settleTTL).Unix()))
	body = binary.BigEndian.AppendUint64(body, rand.Uint64())
	body = append(body, payload...)
	return base64.RawURLEncoding.EncodeToString(body) + "." + base64.RawURLEncoding.EncodeToString(settleTag(secret, body))
}

// settleTag is the tag of a signed id's body under secret.
func settleTag(secret, body []byte) []byte {
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte(settleContext))
	mac.Write(body)
	return mac.Sum(nil)[:settleTagBytes]
}

// Why a signed id does not settle.
var (
	errSettleUnknown = errors.New("not a settlement id of this fleet, expired, or settled already")
	errSettleLimits  = errors.New("its limits are not counted by the answer here (the configuration changed since)")
)

// takeSigned returns the Pending of the signed id, spending its one
// settlement: errSettleUnknown for an id that is not (a forged or altered
// one, another secret's), has expired or has been settled; errSettleLimits
// when this instance's limits are not those it was charged under; a store
// error (wrapping sluice.ErrStoreUnavailable) when it cannot tell.
func (s *Server) takeSigned(ctx context.Context, st *state, secret []byte, id string) (*httplimit.Pending, error) {
	enc, encTag, ok := strings.Cut(id, ".")
	body, err1 := base64.RawURLEncoding.Strict().DecodeString(enc) // one spelling an id
	tag, err2 := base64.RawURLEncoding.Strict().DecodeString(encTag)
	if !ok || err1 != nil || err2 != nil || len(body) < settleHeader || !hmac.Equal(tag, settleTag(secret, body)) {
		return nil, errSettleUnknown
	}
	if expiry := int64(binary.BigEndian.Uint64(body)); s.opts.Clock().Unix() >= expiry {
		return nil, errSettleUnknown
	}
	p, err := st.mw.UnmarshalPending(body[settleHeader:])
	if err != nil {
		return nil, errSettleLimits
	}
	var d sluice.Decision
	once := []sluice.Check{{Key: settleOnceKey + hex.EncodeToString(tag), Limit: settledOnce(), Cost: 1}}
	if err := s.allowShared(ctx, once, &d); err != nil {
		return nil, err
	}
	if !d.Allowed {
		return nil, errSettleUnknown
	}
	return p, nil
}
