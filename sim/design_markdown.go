package sim

import (
	"fmt"
	"strings"
	"time"
)

// markdown writes the analysis of rate rt for a person.
func (a *Analysis) markdown(rt rate) string {
	var b strings.Builder
	req, rec := a.Requirements, a.Recommendation
	q, win := rt.q, rt.per()
	fmt.Fprintf(&b, "# Rate-limit design: %d per %s per key\n\n", q, win)

	b.WriteString("## Context\n\n| requirement | value |\n|---|---|\n")
	switch {
	case rt.calendar():
		fmt.Fprintf(&b, "| limit | %s per calendar %v, %s, for each key |\n", requestUnits(q), rt.period, periodStartText(rt))
		fmt.Fprintf(&b, "| burst tolerance | not bounded by the quota (up to %d at once): a limit per second or minute beside it bounds bursts |\n", q)
		fmt.Fprintf(&b, "| precision | %s — never more than %d in one calendar %v: a calendar quota is counted per period at every precision |\n", req.Precision, q, rt.period)
	default:
		fmt.Fprintf(&b, "| limit | %s per %s for each key |\n", requestUnits(q), win)
		if smoothing(req, q) {
			fmt.Fprintf(&b, "| burst tolerance | at most %d at once |\n", req.Burst)
		} else {
			fmt.Fprintf(&b, "| burst tolerance | any pattern within the window (up to %d at once) |\n", q)
		}
		fmt.Fprintf(&b, "| precision | %s — %s |\n", req.Precision, precisionText(req.Precision, q, win))
	}
	fmt.Fprintf(&b, "| keys | %d live at once |\n", req.Keys)
	fmt.Fprintf(&b, "| instances | %d |\n", req.Instances)
	fmt.Fprintf(&b, "| store | %s |\n\n", req.Store)

	b.WriteString("## Recommendation\n\n")
	fmt.Fprintf(&b, "**%s**, in %s.\n\n", limitText(rec), storeText(req, rec))
	for _, r := range rec.Reasons {
		fmt.Fprintf(&b, "- %s\n", r)
	}
	for _, r := range a.evidence(rt) {
		fmt.Fprintf(&b, "- %s\n", r)
	}
	fmt.Fprintf(&b, "- %s\n\n", storeReason(req, rec))

	if rt.calendar() {
		a.calendarFiguresTable(&b, rt)
	} else {
		a.figuresTable(&b, win)
	}

	b.WriteString("## Trade-offs\n\n")
	for _, t := range a.tradeOffs(rt) {
		fmt.Fprintf(&b, "- %s\n", t)
	}
	b.WriteString("\n## Next steps\n\n")
	for i, s := range a.nextSteps(rt) {
		fmt.Fprintf(&b, "%d. %s\n", i+1, s)
	}
	b.WriteString("\n## Configuration\n\nSave as `sluice.yaml`:\n\n```yaml\n")
	b.WriteString(a.Config)
	b.WriteString("```\n")
	return b.String()
}

func precisionText(p string, q int64, win string) string {
	switch p {
	case PrecisionStrict:
		return fmt.Sprintf("never more than %d in any %s, whatever the timing", q, win)
	case PrecisionApproximate:
		return fmt.Sprintf("never more than %d in any %s; refusing somewhat earlier than an exact window would is acceptable in exchange for less memory", q, win)
	}
	return "up to about twice the limit across a window boundary is acceptable"
}

func limitText(rec Recommendation) string {
	s := fmt.Sprintf("%s, %d per %s", rec.Algorithm, rec.Quantity, rec.rate().per())
	if rec.Burst > 0 {
		s += fmt.Sprintf(", burst %d", rec.Burst)
	}
	if rec.PerInstance {
		s += " on each instance"
	}
	return s
}

func storeText(req Requirements, rec Recommendation) string {
	switch {
	case rec.Store == "redis" && req.Instances > 1:
		return fmt.Sprintf("a Redis store (%s) shared by %d instances", rec.RedisMode, req.Instances)
	case rec.Store == "redis":
		return fmt.Sprintf("a Redis store (%s)", rec.RedisMode)
	case rec.PerInstance:
		return fmt.Sprintf("the in-memory store of each of the %d instances", req.Instances)
	}
	return "the in-memory store"
}

