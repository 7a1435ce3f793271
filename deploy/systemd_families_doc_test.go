package deploy_test

import (
	"strings"
	"testing"
)

// The systemd guide names the address families the unit allows, and no
// other: a socket of a family RestrictAddressFamilies leaves out fails with
// EAFNOSUPPORT, so an operator who reads of one the unit refuses would
// build on it in vain.
func TestSystemdDocNamesTheUnitsAddressFamilies(t *testing.T) {
	s := readUnit(t, readFile(t, unitFile))
	allowed := map[string]bool{}
	for _, v := range s["RestrictAddressFamilies"] {
		for _, f := range strings.Fields(v) {
			allowed[f] = true
		}
	}
	doc := readFile(t, "../docs/operations.md")
	start := strings.Index(doc, "\n## systemd\n")
	end := strings.Index(doc, "\n## Container image\n")
	if start < 0 || end < start {
		t.Fatal("docs/operations.md: no ## systemd section")
	}
	section := strings.Join(strings.Fields(doc[start:end]), " ")
	for phrase, family := range map[string]string{"IPv4": "AF_INET", "IPv6": "AF_INET6", "Unix sockets": "AF_UNIX"} {
		if strings.Contains(section, phrase) && !allowed[family] {
			t.Errorf("docs/operations.md (## systemd) says the service may use %s, but %s has RestrictAddressFamilies=%q: %s is refused",
				phrase, unitFile, s["RestrictAddressFamilies"], family)
		}
	}
}
