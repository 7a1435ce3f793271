package migrate

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/sluice-dev/sluice"
	"go.yaml.in/yaml/v3"
)

// ConfigFile is the name Files gives the sluice configuration.
const ConfigFile = "sluice.yaml"

// maxConfigSize is the largest configuration file config.Load reads
// (4 MiB, as its documentation states).
const maxConfigSize = 4 << 20

// PlanName is the one plan of an imported configuration: every client's.
const PlanName = "imported"

// Files returns the files of the translation by name: ConfigFile, and for
// envoy the rules file it loads. With enforce false, every limit is written
// with shadow: true (envoy rules with shadow_mode: true): evaluated and
// reported, never refusing — the first step of a rollout. A configuration
// larger than the 4 MiB sluice loads is an error that says so.
func (t *Translation) Files(enforce bool) (map[string]string, error) {
	if err := t.checkBounds(); err != nil {
		return nil, err
	}
	files := map[string]string{ConfigFile: t.config(enforce)}
	if n := len(files[ConfigFile]); n > maxConfigSize {
		return nil, fmt.Errorf("%s: the configuration would be %d bytes, more than the 4 MiB sluice loads: import the file a part at a time", t.Source, n)
	}
	if t.EnvoyRules != "" {
		rules := t.EnvoyRulesText
		if !enforce {
			var err error
			if rules, err = shadowRules(rules); err != nil {
				return nil, err
			}
		}
		files[t.EnvoyRules] = rules
	}
	return files, nil
}

// comment makes s safe inside a YAML comment: one line, printable.
func comment(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || r == utf8.RuneError || !unicode.IsPrint(r) {
			return '?'
		}
		return r
	}, s)
}

func quote(s string) string {
	q, _ := json.Marshal(s)
	return string(q)
}

// yamlName is the name s as a YAML value: plain where YAML reads it back as
// that string, else quoted ("-" alone is a sequence's entry, "true" a
// boolean, "1" a number).
func yamlName(s string) string {
	var v any
	if err := yaml.Unmarshal([]byte(s), &v); err == nil && v == s {
		return s
	}
	return quote(s)
}

func quoteAll(ss []string) string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = quote(s)
	}
	return "[" + strings.Join(out, ", ") + "]"
}