func storeReason(req Requirements, rec Recommendation) string {
	switch {
	case rec.Store == "redis" && req.Instances > 1:
		return fmt.Sprintf("%d instances must share one count, or each would admit the full quota: Redis keeps it, deciding in one Lua script per request with Redis's own clock, so instances' clock skew cannot leak quota.", req.Instances)
	case rec.Store == "redis" && req.Store == "auto":
		return fmt.Sprintf("State for %s (about %s with the store's bookkeeping) is too much for one process's memory: Redis (%s) holds it outside the process.",
			plural(req.Keys, "key"), formatBytes(stateEstimate(rec, req)), rec.RedisMode)
	case rec.Store == "redis":
		return "Redis keeps the state outside the process, so it survives restarts and deploys, and more instances can join later."
	case rec.PerInstance:
		share, whole, as := rec.Quantity, rec.sharedQuantity, ""
		if rec.Burst > 0 && req.Precision != PrecisionLoose { // a split bucket: bucketWorst bounds every window
			share, whole = bucketWorst(share, rec.Burst), bucketWorst(whole, rec.sharedBurst)
			as = fmt.Sprintf(", as quantity: %d and burst: %d, which together bound any window", rec.Quantity, rec.Burst)
		}
		return fmt.Sprintf("Each instance keeps its own count, so each is configured with 1/%d of the quota (%d of %d)%s: the total is right only as far as your load balancer spreads each key's requests evenly.",
			req.Instances, share, whole, as)
	}
	return "One instance: the in-process memory store decides without a network round trip, in well under a microsecond."
}

// evidence states the simulated figures behind the recommendation of rt.
func (a *Analysis) evidence(rt rate) []string {
	label, s := a.Recommendation.Label, a.Scale
	worst, where := a.worst(label)
	var out []string
	verdict := "never above the limit"
	if worst > s.Quantity {
		verdict = fmt.Sprintf("%s above the limit", overshootText(100*float64(worst-s.Quantity)/float64(s.Quantity)))
	}
	reference := "an exact sliding window log"
	if rt.calendar() {
		reference = fmt.Sprintf("an exact sliding window log of %d per %s", s.Quantity, rt.span())
		inPeriod, wherePeriod := a.worstPeriod(label)
		verdict := "never above the quota"
		if inPeriod > s.Quantity {
			verdict = fmt.Sprintf("%s above the quota", overshootText(100*float64(inPeriod-s.Quantity)/float64(s.Quantity)))
		}
		across := fmt.Sprintf("and at most %d in any %s", worst, rt.span())
		if worst > s.Quantity {
			across = fmt.Sprintf("and across the start of a %v it admitted up to %d within %s (%s; under %s): the end of one %v's quota and the whole of the next's",
				rt.period, worst, rt.span(), overshootText(100*float64(worst-s.Quantity)/float64(s.Quantity)), where, rt.period)
		}
		out = append(out, fmt.Sprintf("Simulated on four traffic patterns, its worst calendar %v admitted %d of %d (%s; worst under %s), %s.",
			rt.period, inPeriod, s.Quantity, verdict, wherePeriod, across))
	} else {
		out = append(out, fmt.Sprintf("Simulated on four traffic patterns, its worst window admitted %d of %d (%s; worst under %s).",
			worst, s.Quantity, verdict, where))
	}
	if f := a.figure(PatternManyKeys, label); f != nil {
		out = append(out, fmt.Sprintf("On a population of %s it decided %s of requests differently from %s, and admitted %d of %s.",
			plural(s.Keys, "key"), formatPct(f.DisagreePct), reference, f.Admitted, plural(f.Decisions, "request")))
	}
	if f := a.figure(PatternManyKeys, label); f != nil {
		per := f.StateBytesMean * a.Scale.Factor
		if f.Algorithm != "sliding-window-log" {
			per = float64(f.StateBytesMax)
		}
		out = append(out, fmt.Sprintf("State: %s per key, about %s for %s (the algorithm's state; the store adds each key's name and bookkeeping).",
			formatBytes(per), formatBytes(per*float64(a.Requirements.Keys)), plural(a.Requirements.Keys, "key")))
	}
	return out
}

