package checkjson

import (
	"reflect"
	"testing"

	"github.com/sluice-dev/sluice/client"
)

// A member given twice is read as its last, as DecodeStrict promises:
// encoding/json keeps the last of two strings but merges two "headers"
// objects, so that a header of the first, which the last lacks, would
// describe the request (a rule requiring X-Tenant: acme would match a body
// whose last "headers" names no X-Tenant). The last "headers" alone is
// read, its name in any case as encoding/json matches it; a null one
// leaves none.
func TestDecodeStrictReadsTheLastHeaders(t *testing.T) {
	for body, want := range map[string]map[string]string{
		`{"user":"u","headers":{"X-Tenant":"acme"},"headers":{"X-Other":"1"}}`:      {"X-Other": "1"},
		`{"user":"u","headers":{"X-Tenant":"acme"},"HEADERS":{"X-Other":"1"}}`:      {"X-Other": "1"},
		`{"user":"u","headers":{"X-Tenant":"acme"},"headerſ":{"X-Other":"1"}}`:      {"X-Other": "1"},
		`{"user":"u","headers":{"a":"1"},"user":"v","headers":{}}`:                  {},
		`{"user":"u","headers":{"a":"1"},"headers":null}`:                           nil,
		`{"user":"u","headers":null,"headers":{"a":"1"}}`:                           {"a": "1"},
		`{"user":"u","headers":{"a":"1","a":"2"}}`:                                  {"a": "2"},
		`{"user":"u","headers":{"X-Tenant":"acme"}}`:                                {"X-Tenant": "acme"},
		`{"user":"u","\u0068eaders":{"X-Tenant":"acme"},"headers":{"X-Other":"1"}}`: {"X-Other": "1"},
	} {
		var req client.CheckRequest
		if err := DecodeStrict([]byte(body), &req); err != nil {
			t.Errorf("%s: %v", body, err)
			continue
		}
		if !reflect.DeepEqual(req.Headers, want) {
			t.Errorf("%s: headers %v, want %v", body, req.Headers, want)
		}
	}
}
