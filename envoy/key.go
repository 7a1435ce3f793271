package envoy

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	ratelimitv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"

	"github.com/sluice-dev/sluice"
)

// storeKey returns the sluice.Check key of a descriptor of domain, and its
// subject: the key without the window suffix.
//
//	envoy:<domain>:<key>=<value>|<key>=<value>…<suffix>
//
// with '%', ':', '|', '=', '{' and '}' percent-escaped in the domain, keys and
// values, so that distinct descriptors never share a key and a Redis Cluster
// hash tag ({…}) spans the whole subject. An entry whose shared[i] is set
// (share_threshold) is written <key>=%*<pattern>, which no escaped value
// can spell, so that every value its pattern matches shares one key.
// suffix (":w<n>" for a calendar rule's Unix window n, or "") ends the key.
// A subject that would make a key, or the key of its window's over-limit
// record (the key and overKey, see settle.go), longer than
// sluice.MaxKeyLen becomes "envoy:sha256:" and the hex SHA-256 of its long
// form (which, having no '=', cannot be mistaken for a short one), so one
// descriptor keeps one subject from one window to the next.
func storeKey(domain string, entries []*ratelimitv3.RateLimitDescriptor_Entry, shared []string, suffix string) (key, subject string) {
	var b strings.Builder
	n := len("envoy:") + len(domain) + 1 + len(suffix)
	for _, e := range entries {
		n += len(e.GetKey()) + len(e.GetValue()) + 2
	}
	b.Grow(n)
	b.WriteString("envoy:")
	escape(&b, domain)
	b.WriteByte(':')
	for i, e := range entries {
		if i > 0 {
			b.WriteByte('|')
		}
		escape(&b, e.GetKey())
		b.WriteByte('=')
		if i < len(shared) && shared[i] != "" {
			b.WriteString("%*")
			escape(&b, shared[i])
			continue
		}
		escape(&b, e.GetValue())
	}
	if b.Len()+len(suffix)+len(overKey) > sluice.MaxKeyLen {
		sum := sha256.Sum256([]byte(b.String()))
		subject = "envoy:sha256:" + hex.EncodeToString(sum[:])
		return subject + suffix, subject
	}
	subject = b.String()
	if suffix == "" {
		return subject, subject
	}
	b.WriteString(suffix)
	key = b.String()
	return key, key[:len(subject)]
}

func escape(b *strings.Builder, s string) {
	const hexDigits = "0123456789ABCDEF"
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '%', ':', '|', '=', '{', '}':
			b.WriteByte('%')
			b.WriteByte(hexDigits[c>>4])
			b.WriteByte(hexDigits[c&15])
		default:
			b.WriteByte(c)
		}
	}
}