// figuresTable writes every contender's figures across the scenarios.
func (a *Analysis) figuresTable(b *strings.Builder, win string) {
	s := a.Scale
	b.WriteString("### Simulated figures\n\n")
	fmt.Fprintf(b, "Every algorithm replayed the same traffic through sluice's own code (seed %d). "+
		"*Worst* is the most units admitted for one key in any %s, against the limit of %d; "+
		"*differs* is the share of decisions unlike an exact sliding window log's on the same requests.",
		a.Requirements.Seed, win, s.Quantity)
	if s.Factor != 1 || int64(s.Keys) != a.Requirements.Keys {
		fmt.Fprintf(b, " To stay quick the simulations used %d per %s and %s", s.Quantity, win, plural(s.Keys, "key"))
		if s.Burst > 0 {
			fmt.Fprintf(b, " (burst %d)", s.Burst)
		}
		b.WriteString("; the ratios carry over, and state sizes below are scaled back up.")
	}
	b.WriteString(" One key held at its limit (spike, steady) magnifies small timing differences, so *differs* is high there for every approximation; many-keys is the realistic figure.")
	b.WriteString("\n\n| algorithm | worst: boundary-burst | worst: spike | worst: steady | worst: many-keys | differs: steady | differs: many-keys | state per key | state, all keys |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	if len(a.Scenarios) == 0 {
		return
	}
	for _, r := range a.Scenarios[0].Result.Algorithms {
		label := r.Label
		cells := []string{a.rowName(label)}
		for _, p := range []string{PatternBoundaryBurst, PatternSpike, PatternSteady, PatternManyKeys} {
			f := a.figure(p, label)
			cell := fmt.Sprintf("%d", f.WorstWindow)
			if f.OvershootPct > 0 {
				cell += " (" + overshootText(f.OvershootPct) + ")"
			}
			cells = append(cells, cell)
		}
		for _, p := range []string{PatternSteady, PatternManyKeys} {
			cells = append(cells, formatPct(a.figure(p, label).DisagreePct))
		}
		per, total := a.stateCells(label)
		cells = append(cells, per, total)
		fmt.Fprintf(b, "| %s |\n", strings.Join(cells, " | "))
	}
	a.writePatterns(b)
}

// calendarFiguresTable writes every contender's figures across the
// scenarios of calendar quota rt: the worst calendar period, the worst
// span of its longest period, how far each differs from the exact log.
func (a *Analysis) calendarFiguresTable(b *strings.Builder, rt rate) {
	s, p, span := a.Scale, rt.period, rt.span()
	b.WriteString("### Simulated figures\n\n")
	days := 0
	if len(a.Scenarios) > 0 {
		days = int(a.Scenarios[0].Result.Duration.D() / (24 * time.Hour))
	}
	fmt.Fprintf(b, "Every algorithm replayed the same traffic through sluice's own code (seed %d): %d days of it from 2020-01-01, the calendar window per %v and every other algorithm per %s, the longest %v. "+
		"*Worst %v* is the most units admitted for one key in one calendar %v, against the quota of %d; *worst %s* the most in any %s, across the starts of %vs; "+
		"*differs* is the share of decisions unlike those of an exact sliding window log of %d per %s on the same requests.",
		a.Requirements.Seed, days, p, span, p, p, p, s.Quantity, span, span, p, s.Quantity, span)
	if s.Factor != 1 || int64(s.Keys) != a.Requirements.Keys {
		fmt.Fprintf(b, " The simulations used %d per %v and %s; the ratios carry over, and state sizes below are scaled back up.", s.Quantity, p, plural(s.Keys, "key"))
	}
	patterns := []string{PatternBoundaryBurst, PatternSpike, PatternSteady, PatternManyKeys}
	b.WriteString("\n\n| algorithm |")
	for _, pt := range patterns {
		fmt.Fprintf(b, " worst %v: %s |", p, pt)
	}
	for _, pt := range patterns {
		fmt.Fprintf(b, " worst %s: %s |", span, pt)
	}
	b.WriteString(" differs: many-keys | state per key | state, all keys |\n|---|")
	b.WriteString(strings.Repeat("---:|", 2*len(patterns)+3) + "\n")
	if len(a.Scenarios) == 0 {
		return
	}
	cell := func(units int64) string {
		c := fmt.Sprintf("%d", units)
		if units > s.Quantity {
			c += " (" + overshootText(100*float64(units-s.Quantity)/float64(s.Quantity)) + ")"
		}
		return c
	}
	for _, r := range a.Scenarios[0].Result.Algorithms {
		label := r.Label
		cells := []string{a.rowName(label)}
		for _, pt := range patterns {
			cells = append(cells, cell(a.figure(pt, label).WorstPeriod))
		}
		for _, pt := range patterns {
			cells = append(cells, cell(a.figure(pt, label).WorstWindow))
		}
		cells = append(cells, formatPct(a.figure(PatternManyKeys, label).DisagreePct))
		per, total := a.stateCells(label)
		cells = append(cells, per, total)
		fmt.Fprintf(b, "| %s |\n", strings.Join(cells, " | "))
	}
	a.writePatterns(b)
}

