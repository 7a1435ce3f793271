package sim

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/sluice-dev/sluice"
)

// WriteTable writes res as a terminal table: a line about the traffic, then
// one row per algorithm. Figures are those of AlgorithmResult: the worst
// window is per key, in units, against the limit Q; a calendar quota's
// table has the worst calendar period before it ("worst month"), and its
// window is the period's longest ("worst 31d").
func WriteTable(w io.Writer, res *Result) error {
	limit := "limit " + res.Limit
	if res.Tested != "" {
		limit = fmt.Sprintf("testing %s against the limit %s", res.Tested, res.Limit)
	}
	if res.Offset != 0 {
		limit += ", whole again " + res.WholeAgain + ","
	}
	fmt.Fprintf(w, "%s: %s, %s over %s; %s per key; reference %s\n",
		res.Source, plural(res.Keys, "key"), requestsText(res), res.Duration, limit, res.Reference)
	if res.Retry != nil {
		fmt.Fprintf(w, "refused clients retry up to %d times, %s of retries after %s, the rest after Retry-After\n",
			res.Retry.Max, formatPct(100*res.Retry.Impatient), res.Retry.Gap)
	}
	delays, retries := false, res.Retry != nil
	for _, a := range res.Algorithms {
		delays = delays || a.Delayed > 0
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := []string{"algorithm\t", "admitted", "rejected"}
	if retries {
		head = append(head, "retries")
	}
	calendar := res.Period != ""
	if calendar {
		head = append(head, "worst "+res.Period)
	}
	head = append(head, "worst "+windowText(res), "overshoot", "differs")
	if delays {
		head = append(head, "delay mean", "delay max")
	}
	head = append(head, "state/key")
	fmt.Fprintln(tw, strings.Join(head, "\t")+"\t")
	for _, a := range res.Algorithms {
		row := []string{a.Label + "\t", fmt.Sprint(a.Admitted), fmt.Sprint(a.Rejected)}
		if retries {
			row = append(row, fmt.Sprint(a.Retries))
		}
		if calendar {
			row = append(row, fmt.Sprintf("%d/%d", a.WorstPeriod, res.Quantity))
		}
		row = append(row, fmt.Sprintf("%d/%d", a.WorstWindow, res.Quantity), overshootText(a.OvershootPct), formatPct(a.DisagreePct))
		if delays {
			row = append(row, delayText(a.MeanDelay, a.Delayed), delayText(a.MaxDelay, a.Delayed))
		}
		row = append(row, stateText(a))
		fmt.Fprintln(tw, strings.Join(row, "\t")+"\t")
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, o := range res.Omitted {
		if _, err := fmt.Fprintf(w, "%s not simulated: %s\n", o.Algorithm, o.Reason); err != nil {
			return err
		}
	}
	return nil
}

// windowText writes res's window: a duration ("1m"), or in whole days
// the longest period of a calendar quota ("31d").
func windowText(res *Result) string {
	if res.Period != "" && res.Window.D()%(24*time.Hour) == 0 {
		return fmt.Sprintf("%dd", res.Window.D()/(24*time.Hour))
	}
	return res.Window.String()
}

func requestsText(res *Result) string {
	s := plural(res.Requests, "request")
	if res.Units != int64(res.Requests) {
		s += " (" + plural(res.Units, "unit") + ")"
	}
	return s
}

// plural writes n and word, in the plural unless n is 1: "1 key", "2 keys",
// "2 entries".
func plural[N int | int64](n N, word string) string {
	if n == 1 {
		return "1 " + word
	}
	if stem, ok := strings.CutSuffix(word, "ry"); ok {
		return fmt.Sprintf("%d %sries", n, stem)
	}
	return fmt.Sprintf("%d %ss", n, word)
}

func overshootText(pct float64) string {
	if pct == 0 {
		return "none"
	}
	return "+" + formatPct(pct)
}

// formatPct writes a percentage with the precision its size deserves:
// 0%, 0.0031%, 0.42%, 12.5%. A share that is neither none nor all is never
// written as 0% or 100%: below 0.0001% it reads "<0.0001%", from 99.95% up
// to 100% ">99.9%".
func formatPct(p float64) string {
	switch {
	case p == 0:
		return "0%"
	case p < 0.0001:
		return "<0.0001%"
	case p < 0.01:
		return fmt.Sprintf("%.4f%%", p)
	case p < 1:
		return fmt.Sprintf("%.2f%%", p)
	case p < 99.95:
		return fmt.Sprintf("%.1f%%", p)
	case p < 100:
		return ">99.9%"
	}
	return fmt.Sprintf("%.0f%%", p)
}

func delayText(d Duration, delayed int64) string {
	if delayed == 0 {
		return "-"
	}
	return roundDuration(d.D()).String()
}

// roundDuration keeps three significant figures, enough for a table.
func roundDuration(d time.Duration) time.Duration {
	for _, unit := range []time.Duration{time.Second, time.Millisecond, time.Microsecond} {
		if d >= 100*unit {
			return d.Round(unit)
		}
		if d >= unit {
			return d.Round(unit / 10)
		}
	}
	return d
}

func stateText(a AlgorithmResult) string {
	if alg, err := sluice.ParseAlgorithm(a.Algorithm); err != nil || !usesLog(alg) {
		return formatBytes(float64(a.StateBytesMax))
	}
	return fmt.Sprintf("%s max, %s mean", formatBytes(float64(a.StateBytesMax)), formatBytes(a.StateBytesMean))
}

// formatBytes writes a size in B, KiB, MiB or GiB.
func formatBytes(b float64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	i := 0
	for b >= 1024 && i < len(units)-1 {
		b /= 1024
		i++
	}
	if i == 0 {
		return fmt.Sprintf("%.0f B", b)
	}
	if b < 10 {
		return fmt.Sprintf("%.1f %s", b, units[i])
	}
	return fmt.Sprintf("%.0f %s", b, units[i])
}
