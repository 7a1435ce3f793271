package envoy_test

import (
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/envoy"
)

// A key tagged !!merge is a merge key only when it is <<: gopkg.in/yaml.v2
// (decode.go isMerge: n.value == "<<" && (implicit || tag == !!merge)),
// and yaml.v3 too, read `!!merge foo: *a` as the key foo, which
// envoyproxy/ratelimit refuses as an unknown key ("config error, unknown
// key 'foo'"), and so does the service; `!!merge <<: *a` merges.
func TestMergeTagOnAnotherKeyIsThatKey(t *testing.T) {
	const a = "domain: api\ndescriptors:\n  - &a {key: a, rate_limit: {unit: second, requests_per_unit: 5}}\n"
	_, err := envoy.LoadRules("rules.yaml", []byte(a+"  - {!!merge foo: *a, key: b}\n"))
	want := "rules.yaml:4:6: descriptors[1].foo: unknown field"
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("got %v, want %s…", err, want)
	}
	r, err := envoy.LoadRules("rules.yaml", []byte(a+"  - {!!merge <<: *a, key: b}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if n := len(r.Limits()); n != 2 {
		t.Errorf("%d limits, want 2 (b merges a's rate_limit)", n)
	}
}