// stateCells returns label's state per key and for all keys; the sliding
// log's is the mean measured on many keys, scaled back to the real quantity.
func (a *Analysis) stateCells(label string) (string, string) {
	f := a.figure(PatternManyKeys, label)
	keys := float64(a.Requirements.Keys)
	if f.Algorithm != "sliding-window-log" {
		return formatBytes(float64(f.StateBytesMax)), formatBytes(float64(f.StateBytesMax) * keys)
	}
	mean, most := f.StateBytesMean*a.Scale.Factor, float64(f.StateBytesMax)*a.Scale.Factor
	return fmt.Sprintf("%s mean, %s max", formatBytes(mean), formatBytes(most)), "≈ " + formatBytes(mean*keys)
}

// tradeOffs says what the recommendation of rt gives up, with figures.
func (a *Analysis) tradeOffs(rt rate) []string {
	req, rec, s := a.Requirements, a.Recommendation, a.Scale
	q, win := rt.q, rt.per()
	var out []string
	worstOf := func(label string) string {
		w, p := a.worst(label)
		return fmt.Sprintf("%d of %d, under %s", w, s.Quantity, p)
	}
	if rt.calendar() {
		return append(a.calendarTradeOffs(rt), a.storeTradeOffs(rt)...)
	}
	switch {
	case rec.Algorithm == "gcra" && req.Precision != PrecisionLoose && rec.Quantity == q:
		// A burst of 1: the bucket spaces requests evenly at the full rate.
	case rec.Algorithm == "gcra" && req.Precision != PrecisionLoose:
		out = append(out, fmt.Sprintf("The sustained rate is %d per %s, not %d: the bucket's %d are the headroom that keeps every window within %d. "+
			"If clients need the full %d sustained with bursts of at most %d, use two limits in the plan — gcra %d/%s burst %d and sliding-window-log %d/%s — which sluice admits together or not at all, at the log's memory cost.",
			rec.Quantity, win, q, rec.Burst, q, q, max(req.Burst, rec.Burst), q, win, max(req.Burst, rec.Burst), q, win))
	case rec.Algorithm == "gcra":
		out = append(out, fmt.Sprintf("A bucket lets a client take its burst and then the steady rate, so one window can see up to burst + quantity: worst %s. Choose approximate or strict precision to cap every window at %d.",
			worstOf(rec.Label), q))
	case rec.Algorithm == "sliding-window-log":
		out = append(out, fmt.Sprintf("Exactness costs memory and time proportional to the quantity: 16 bytes per admission still in the window, up to %s per key, and each decision scans the key's log. In Redis each entry is a sorted-set member, several times larger.",
			formatBytes(16*float64(q))))
	case rec.Algorithm == "sliding-window-counter":
		out = append(out, fmt.Sprintf("The counter is an estimate that assumes the previous window's requests were evenly spread: against the exact log its worst window was %s and it decided %s of many-keys requests differently. Choose strict precision for an exact limit.",
			worstOf(rec.Label), formatPct(a.figure(PatternManyKeys, rec.Label).DisagreePct)))
	case rec.Algorithm == "fixed-window":
		out = append(out, fmt.Sprintf("Across a window boundary a client can get twice the quantity: worst %s.", worstOf(rec.Label)))
	}
	if rec.Algorithm != "fixed-window" {
		out = append(out, fmt.Sprintf("A fixed window would be simpler (the quota resets at the top of each %s) but lets bursts through at boundaries: worst %s.", win, worstOf("fixed-window")))
	}
	if rec.Algorithm != "sliding-window-log" {
		out = append(out, fmt.Sprintf("The exact sliding window log never exceeds the limit (worst %s) but keeps every admission: %s per key at most, about %s for %s.",
			worstOf("sliding-window-log"), formatBytes(16*float64(q)), formatBytes(16*float64(q)*float64(req.Keys)), plural(req.Keys, "key")))
	}
	if f := a.figure(PatternSpike, "leaky-bucket"); f != nil && f.Delayed > 0 {
		out = append(out, fmt.Sprintf("If clients cannot retry, a leaky-bucket queue (max_wait) delays requests instead of refusing them: with a wait of up to a tenth of the window it admitted %s of the spike, delaying %d of them; the added latency averaged %s per admitted request, %s at most.",
			plural(f.Admitted, "request"), f.Delayed, roundDuration(f.MeanDelay.D()), roundDuration(f.MaxDelay.D())))
	}
	return append(out, a.storeTradeOffs(rt)...)
}

