package sim

// Result is what Run measured: the traffic, the limit every contender is
// held to (Quantity per Window, the "limit" of every figure), and one
// AlgorithmResult per contender in Config order. It is JSON-able.
type Result struct {
	// Source describes the traffic, e.g. "pattern boundary-burst".
	Source string `json:"source"`
	// Limit is Quantity/Window as ParseRate reads it, e.g. "100/1m", or
	// Quantity/Period for a calendar quota ("10000/month").
	Limit    string   `json:"limit"`
	Quantity int64    `json:"quantity"`
	Window   Duration `json:"window"`
	// Period is the calendar period of a calendar quota ("month", see
	// Config.Period), whose Window is the period's longest; Offset is how
	// far after the UTC calendar's its periods start. Empty and 0 otherwise.
	Period string   `json:"period,omitempty"`
	Offset Duration `json:"offset,omitempty"`
	// WholeAgain says when a calendar quota's periods start ("on the 15th
	// at 00:00 UTC+09:00"); empty otherwise.
	WholeAgain string `json:"whole_again,omitempty"`
	// Tested is the quantity/window the contenders were given when it
	// differs from Limit (see Request.Reference); empty otherwise.
	Tested string `json:"tested,omitempty"`
	// Keys counts the distinct keys that sent traffic.
	Keys int `json:"keys"`
	// Requests and Units count the trace's arrivals and their total cost,
	// before any retry.
	Requests int   `json:"requests"`
	Units    int64 `json:"units"`
	// Duration is the span of the trace.
	Duration Duration `json:"duration"`
	// Reference is the exact limit decisions are compared with: a sliding
	// window log of Quantity per Window ("sliding-window-log 100/1m"; of a
	// calendar quota, per its longest period: "… 10000/31d").
	Reference string `json:"reference"`
	// Retry is the retry policy of the refused clients, if any.
	Retry *RetryPolicy `json:"retry,omitempty"`
	// Algorithms holds one result per contender, in Config order.
	Algorithms []AlgorithmResult `json:"algorithms"`
	// Omitted lists the algorithms a Request for all of them left out
	// because they cannot hold its limit, each with the reason; nil when
	// none was.
	Omitted []Omission `json:"omitted,omitempty"`
	// Chart is the data Chart draws; omitted from JSON when cleared.
	Chart *ChartData `json:"chart,omitempty"`
}

// Omission is an algorithm a simulation left out: Algorithm its name,
// Reason why (the error building its limit).
type Omission struct {
	Algorithm string `json:"algorithm"`
	Reason    string `json:"reason"`
}

// AlgorithmResult is one contender's figures. Counts are of decisions
// (requests, including retries); window figures are in units (costs).
type AlgorithmResult struct {
	// Label is the contender's label; Algorithm its algorithm's name; Limit
	// the full limit, as sluice.Limit.String writes it.
	Label     string `json:"label"`
	Algorithm string `json:"algorithm"`
	Limit     string `json:"limit"`

	// Decisions counts requests decided: arrivals plus retries.
	Decisions int64 `json:"decisions"`
	// Admitted and Rejected split Decisions; AdmittedUnits sums the cost
	// admitted.
	Admitted      int64 `json:"admitted"`
	Rejected      int64 `json:"rejected"`
	AdmittedUnits int64 `json:"admitted_units"`
	// Retries counts retries sent; GaveUp counts refused requests whose
	// client stopped retrying (Max reached, RetryAfter Never, or past the
	// trace's end). Both 0 without a RetryPolicy.
	Retries int64 `json:"retries,omitempty"`
	GaveUp  int64 `json:"gave_up,omitempty"`

	// WorstWindow is the most units admitted for one key within any span
	// (t-W, t] — a sliding window over admissions, each counted when it
	// proceeds (arrival plus Delay) — and WorstKey, WorstAt (offset from the
	// trace start of t) say where; both are zero when WorstWindow is.
	// Compare it with Result.Quantity.
	WorstWindow int64    `json:"worst_window"`
	WorstKey    string   `json:"worst_key,omitempty"`
	WorstAt     Duration `json:"worst_at"`
	// OvershootPct is 100·(WorstWindow - Quantity)/Quantity, or 0 when the
	// worst window is within the limit.
	OvershootPct float64 `json:"overshoot_pct"`
	// WorstPeriod is, for a calendar quota (Result.Period), the most units
	// admitted for one key within one calendar period, each counted when it
	// proceeds: what the quota bounds, while WorstWindow spans its longest
	// period across period boundaries. 0 for other limits.
	WorstPeriod int64 `json:"worst_period,omitempty"`

	// Disagreements counts decisions that differ from the reference, an
	// exact sliding window log fed the same requests (each deciding on its
	// own state); FalseAllows are admitted here but refused there,
	// FalseDenials the reverse. DisagreePct is 100·Disagreements/Decisions.
	Disagreements int64   `json:"disagreements"`
	FalseAllows   int64   `json:"false_allows"`
	FalseDenials  int64   `json:"false_denials"`
	DisagreePct   float64 `json:"disagree_pct"`

	// Delayed counts admissions a leaky-bucket queue delayed; MeanDelay is
	// the mean delay over all admissions, MaxDelay the largest.
	Delayed   int64    `json:"delayed,omitempty"`
	MeanDelay Duration `json:"mean_delay"`
	MaxDelay  Duration `json:"max_delay"`

	// StateBytesMax and StateBytesMean are the bytes of state per key: the
	// documented fixed size (fixed window 16, sliding counter 24, token
	// bucket, leaky bucket and GCRA 16) or, for the sliding log and the
	// concurrency limit (a log of leases), 16 per retained entry at the
	// key's peak — the largest over keys, and the mean over keys that sent
	// traffic.
	StateBytesMax  int64   `json:"state_bytes_max"`
	StateBytesMean float64 `json:"state_bytes_mean"`
}

// ChartData is what Chart draws: units in a trailing window, sampled over
// time, for the offered traffic and for each contender, and the limit line.
type ChartData struct {
	// Span is the trailing span each point counts: the window W, or, for a
	// trace too long to sample at that resolution, a longer bin whose count
	// is scaled to units per W (Scaled is then true).
	Span   Duration `json:"span"`
	Scaled bool     `json:"scaled,omitempty"`
	// LimitLine is Quantity × Keys: what all keys together may take per W.
	LimitLine float64 `json:"limit_line"`
	// Series are "requests" (the offered units, before retries); with
	// retries, the attempts of the contender that caused the most; then one
	// per contender, named by its label. They run past the trace's end by
	// the longest leaky-bucket queue's MaxWait, where admissions it delayed
	// proceed.
	Series []Series `json:"series"`
}

// Roles of chart series.
const (
	RoleOffered  = "offered"  // the trace's requests
	RoleAttempts = "attempts" // requests plus the retries refusals caused
	RoleAdmitted = "admitted" // what one contender admitted
)

// Series is one line of the chart.
type Series struct {
	Name string `json:"name"`
	// Role is RoleOffered, RoleAttempts or RoleAdmitted.
	Role string `json:"role"`
	// X is seconds since the trace start; Y units in the span ending there.
	X []float64 `json:"x"`
	Y []float64 `json:"y"`
}
