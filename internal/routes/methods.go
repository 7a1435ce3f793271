package routes

import (
	"net/http"
	"slices"
	"strings"
)

// standardMethods are the methods of RFC 9110 and PATCH, as clients send
// them.
var standardMethods = [...]string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
	http.MethodDelete, http.MethodConnect, http.MethodOptions, http.MethodTrace}

// MethodInOtherCase returns the standard method (RFC 9110's or PATCH) that
// m spells in another case ("get": GET), and whether it is one: clients
// send the standard methods upper-cased, so a pattern or rule written with
// m matches no request a router compares case-sensitively.
func MethodInOtherCase(m string) (string, bool) {
	up := strings.ToUpper(m)
	return up, up != m && slices.Contains(standardMethods[:], up)
}