// storeTradeOffs says what the recommended store gives up.
func (a *Analysis) storeTradeOffs(rt rate) []string {
	req, rec := a.Requirements, a.Recommendation
	var out []string
	switch {
	case rec.Store == "redis":
		out = append(out, "Every decision is a Redis round trip (well under a millisecond on a local network). If Redis is unreachable, on_store_error: local makes each instance decide in memory with the quota divided by the number of instances: roughly right, rather than failing open or closed.")
		if rec.RedisMode == "standalone" {
			out = append(out, "A standalone Redis is a single point of failure; Sentinel (mode: sentinel, with master_name) adds failover, Cluster (mode: cluster) adds capacity.")
		}
	case rec.PerInstance:
		out = append(out, fmt.Sprintf("Per-instance quotas drift when a key's requests are unevenly spread or instances come and go; a Redis store (store: redis) shares one exact count between the %d instances.", req.Instances))
	case rt.calendar():
		out = append(out, fmt.Sprintf("State lives in the process: a restart forgets it and every client gets a fresh %v's quota. For a billing quota prefer a Redis store (store: redis), which survives restarts and deploys; a second instance would need one too (or the quota divided between instances).", rt.period))
	default:
		out = append(out, "State lives in the process: a restart forgets it and clients get a fresh quota. A second instance would need a Redis store (or the quota divided between instances).")
	}
	return out
}

// calendarTradeOffs says what the calendar window of quota rt gives up,
// with the simulated figures.
func (a *Analysis) calendarTradeOffs(rt rate) []string {
	req, rec, s := a.Requirements, a.Recommendation, a.Scale
	p, span := rt.period, rt.span()
	across, where := a.worst(rec.Label)
	inPeriod, _ := a.worstPeriod(rec.Label)
	logAcross, logWhere := a.worst("sliding-window-log")
	days := int64(rt.w / (24 * time.Hour))
	return []string{
		fmt.Sprintf("Across the start of a %v a client can take up to twice the quota within %s — what is left of one %v's and the whole of the next's: in the simulations at most %d of %d within one calendar %v, but %d of %d within %s (under %s). "+
			"That is what a quota per %v means; if no %s may see more than %d, state the rate as %d/%dd instead: a sliding window, never whole again at a %v's start.",
			p, span, p, inPeriod, s.Quantity, p, across, s.Quantity, span, where, p, span, rt.q, rt.q, days, p),
		fmt.Sprintf("The quota alone does not bound how fast it is spent: a client may use the whole %v's %d in a minute. "+
			"A limit per second or per minute beside it in the same plan bounds bursts (sluice checks a request's limits together, all or nothing); state the rate your backend takes from one client.", p, rt.q),
		fmt.Sprintf("The exact sliding window log of %d per %s never admits more than %d in any %s (worst %d of %d, under %s) but is never whole again at a %v's start, and keeps every admission: %s per key at most, about %s for %s.",
			rt.q, span, rt.q, span, logAcross, s.Quantity, logWhere, p, formatBytes(16*float64(rt.q)), formatBytes(16*float64(rt.q)*float64(req.Keys)), plural(req.Keys, "key")),
	}
}