// config writes the sluice configuration.
func (t *Translation) config(enforce bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# sluice configuration imported by `sluice import -from %s` from %s.\n", t.Format, comment(t.Source))
	if !enforce {
		b.WriteString("# Every limit is in shadow mode: reported in headers and metrics, never refusing.\n# Remove the shadow lines to enforce (sluice import -enforce writes them without).\n")
	}
	b.WriteString("store:\n")
	if t.Instances > 0 {
		b.WriteString("  type: redis\n  redis:\n    mode: standalone\n")
		if t.RedisAddress != "" {
			fmt.Fprintf(&b, "    addresses: [%s]   # the source's Redis\n", quote(t.RedisAddress))
		} else {
			b.WriteString("    addresses: [\"localhost:6379\"]   # your Redis\n")
		}
		if t.RedisDB > 0 {
			fmt.Fprintf(&b, "    db: %d\n", t.RedisDB)
		}
		fmt.Fprintf(&b, "    on_store_error: %s\n    instances: %d\n", t.OnStoreError, t.Instances)
	} else {
		b.WriteString("  type: memory\n")
	}
	b.WriteString("identity:\n")
	if len(t.TrustedProxies) > 0 {
		fmt.Fprintf(&b, "  trusted_proxies: %s   # their X-Forwarded-For names the client, as the source believed it\n", quoteAll(t.TrustedProxies))
	}
	if len(t.APIKeyHeaders) > 0 {
		fmt.Fprintf(&b, "  api_key_headers: %s\n", quoteAll(t.APIKeyHeaders))
		if t.KeysOnlyListed {
			b.WriteString("  unknown_keys: ip    # only the listed keys are clients of their own; other requests count by address, as before\n")
		} else {
			b.WriteString("  unknown_keys: key   # every key is a client of its own, as before\n")
		}
	} else {
		b.WriteString("  unknown_keys: ip   # the source reads no API key: a request counts by its address whatever key or token it sends\n")
	}
	if t.UserHeader != "" {
		fmt.Fprintf(&b, "  user_header: %s   # believed only from trusted_proxies: add your proxies\n", quote(t.UserHeader))
	}
	if t.IPv6Prefix > 0 {
		fmt.Fprintf(&b, "  ipv6_prefix: %d\n", t.IPv6Prefix)
	}
	if j := t.JWT; j != nil {
		b.WriteString("  jwt:   # a verified token's client is the user (sub) it names; others are limited by address\n")
		switch {
		case j.JWKSFile != "":
			fmt.Fprintf(&b, "    jwks_file: %s\n", quote(j.JWKSFile))
		case j.Discover:
			b.WriteString("    discover: true   # the keys are where the issuer's discovery document says\n")
		default:
			fmt.Fprintf(&b, "    jwks_url: %s\n", quote(j.JWKSURL))
		}
		if j.Issuer != "" {
			fmt.Fprintf(&b, "    issuer: %s\n", quote(j.Issuer))
		}
		if len(j.Audiences) > 0 {
			fmt.Fprintf(&b, "    audiences: %s\n", quoteAll(j.Audiences))
		}
	}
	fmt.Fprintf(&b, "plans:\n  %s:\n    limits:\n", PlanName)
	clients := 0
	for _, l := range t.Limits {
		if !l.Global {
			limitYAML(&b, "      ", l, !enforce)
			clients++
		}
	}
	if clients == 0 {
		// The configuration needs a plan with a limit; this one only
		// reports, whatever enforce says, and its headers are hidden.
		fmt.Fprintf(&b, "      - name: %s   # the source limits no client on its own; this limit only reports\n", placeholder)
		b.WriteString("        algorithm: fixed-window\n        quantity: 1000000000\n        window: 1s\n        shadow: true\n")
	}
	if len(t.Costs) > 0 {
		b.WriteString("    costs:\n")
		keys := make([]string, 0, len(t.Costs))
		for k := range t.Costs {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			fmt.Fprintf(&b, "      %s: %d\n", quote(k), t.Costs[k])
		}
	}
	for _, p := range t.Plans {
		fmt.Fprintf(&b, "  %s:\n    limits:\n", p.Name)
		for _, l := range p.Limits {
			limitYAML(&b, "      ", l, !enforce)
		}
	}
	fmt.Fprintf(&b, "default_plan: %s\nanonymous_plan: %s\n", PlanName, PlanName)
	if len(t.Keys) > 0 {
		b.WriteString("keys:                             # by SHA-256, never in clear\n")
		for _, k := range t.Keys {
			fmt.Fprintf(&b, "  - {name: %s, sha256: %s, plan: %s}\n", quote(k.Name), k.SHA256, k.Plan)
		}
	}
	if clients < len(t.Limits) {
		b.WriteString("global:\n")
		for _, l := range t.Limits {
			if l.Global {
				limitYAML(&b, "  ", l, !enforce)
			}
		}
	}
	rulesYAML(&b, t.SluiceRules, !enforce)
	if len(t.ExemptAddresses) > 0 {
		fmt.Fprintf(&b, "exempt:\n  addresses: %s   # never limited, never counted, as the source left them out\n", quoteAll(t.ExemptAddresses))
	}
	hide := t.hidden(clients == 0)
	if len(t.Headers) > 0 || len(hide) > 0 || t.RetryJitter > 0 {
		b.WriteString("response:\n")
		if len(t.Headers) > 0 {
			fmt.Fprintf(&b, "  headers: [%s]\n", strings.Join(t.Headers, ", "))
		}
		if len(hide) > 0 {
			fmt.Fprintf(&b, "  hide: [%s]\n", strings.Join(hide, ", "))
		}
		if t.RetryJitter > 0 {
			fmt.Fprintf(&b, "  retry_jitter: %v\n", t.RetryJitter)
		}
	}
	if t.EnvoyRules != "" {
		fmt.Fprintf(&b, "envoy:\n  rules: [%s]   # envoyproxy/ratelimit's rules, read as they are\n", quote(t.EnvoyRules))
		for _, k := range []string{"headers", "limit_header", "remaining_header", "reset_header"} {
			if v, ok := t.EnvoyHeaders[k]; ok {
				fmt.Fprintf(&b, "  %s: %s   # from envoyproxy/ratelimit's environment\n", k, quote(v))
			}
		}
	}
	return b.String()
}

