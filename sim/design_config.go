package sim

import (
	"fmt"
	"strings"
)

// configYAML writes the sluice configuration of rec: a store, an identity
// that counts API keys not listed under keys: by address, and one plan,
// "default", holding the recommended limit, in the format package config
// reads (examples/sluice.yaml is its full reference).
func configYAML(req Requirements, rec Recommendation) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# sluice configuration written by `sluice design` for %s per key", req.Rate)
	fmt.Fprintf(&b, " (precision %s, %s, %s).\n", req.Precision, plural(req.Keys, "key"), plural(req.Instances, "instance"))
	b.WriteString("store:\n")
	fmt.Fprintf(&b, "  type: %s\n", rec.Store)
	if rec.Store == "memory" || rec.Store == "redis" { // redis: its local fallback (on_store_error: local)
		maxKeysYAML(&b, needOf(req.Keys, rec))
	}
	if rec.Store == "redis" {
		b.WriteString("  redis:\n")
		fmt.Fprintf(&b, "    mode: %s\n", rec.RedisMode)
		fmt.Fprintf(&b, "    addresses: %s\n", yamlList(req.RedisAddresses))
		if rec.RedisMode == "sentinel" {
			b.WriteString("    master_name: mymaster   # the Sentinel master set: change to yours\n")
		}
		b.WriteString("    on_store_error: local   # Redis down: decide in memory with quota ÷ instances\n")
		fmt.Fprintf(&b, "    instances: %d\n", req.Instances)
	}
	b.WriteString("identity:\n  unknown_keys: ip   # a key not listed under keys: counts by its client's address, so a made-up key is no fresh quota\n")
	b.WriteString("plans:\n  default:\n    limits:\n")
	fmt.Fprintf(&b, "      - name: %s\n", yamlName(rec.Name))
	fmt.Fprintf(&b, "        algorithm: %s\n", rec.Algorithm)
	fmt.Fprintf(&b, "        quantity: %d", rec.Quantity)
	switch {
	case rec.PerInstance && rec.Burst > 0 && req.Precision != PrecisionLoose:
		fmt.Fprintf(&b, "   # per instance: %d + burst %d − 1 = %d in any window, within %s ÷ %d instances", rec.Quantity, rec.Burst, bucketWorst(rec.Quantity, rec.Burst), req.Rate, req.Instances)
	case rec.PerInstance:
		fmt.Fprintf(&b, "   # per instance: %s ÷ %d instances", req.Rate, req.Instances)
	}
	b.WriteString("\n")
	windowYAML(&b, "        ", rec)
	if rec.Burst > 0 {
		fmt.Fprintf(&b, "        burst: %d\n", rec.Burst)
	}
	if rec.MaxWait > 0 {
		fmt.Fprintf(&b, "        max_wait: %s\n", rec.MaxWait)
	}
	b.WriteString("default_plan: default\n")
	return b.String()
}

// windowYAML writes rec's window at indent: a duration, or a calendar
// period with the zone and start the requirement gave it.
func windowYAML(b *strings.Builder, indent string, rec Recommendation) {
	if rec.Period == "" {
		fmt.Fprintf(b, "%swindow: %s\n", indent, rec.Window)
		return
	}
	fmt.Fprintf(b, "%swindow: %s   # the calendar %s: whole again when the next starts\n", indent, rec.Period, rec.Period)
	if rec.Zone != "" {
		fmt.Fprintf(b, "%szone: %s\n", indent, yamlString(rec.Zone))
	}
	if rec.Starts != "" {
		fmt.Fprintf(b, "%sstarts: %s\n", indent, strings.ToLower(string(rec.Starts)))
	}
}
