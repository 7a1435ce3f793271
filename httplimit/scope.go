package httplimit

import (
	"crypto/rand"
	"encoding/hex"
)

// drawnScopeMark starts the scope New draws for Options with none: it is in
// no sluice.ValidName, so a drawn scope is never one that Options name.
const drawnScopeMark = "~"

// keyPrefix returns the prefix of every store key of a Middleware with
// scope: the scope and "/"; for the empty scope, a scope drawn at random
// (64 bits), which no other Middleware, in this process or another, draws
// or names.
func keyPrefix(scope string) string {
	if scope == "" {
		var b [8]byte
		rand.Read(b[:]) // never fails (crypto/rand)
		scope = drawnScopeMark + hex.EncodeToString(b[:])
	}
	return scope + "/"
}

// scoped returns the store key of subject, prefix and subject in one
// allocation, and subject as a part of it.
func scoped(prefix, subject string) (key, sub string) {
	key = prefix + subject
	return key, key[len(prefix):]
}

// storeKey returns the store key of id under prefix: the one its
// identifier set, or one made now.
func (id *Identity) storeKey(prefix string) string {
	if id.key != "" {
		return id.key
	}
	return prefix + id.Subject
}
