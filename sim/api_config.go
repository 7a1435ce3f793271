package sim

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/sluice-dev/sluice/internal/routes"
)

// yamlString quotes s as a YAML double-quoted scalar that a YAML parser
// reads back as s, whatever s holds: a quote and a backslash are escaped,
// and so is every character YAML does not take as written (control
// characters, U+FEFF, U+FFFE, U+FFFF) or would read as a line break
// (U+0085, U+2028, U+2029). A byte of s that is no UTF-8 is written as
// U+FFFD, as YAML holds only UTF-8 text.
func yamlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case 0x20 <= r && r <= 0x7e || 0xa0 <= r && r <= 0xd7ff && r != 0x2028 && r != 0x2029 ||
			0xe000 <= r && r <= 0xfffd && r != 0xfeff || r >= 0x10000:
			b.WriteRune(r)
		case r <= 0xff:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// yamlName writes a name as a YAML scalar: plain when YAML reads it back
// as that string, quoted when it would read something else ("null" is
// nothing, "true" a boolean, "123" a number, "-" a sequence).
func yamlName(s string) string {
	var v any
	if err := yaml.Unmarshal([]byte(s), &v); err == nil && v == s {
		return s
	}
	return yamlString(s)
}

// yamlList writes ss as a flow sequence of quoted strings.
func yamlList(ss []string) string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = yamlString(s)
	}
	return "[" + strings.Join(out, ", ") + "]"
}

// degradationSteps are the shares of the overload thresholds at which each
// level is entered and left (hysteresis: left below a lower share).
var degradationSteps = []struct {
	level        string
	enter, leave float64
}{{"elevated", 0.6, 0.4}, {"high", 0.8, 0.6}, {"critical", 1, 0.8}}

// configYAML writes the complete configuration of the design, in the
// format package config reads (examples/sluice.yaml is its reference).
func (a *APIAnalysis) configYAML() string {
	req := a.Requirements
	var b strings.Builder
	fmt.Fprintf(&b, "# sluice configuration written by `sluice design` for %s.\n", strings.ReplaceAll(req.Name, "\n", " "))
	if req.Shadow {
		b.WriteString("# Every limit is in shadow mode: reported in headers and metrics, never refusing.\n")
	}
	a.storeYAML(&b)
	a.identityYAML(&b)
	b.WriteString("plans:\n")
	apart := a.limitIDsApart()
	for i, p := range a.Plans {
		fmt.Fprintf(&b, "  %s:\n    limits:\n", yamlName(p.Name))
		for j, l := range p.Limits {
			limitYAML(&b, "      ", l, req.Shadow, l.Stated, req.Instances)
			if ap, ok := apart[[2]int{i, j}]; ok {
				idYAML(&b, "      ", ap)
			}
		}
		if len(a.Costs) > 0 && !p.Internal {
			b.WriteString("    costs:\n")
			for _, route := range sortedKeys(a.Costs) {
				fmt.Fprintf(&b, "      %s: %d\n", yamlString(route), a.Costs[route])
			}
		}
		if p.Upgrade != "" {
			fmt.Fprintf(&b, "    upgrade: {plan: %s}\n", yamlName(p.Upgrade))
		}
	}
	fmt.Fprintf(&b, "default_plan: %s\n", yamlName(a.DefaultPlan))
	fmt.Fprintf(&b, "anonymous_plan: %s\n", yamlName(a.AnonymousPlan))
	if req.Identity.APIKeys {
		b.WriteString("# keys:                 # each client's API key, by SHA-256 (printf %s KEY | sha256sum)\n")
		b.WriteString("#   - {name: acme, sha256: <64 hex digits>, plan: " + yamlName(a.DefaultPlan) + "}\n")
	}
	if a.Global != nil {
		b.WriteString("global:\n")
		limitYAML(&b, "  ", *a.Global, req.Shadow, a.Global.Stated+" for all clients together", req.Instances)
	}
	if len(a.Rules) > 0 {
		b.WriteString("rules:                    # the endpoints' own limits, per client, with the plan's\n")
		for _, r := range a.Rules {
			plans := ""
			if len(r.Plans) > 0 {
				plans = ", plans: " + yamlList(r.Plans)
			}
			fmt.Fprintf(&b, "  - name: %s\n    match: {methods: [%s], paths: [%s]%s}\n    cost: 1\n    limits:\n",
				yamlName(r.Name), yamlString(r.Method), yamlString(r.Path), plans)
			limitYAML(&b, "      ", r.Limit, req.Shadow, r.Limit.Stated+" on "+r.Route, req.Instances)
		}
	}
	var exempt []string
	written := map[string]bool{} // each route once, however it is written (routes.Normal)
	for _, e := range req.Endpoints {
		if n := routes.Normal(e.Route); e.Exempt && !written[n] {
			exempt, written[n] = append(exempt, e.Route), true
		}
	}
	if len(exempt) > 0 {
		fmt.Fprintf(&b, "exempt: %s\n", yamlList(exempt))
	}
	a.degradationYAML(&b)
	fmt.Fprintf(&b, "response:\n  headers: [%s]\n", strings.Join(req.Headers, ", "))
	return b.String()
}

