package config_test

import (
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/config"
)

// A "unix:" entry of identity.trusted_proxies, as nginx's set_real_ip_from
// writes it, trusts the peers of Unix sockets; quoted or not (YAML reads
// `- unix:` as a mapping), beside addresses or alone.
func TestTrustedProxiesTakeUnixPeers(t *testing.T) {
	plans := "plans:\n  free: {limits: [{name: m, algorithm: gcra, quantity: 10, window: 1m}]}\n"
	cases := []struct {
		name, yaml string
		unix       bool
		prefixes   []netip.Prefix
	}{
		{"quoted in a flow list", `identity: {trusted_proxies: [10.0.0.0/8, "unix:"]}`, true,
			[]netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}},
		{"unquoted in a block list", "identity:\n  trusted_proxies:\n    - unix:\n    - 192.0.2.1\n", true,
			[]netip.Prefix{netip.MustParsePrefix("192.0.2.1/32")}},
		{"alone", "identity:\n  trusted_proxies: [\"unix:\"]\n", true, nil},
		{"addresses only", "identity:\n  trusted_proxies: [10.0.0.0/8]\n", false,
			[]netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := config.Parse("t.yaml", []byte(c.yaml+"\n"+plans))
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Identity.TrustUnixPeers != c.unix || !slices.Equal(cfg.Identity.TrustedProxies, c.prefixes) {
				t.Errorf("unix %v, prefixes %v; want %v, %v", cfg.Identity.TrustUnixPeers, cfg.Identity.TrustedProxies, c.unix, c.prefixes)
			}
			if o := cfg.HTTPLimitOptions(); o.TrustUnixPeers != c.unix {
				t.Errorf("middleware options: TrustUnixPeers %v, want %v", o.TrustUnixPeers, c.unix)
			}
		})
	}
}

func TestTrustedProxiesRefuseOtherUnixSpellings(t *testing.T) {
	plans := "plans:\n  free: {limits: [{name: m, algorithm: gcra, quantity: 10, window: 1m}]}\n"
	for _, c := range []struct{ name, yaml, want string }{
		{"unix without its colon", "identity: {trusted_proxies: [unix]}\n",
			`t.yaml:1:30: identity.trusted_proxies[0]: "unix" is not an IP address or CIDR prefix`},
		{"a socket's path", "identity: {trusted_proxies: [\"unix:/run/app.sock\"]}\n",
			`t.yaml:1:30: identity.trusted_proxies[0]: "unix:/run/app.sock" is not an IP address or CIDR prefix`},
		{"unix mapped to a value", "identity:\n  trusted_proxies:\n    - unix: yes\n",
			`t.yaml:3:7: identity.trusted_proxies[0]: want a string`},
		{"unix: among exempt addresses", "exempt: {addresses: [\"unix:\"]}\n",
			`"unix:" is not an IP address or CIDR prefix`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := config.Parse("t.yaml", []byte(c.yaml+plans))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want it to contain %s", err, c.want)
			}
		})
	}
}
