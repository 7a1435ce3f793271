package sim

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// A limit the bucket algorithms cannot keep exact (869 per year: a unit is
// a year/869 µs, and 869 of them pass 2^53 ticks) is simulated on the
// algorithms that can hold it when all are asked for, and the others are
// named with the reason; asked for by name, it is an error.
func TestSimulateOmitsWhatCannotHoldTheLimit(t *testing.T) {
	req := Request{Limit: "869/year", Pattern: &Pattern{Name: "steady"}, MaxArrivals: 20_000}
	resp, err := Simulate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	var ran, omitted []string
	for _, a := range resp.Result.Algorithms {
		ran = append(ran, a.Algorithm)
	}
	for _, o := range resp.Result.Omitted {
		omitted = append(omitted, o.Algorithm)
		if !strings.Contains(o.Reason, "cannot be kept exact") {
			t.Errorf("%s omitted because %q", o.Algorithm, o.Reason)
		}
	}
	if got, want := strings.Join(ran, ","), "fixed-window,sliding-window-log,sliding-window-counter"; got != want {
		t.Errorf("simulated %s, want %s", got, want)
	}
	if got, want := strings.Join(omitted, ","), "token-bucket,leaky-bucket,gcra"; got != want {
		t.Errorf("omitted %s, want %s", got, want)
	}
	var table bytes.Buffer
	if err := WriteTable(&table, resp.Result); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(table.String(), "\ngcra not simulated: ") {
		t.Errorf("the table does not say gcra was not simulated:\n%s", table.String())
	}

	req.Algorithms = []string{"fixed-window", "gcra"}
	if _, err := Simulate(context.Background(), req); err == nil || !strings.Contains(err.Error(), "cannot be kept exact") {
		t.Errorf("gcra asked for by name: %v, want the limit refused", err)
	}

	req.Limit, req.Algorithms = "1000/year", nil
	if resp, err = Simulate(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if len(resp.Result.Algorithms) != 6 || resp.Result.Omitted != nil {
		t.Errorf("1000/year: %d algorithms simulated, %v omitted; want all six", len(resp.Result.Algorithms), resp.Result.Omitted)
	}
}
