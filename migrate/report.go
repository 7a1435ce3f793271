package migrate

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// ReportSections returns the headings of Report, in order: a new slice on
// each call.
func ReportSections() []string { return slices.Clone(reportSections[:]) }

// reportSections are the headings of Report, in order.
var reportSections = [...]string{"## Context Assessment", "## Recommended Approach", "## Implementation Steps",
	"## Trade-offs and Considerations", "## Next Steps"}

// sourceRefusals says where each source counts what it refuses, for the
// comparison during the shadow rollout.
var sourceRefusals = map[string]string{
	FormatNginx:        "nginx's error log lines \"limiting requests, excess: …\" (and \"delaying request\"), or its access log's limit_req_status",
	FormatEnvoy:        "envoyproxy/ratelimit's `ratelimit.service.rate_limit.<domain>.<key>.over_limit` statistics",
	FormatKong:         "Kong's 429 responses on the routes the plugin covers",
	envoyLocalRefusals: "Envoy's `http_local_rate_limit.<stat_prefix>.rate_limited` statistics (and its 429 responses with x-envoy-ratelimited)",
	FormatIngressNginx: "ingress-nginx's refusals (its access log's status, or `nginx_ingress_controller_requests{status=\"503\"}`; 503 unless its ConfigMap sets limit-req-status-code)",
	FormatHAProxy:      "HAProxy's 429 (or deny_status) responses in its log or its stats' denied requests (`haproxy_frontend_requests_denied_total`)",
	FormatTraefik:      "Traefik's 429 responses on the routers using the middleware (`traefik_router_requests_total{code=\"429\"}`)",
	FormatAPIGateway:   "API Gateway's 429 responses (CloudWatch's `4XXError` by stage and method, or its access logs' status)",
	FormatEnvoyGateway: "Envoy Gateway's 429 responses: the rate limit service's `ratelimit.service.rate_limit.<domain>.<key>.over_limit` statistics for global rules, Envoy's `http_local_rate_limit.<stat_prefix>.rate_limited` for local ones",
}

// reportFew is how many of a rule's patterns, hosts or alternatives the
// report's table names; the configuration written has them all.
const reportFew = 5

// fewOf joins the first reportFew of items with sep, and counts the rest.
func fewOf(items []string, sep string) string {
	if len(items) <= reportFew {
		return strings.Join(items, sep)
	}
	return fmt.Sprintf("%s and %d more", strings.Join(items[:reportFew], sep), len(items)-reportFew)
}