// hidden returns the names response.hide lists: the placeholder limit when
// placeholderLimit is set; a plan's unlimited limit; with HideHeaders, every limit of every plan, the
// global ones and every rule.
func (t *Translation) hidden(placeholderLimit bool) []string {
	var names []string
	if placeholderLimit {
		names = append(names, placeholder)
	}
	if slices.ContainsFunc(t.Plans, func(p Plan) bool {
		return slices.ContainsFunc(p.Limits, func(l Limit) bool { return l.Name == unlimited })
	}) {
		names = append(names, unlimited)
	}
	if !t.HideHeaders {
		return names
	}
	for _, l := range t.Limits {
		names = append(names, l.Name)
	}
	for _, p := range t.Plans {
		for _, l := range p.Limits {
			names = append(names, l.Name)
		}
	}
	for _, r := range t.SluiceRules {
		names = append(names, r.Name)
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// placeholder names the plan's one limit when the source limits no client
// by itself (every limit is global or a rule's).
const placeholder = "placeholder"

// unlimited names the one limit of a plan whose limits are rules (Kong's
// consumer group counted together, a consumer limited where it is
// authenticated): it only reports, and its headers are hidden.
const unlimited = "unlimited"

// rulesYAML writes the rules: section.
func rulesYAML(b *strings.Builder, rules []Rule, shadow bool) {
	if len(rules) == 0 {
		return
	}
	b.WriteString("rules:\n")
	for _, r := range rules {
		fmt.Fprintf(b, "  - name: %s\n", yamlName(r.Name))
		switch {
		case len(r.Any) > 0 && slices.ContainsFunc(r.Any, RuleMatch.every):
			// One alternative takes every request: so does the rule.
			if len(r.Plans) > 0 {
				fmt.Fprintf(b, "    plans: %s   # their clients only, as in the source\n", quoteAll(r.Plans))
			}
		case len(r.Any) > 0:
			b.WriteString("    match:   # any of these, one count across them, as in the source\n")
			for _, m := range r.Any {
				matchYAML(b, "      - ", "        ", m)
			}
			if len(r.Plans) > 0 {
				fmt.Fprintf(b, "    plans: %s   # their clients only, as in the source\n", quoteAll(r.Plans))
			}
		case len(r.Paths) > 0 || len(r.Hosts) > 0 || len(r.ExceptPaths) > 0 || len(r.Methods) > 0 || len(r.Headers) > 0 || len(r.Plans) > 0:
			b.WriteString("    match:\n")
			matchYAML(b, "      ", "      ", r.alternatives()[0])
			if len(r.Plans) > 0 {
				fmt.Fprintf(b, "      plans: %s   # their clients only, as in the source\n", quoteAll(r.Plans))
			}
		}
		if len(r.Except) > 0 {
			b.WriteString("    except:   # requests other routes of the source take: limited there as it says, or not at all\n")
			for _, m := range r.Except {
				matchYAML(b, "      - ", "        ", m)
			}
		}
		fmt.Fprintf(b, "    key: %s\n", quoteAll(r.Key))
		if r.HeaderFrom != "" {
			fmt.Fprintf(b, "    header_from: %s   # as the source read it: a client choosing the value chooses its count\n", r.HeaderFrom)
		}
		switch r.Fallback {
		case "skip":
			b.WriteString("    fallback: skip   # requests without it are not counted, as before\n")
		case "shared":
			b.WriteString("    fallback: shared   # requests without it share one count, as before\n")
		}
		if r.Cost != nil {
			fmt.Fprintf(b, "    cost: %d\n", *r.Cost)
		}
		b.WriteString("    limits:\n")
		for _, l := range r.Limits {
			limitYAML(b, "      ", l, shadow)
		}
	}
}

// matchYAML writes the fields of m, a rule's match or one alternative of
// it: its first line starts with first, the others with indent.
func matchYAML(b *strings.Builder, first, indent string, m RuleMatch) {
	in := first
	line := func(format string, args ...any) {
		b.WriteString(in)
		fmt.Fprintf(b, format, args...)
		in = indent
	}
	if len(m.Methods) > 0 {
		line("methods: %s\n", quoteAll(m.Methods))
	}
	for i, h := range m.Headers {
		if i == 0 {
			line("headers:\n")
		}
		fmt.Fprintf(b, "%s  - {name: %s, value: %s}\n", indent, quote(h.Name), quote(h.Value))
	}
	if len(m.Hosts) > 0 {
		line("hosts: %s\n", quoteAll(m.Hosts))
	}
	if len(m.Paths) > 0 {
		line("paths: %s\n", quoteAll(m.Paths))
	}
	if len(m.ExceptPaths) > 0 {
		line("except_paths: %s   # other routes' paths in the source: limited there as it says, or not at all\n", quoteAll(m.ExceptPaths))
	}
}

func limitYAML(b *strings.Builder, indent string, l Limit, shadow bool) {
	fmt.Fprintf(b, "%s- name: %s   # %s\n", indent, yamlName(l.Name), comment(l.Source))
	in := indent + "  "
	if l.ID != "" {
		fmt.Fprintf(b, "%sid: %s   # a state of its own: another plan's %s counts by another algorithm, and Redis keeps one state per client and ID\n", in, yamlName(l.ID), comment(l.Name))
	}
	fmt.Fprintf(b, "%salgorithm: %s\n%squantity: %d\n%swindow: %s\n", in, l.Algorithm, in, l.Quantity, in, l.window())
	if l.Period != "" && l.Starts != "" {
		fmt.Fprintf(b, "%sstarts: %s\n", in, l.Starts)
	}
	if l.Burst > 0 {
		fmt.Fprintf(b, "%sburst: %d\n", in, l.Burst)
	}
	if l.MaxWait > 0 {
		fmt.Fprintf(b, "%smax_wait: %s\n", in, l.MaxWait)
	}
	if shadow || l.Shadow {
		fmt.Fprintf(b, "%sshadow: true\n", in)
	}
}

// checkBounds refuses a translation whose plan would check more limits on
// one request than sluice checks at once (sluice.MaxChecks): its own
// limits (or the placeholder), the global ones, and every rule's that may
// apply to it, as the configuration's validation counts them.
func (t *Translation) checkBounds() error {
	var own, global int
	for _, l := range t.Limits {
		if l.Global {
			global++
		} else {
			own++
		}
	}
	own = max(own, 1) // the placeholder of a plan without limits of its own
	check := func(plan string, own int) error {
		n := own + global
		for _, r := range t.SluiceRules {
			if len(r.Plans) == 0 || slices.Contains(r.Plans, plan) {
				n += len(r.Limits)
			}
		}
		if n > sluice.MaxChecks {
			return fmt.Errorf("%s: plan %s would check %d limits on one request (its own, the global ones and every rule's that may apply), "+
				"more than the %d sluice checks at once: merge zones or limits that count the same clients, or import the file in parts",
				t.Source, plan, n, sluice.MaxChecks)
		}
		return nil
	}
	if err := check(PlanName, own); err != nil {
		return err
	}
	for _, p := range t.Plans {
		if err := check(p.Name, len(p.Limits)); err != nil {
			return err
		}
	}
	return nil
}