func (a *APIAnalysis) storeYAML(b *strings.Builder) {
	req := a.Requirements
	b.WriteString("store:\n")
	fmt.Fprintf(b, "  type: %s\n", a.Store)
	if a.Store == "memory" || a.OnStoreError == "local" {
		maxKeysYAML(b, a.memoryNeed())
	}
	if a.Store == "redis" {
		b.WriteString("  redis:\n")
		fmt.Fprintf(b, "    mode: %s\n", a.RedisMode)
		fmt.Fprintf(b, "    addresses: %s\n", yamlList(req.RedisAddresses))
		if a.RedisMode == "sentinel" {
			b.WriteString("    master_name: mymaster   # the Sentinel master set: change to yours\n")
		}
		fmt.Fprintf(b, "    on_store_error: %s\n", a.OnStoreError)
		fmt.Fprintf(b, "    instances: %d\n", req.Instances)
	}
}

func (a *APIAnalysis) identityYAML(b *strings.Builder) {
	id := a.Requirements.Identity
	b.WriteString("identity:\n")
	if id.APIKeys {
		b.WriteString("  api_key_headers: [Authorization, X-API-Key]\n")
		b.WriteString("  unknown_keys: ip           # a key not listed under keys is limited by address: made-up keys mint no quota\n")
	} else {
		b.WriteString("  unknown_keys: ip           # no API keys: a key or token a client sends counts by its address\n")
	}
	if id.UserHeader != "" {
		fmt.Fprintf(b, "  user_header: %s\n", yamlString(id.UserHeader))
	}
	if len(a.Requirements.Internal) > 0 {
		b.WriteString("  plan_header: X-Plan        # internal callers name their plan (internal-…); believed only from trusted_proxies\n")
	}
	if len(id.TrustedProxies) > 0 {
		fmt.Fprintf(b, "  trusted_proxies: %s\n", yamlList(id.TrustedProxies))
	}
	b.WriteString("  ipv4_prefix: 32\n  ipv6_prefix: 64\n")
}

// limitYAML writes one limit as a list entry at indent.
func limitYAML(b *strings.Builder, indent string, l LimitDesign, shadow bool, stated string, instances int) {
	rec := l.Rec()
	fmt.Fprintf(b, "%s- name: %s   # stated: %s\n", indent, yamlName(rec.Name), stated)
	in := indent + "  "
	fmt.Fprintf(b, "%salgorithm: %s\n", in, rec.Algorithm)
	fmt.Fprintf(b, "%squantity: %d", in, rec.Quantity)
	switch {
	case rec.PerInstance && rec.Burst > 0 && l.Precision != PrecisionLoose:
		fmt.Fprintf(b, "   # per instance: %d + burst %d − 1 = %d in any window, within the stated ÷ %d instances", rec.Quantity, rec.Burst, bucketWorst(rec.Quantity, rec.Burst), instances)
	case rec.PerInstance:
		fmt.Fprintf(b, "   # per instance: ÷ %d instances", instances)
	}
	b.WriteString("\n")
	windowYAML(b, in, rec)
	if rec.Burst > 0 {
		fmt.Fprintf(b, "%sburst: %d\n", in, rec.Burst)
	}
	if rec.MaxWait > 0 {
		fmt.Fprintf(b, "%smax_wait: %s\n", in, rec.MaxWait)
	}
	if shadow {
		fmt.Fprintf(b, "%sshadow: true\n", in)
	}
}

func (a *APIAnalysis) degradationYAML(b *strings.Builder) {
	o := a.Requirements.Overload
	if !o.set() {
		return
	}
	b.WriteString("degradation:\n  min_dwell: 10s\n  factor: 0.5\n  levels:\n")
	for _, s := range degradationSteps {
		fmt.Fprintf(b, "    %s: {enter: {%s}, leave: {%s}}\n", s.level, thresholdsYAML(o, s.enter), thresholdsYAML(o, s.leave))
	}
	classes := map[string][]string{}
	written := map[string]bool{} // each route once (routes.Normal), in one class (validate)
	for _, e := range a.Requirements.Endpoints {
		if n := routes.Normal(e.Route); e.Class != "" && !written[n] {
			classes[e.Class], written[n] = append(classes[e.Class], e.Route), true
		}
	}
	if len(classes) > 0 {
		b.WriteString("  classes:\n")
		for _, c := range []string{ClassExpensive, ClassCritical, ClassHealth} {
			if len(classes[c]) > 0 {
				fmt.Fprintf(b, "    %s: %s\n", c, yamlList(classes[c]))
			}
		}
	}
}

// thresholdsYAML writes share × the overload thresholds as a flow mapping.
func thresholdsYAML(o APIOverload, share float64) string {
	var parts []string
	if o.InFlight > 0 {
		parts = append(parts, fmt.Sprintf("in_flight: %d", max(int(float64(o.InFlight)*share), 1)))
	}
	if o.P99 > 0 {
		d := max(time.Duration(float64(o.P99)*share).Round(time.Millisecond), time.Millisecond)
		parts = append(parts, "p99: "+d.String())
	}
	if o.ErrorRate > 0 {
		parts = append(parts, fmt.Sprintf("error_rate: %.4g", max(o.ErrorRate*share, 0.0001)))
	}
	return strings.Join(parts, ", ")
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