// Report writes the migration analysis in five sections (ReportSections):
// what was found, the translation, a shadow-first rollout with the metrics
// to watch, every difference in semantics, and what to do next. files are
// the names Files gives.
func (t *Translation) Report() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Migration analysis: %s limits from %s\n\n", t.Format, t.Source)

	fmt.Fprintf(&b, "%s\n\n", reportSections[0])
	type row struct {
		l   Limit
		who string
	}
	var rows []row
	for _, l := range t.Limits {
		who := "each client"
		if l.Global {
			who = "all clients together"
		}
		rows = append(rows, row{l, who})
	}
	for _, l := range t.Rules {
		rows = append(rows, row{l, "each descriptor value (Envoy rules)"})
	}
	for _, p := range t.Plans {
		for _, l := range p.Limits {
			rows = append(rows, row{l, "each key of plan " + p.Name})
		}
	}
	for _, r := range t.SluiceRules {
		var wheres []string
		for _, m := range r.alternatives() {
			where := "every path"
			if len(m.Paths) > 0 {
				where = fewOf(m.Paths, " ")
			}
			if len(m.Hosts) > 0 {
				where += " of " + fewOf(m.Hosts, " ")
			}
			if len(m.ExceptPaths) > 0 {
				where += " except " + fewOf(m.ExceptPaths, " ")
			}
			wheres = append(wheres, where)
		}
		where := fewOf(wheres, " or ")
		var except []string
		for _, m := range r.Except {
			var parts []string
			if len(m.Methods) > 0 {
				parts = append(parts, strings.Join(m.Methods, " "))
			}
			if len(m.Paths) > 0 {
				parts = append(parts, fewOf(m.Paths, " "))
			}
			if len(m.Hosts) > 0 {
				parts = append(parts, "of "+fewOf(m.Hosts, " "))
			}
			for _, h := range m.Headers {
				parts = append(parts, "with "+h.Name)
			}
			except = append(except, strings.Join(parts, " "))
		}
		if len(except) > 0 {
			where += " except " + fewOf(except, " or ")
		}
		who := "each " + strings.Join(r.Key, "+")
		if len(r.Key) == 1 && r.Key[0] == "rule" {
			who = "all its requests together"
		}
		if len(r.Plans) > 0 {
			who += " of plan " + strings.Join(r.Plans, ", ")
		}
		for _, l := range r.Limits {
			l.Name = r.Name + "." + l.Name
			rows = append(rows, row{l, fmt.Sprintf("%s, on %s (rule %s)", who, where, r.Name)})
		}
	}
	fmt.Fprintf(&b, "%s holds %s. The goal is to move them to sluice without changing what clients experience, then to improve them one at a time — a gradual migration, not a rewrite.\n\n", t.Source, plural(len(rows), "limit"))
	if len(rows) > 0 {
		b.WriteString("| source | sluice limit | counts |\n|---|---|---|\n")
		for _, r := range rows {
			fmt.Fprintf(&b, "| %s | %s | %s |\n", strings.ReplaceAll(r.l.Source, "|", "\\|"), limitText(r.l), strings.ReplaceAll(r.who, "|", "\\|"))
		}
		b.WriteString("\n")
	}

	fmt.Fprintf(&b, "%s\n\n", reportSections[1])
	b.WriteString("Run sluice with the configuration `sluice import` wrote, which keeps the source's behaviour wherever sluice can express it")
	if t.EnvoyRules != "" {
		fmt.Fprintf(&b, ": sluice's Envoy rate limit service reads the same rules file (`%s`), so Envoy's ratelimit filter only needs its cluster pointed at sluice's envoy listener", t.EnvoyRules)
	}
	b.WriteString(". Every limit starts in shadow mode (`shadow: true`): sluice decides, counts and reports each request — headers, metrics, the dashboard — but refuses nothing, while the old limiter keeps enforcing.\n\n")
	same := 0
	for _, d := range t.Differences {
		if d.Same {
			same++
		}
	}
	fmt.Fprintf(&b, "Of %s compared, %d decide exactly as before and %d differ (below, under Trade-offs).\n\n", plural(len(t.Differences), "aspect"), same, len(t.Differences)-same)

	fmt.Fprintf(&b, "%s\n\n", reportSections[2])
	steps := []string{
		"Validate: `sluice check sluice.yaml`.",
		"Run sluice beside the current limiter, in shadow mode, on the same traffic (as a forward-auth check or a reverse proxy in front of the old one).",
		"Watch for a few days, per limit: `sluice_decisions_total{result=\"shadow\"}` (what sluice would refuse) against " + t.refusals() + "; they should agree within the differences below. Also `sluice_near_limit_total` (clients close to a limit), `sluice_decision_seconds` (the decision's cost) and, with Redis, `sluice_store_errors_total`.",
		"Enforce: `sluice import -enforce` writes the same configuration without shadow, or remove the `shadow: true` lines; then turn the old limits off, one route or zone at a time.",
		"Keep watching the 429 rate and the upstream's load for a week before removing the old configuration.",
	}
	for i, s := range steps {
		fmt.Fprintf(&b, "%d. %s\n", i+1, s)
	}
	b.WriteString("\n")

	fmt.Fprintf(&b, "%s\n\n", reportSections[3])
	for _, d := range t.Differences {
		if !d.Same {
			fmt.Fprintf(&b, "- **Differs** — %s: %s\n", d.Where, d.Text)
		}
	}
	for _, d := range t.Differences {
		if d.Same {
			fmt.Fprintf(&b, "- Same — %s: %s\n", d.Where, d.Text)
		}
	}
	b.WriteString("\n")

	fmt.Fprintf(&b, "%s\n\n", reportSections[4])
	b.WriteString("- Now: check the configuration and start the shadow rollout.\n")
	b.WriteString("- Then: once sluice enforces, consider what the old limiter could not do — exact sliding windows where boundary bursts hurt, per-plan limits, endpoint costs, standard RateLimit headers. `sluice design` simulates the choices on your traffic (`sluice simulate -trace`).\n")
	return b.String()
}

func limitText(l Limit) string {
	s := fmt.Sprintf("`%s`: %s %d per %s", l.Name, l.Algorithm, l.Quantity, formatWindow(l.Window))
	if l.Period != "" {
		s = fmt.Sprintf("`%s`: %s %d per calendar %s (UTC)", l.Name, l.Algorithm, l.Quantity, l.Period)
		if l.Starts != "" {
			s += " from " + startsText(l.Starts)
		}
	}
	if l.Burst > 0 {
		s += fmt.Sprintf(", burst %d", l.Burst)
	}
	if l.MaxWait > 0 {
		s += fmt.Sprintf(", max wait %s", l.MaxWait)
	}
	if l.Shadow {
		s += " (shadow, as in the source)"
	}
	return s
}

// startsText writes a calendar limit's Starts for a reader: "Sunday",
// "the 15th".
func startsText(starts string) string {
	n, err := strconv.Atoi(starts)
	if err != nil {
		return strings.ToUpper(starts[:1]) + starts[1:]
	}
	suffix := "th"
	if n%10 >= 1 && n%10 <= 3 && n/10 != 1 {
		suffix = []string{"st", "nd", "rd"}[n%10-1]
	}
	return fmt.Sprintf("the %d%s", n, suffix)
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// refusals says where the source counted what it refused.
func (t *Translation) refusals() string {
	if t.local {
		return sourceRefusals[envoyLocalRefusals]
	}
	return sourceRefusals[t.Format]
}

// envoyLocalRefusals keys sourceRefusals for Envoy's local rate limit.
const envoyLocalRefusals = "envoy local_ratelimit"