// nextSteps are the commands to run next.
func (a *Analysis) nextSteps(rt rate) []string {
	rec := a.Recommendation
	q, win := rt.q, FormatDuration(rt.w)
	if rt.calendar() {
		win = rt.period.String()
	}
	// Replay the configured limit (before any division between instances),
	// measured against the requirement.
	quantity, burst := rec.Quantity, rec.Burst
	if rec.PerInstance {
		quantity, burst = rec.sharedQuantity, rec.sharedBurst
	}
	sim := fmt.Sprintf("sluice simulate -trace requests.csv -limit %d/%s", quantity, win)
	if burst > 0 {
		sim += fmt.Sprintf(" -burst %d", burst)
	}
	switch {
	case quantity != q:
		sim += fmt.Sprintf(" -reference %d/%s -algorithms %s", q, win, rec.Algorithm)
	case rec.Algorithm == "sliding-window-log":
		sim += " -algorithms sliding-window-log,sliding-window-counter"
	default:
		sim += fmt.Sprintf(" -algorithms %s,sliding-window-log", rec.Algorithm)
	}
	if rt.zone != "" {
		sim += " -zone " + rt.zone
	}
	if rt.starts != "" {
		sim += " -starts " + string(rt.starts)
	}
	sim += " -chart replay.svg"
	if rt.calendar() {
		sim += "`"
		return []string{
			"Save the configuration below as `sluice.yaml` and validate it: `sluice check sluice.yaml`.",
			"Replay your real traffic before enforcing: export requests as `time,key,cost` lines (RFC 3339 or seconds) and run `" + sim + ".",
			fmt.Sprintf("Roll out in shadow mode first (`shadow: true` on the limit): it is evaluated and reported but refuses nothing; watch `sluice_decisions_total{limit=%q,result=\"shadow\"}` until the rejections you see are the ones you want; clients reach a calendar quota late in the %v, so watch across the end of one.", rec.Name, rt.period),
			fmt.Sprintf("Tell clients when the quota is whole again: a refusal's `Retry-After` is the time left until the next %v starts, and the documentation sluice serves at `/docs` says the quota is counted per calendar %v.", rt.period, rt.period),
		}
	}
	return []string{
		"Save the configuration below as `sluice.yaml` and validate it: `sluice check sluice.yaml`.",
		"Replay your real traffic before enforcing: export requests as `time,key,cost` lines (RFC 3339 or seconds) and run `" + sim + "`.",
		fmt.Sprintf("Roll out in shadow mode first (`shadow: true` on the limit): it is evaluated and reported but refuses nothing; watch `sluice_decisions_total{limit=%q,result=\"shadow\"}` until the rejections you see are the ones you want.", rec.Name),
		"Make sure clients honour `Retry-After`: `sluice simulate -pattern retry-storm -limit " + fmt.Sprintf("%d/%s", q, win) + "` shows how much extra traffic impatient retries cause.",
	}
}

// rowName is how a figures table names the algorithm of label: in bold
// when it is the recommendation.
func (a *Analysis) rowName(label string) string {
	switch {
	case label != a.Recommendation.Label:
		return label
	case strings.HasPrefix(label, "recommended"):
		return "**" + label + "**"
	}
	return "**" + label + "** (recommended)"
}

// writePatterns writes the list of the simulated patterns that follows a
// figures table.
func (a *Analysis) writePatterns(b *strings.Builder) {
	b.WriteString("\nThe patterns:\n\n")
	for _, sc := range a.Scenarios {
		fmt.Fprintf(b, "- **%s**: %s; %s.\n", sc.Pattern, sc.Description, plural(sc.Result.Requests, "request"))
	}
	b.WriteString("\n")
}

// requestUnits writes a limit's quantity in requests or the units they
// cost: "1 request (unit)", "100 requests (units)".
func requestUnits(q int64) string {
	if q == 1 {
		return "1 request (unit)"
	}
	return fmt.Sprintf("%d requests (units)", q)
}
