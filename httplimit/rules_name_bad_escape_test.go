package httplimit_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
)

// PHP decodes a pair's name escape by escape, keeping one that does not
// decode ("%zz", a lone "%") as it is, and names the variable up to its
// first NUL (php_register_variable_ex reads the name with strlen):
// parse_str("tenant%00%zz=acme") and $_GET give tenant => "acme".
// url.QueryUnescape refuses the whole name, which read as sent names no
// tenant: each such request would fall to the rule's fallback, a fresh
// count (or none) for every request Laravel serves as tenant acme's. Such
// a pair is one Go refuses under the parameter's name as PHP reads it,
// counted with the ambiguous requests whatever the fallback (docs/rules.md,
// Keys).
func TestAQueryKeyCountsANameWithANULAndABadEscapeWithTheAmbiguousOnes(t *testing.T) {
	mw, _ := rulesMiddleware(t, httplimit.Rule{Name: "tenants", Key: []string{"query:tenant"}, Fallback: httplimit.FallbackSkip,
		Limits: []sluice.Limit{sluice.FixedWindow(1, time.Minute)}})
	var rs []req
	for i, q := range []string{"tenant=acme", "tenant%00%zz=acme", "tenant%00%zz=acme", "tenant%00%=acme", "x%zz=1&tenant=globex"} {
		rs = append(rs, req{remote: fmt.Sprintf("192.0.2.%d:1", i+1), path: "/api/search?" + q})
	}
	if got, want := statuses(mw, rs...), []int{200, 200, 429, 429, 200}; !slices.Equal(got, want) {
		t.Errorf("tenant acme; named tenant%%00%%zz twice and tenant%%00%% (PHP's tenant); globex beside x%%zz: %v, want %v", got, want)
	}
}

// The same for a form: key, of a sign-in's body: PHP's $_POST and
// Laravel's input() read "username%00%zz=victim" as username victim, so a
// credential-stuffing run against one account, each attempt so named,
// would never meet the per-account limit.
func TestAFormKeyCountsANameWithANULAndABadEscapeWithTheAmbiguousOnes(t *testing.T) {
	mw, _ := rulesMiddleware(t, loginRule("form:username"))
	got := posts(mw.Handler(okHandler()), formType,
		"username%00%zz=victim&password=a", "username%00%zz=victim&password=b", "username%00%=victim&password=c")
	if want := []int{200, 429, 429}; !slices.Equal(got, want) {
		t.Errorf("attempts named username%%00%%zz twice and username%%00%% (PHP's username): %v, want %v", got, want)
	}
}
