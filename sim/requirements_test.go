package sim

import (
	"context"
	"strings"
	"testing"
)

// The configuration's Redis addresses are host:port each; an empty one or
// one with spaces would be written as it is, and dialled as it is.
func TestRequirementsRefuseAddressesThatAreNotHostPort(t *testing.T) {
	for _, tc := range []struct {
		addrs []string
		ok    bool
	}{
		{[]string{"redis.internal:6379", "[::1]:6380"}, true},
		{[]string{"a:1", ""}, false},
		{[]string{" b:2"}, false},
		{[]string{"redis.internal"}, false},
		{[]string{":6379"}, false},
	} {
		_, err := Requirements{Rate: "100/1m", Store: "redis", RedisMode: "cluster", RedisAddresses: tc.addrs, MaxArrivals: testBudget}.withDefaults()
		if (err == nil) != tc.ok {
			t.Errorf("%q: err %v, want ok %v", tc.addrs, err, tc.ok)
		}
	}
	req, err := ReadAPIRequirements(strings.NewReader("store: redis\nredis_mode: cluster\nredis_addresses: [\"a:1\", \"\"]\nplans: [{name: free, limits: [{rate: 5/1s}]}]\n"), "api.yaml")
	if err == nil {
		req.MaxArrivals = testArrivals
		_, err = DesignAPI(context.Background(), req)
	}
	if err == nil || !strings.Contains(err.Error(), "redis_addresses[1]") {
		t.Errorf("a whole API with an empty address: %v", err)
	}
}

// Requirements hold at most 1 MiB: a longer file is refused whole, not
// read up to 1 MiB with the fields after it silently left out.
func TestRequirementsLongerThanAMebibyteAreRefused(t *testing.T) {
	long := "rate: 100/1m\n#" + strings.Repeat("x", 1<<20) + "\nburst: 20\n"
	r, err := ReadRequirements(strings.NewReader(long), "big.yaml")
	if err == nil || !strings.Contains(err.Error(), "big.yaml") || !strings.Contains(err.Error(), "1 MiB") {
		t.Errorf("read %+v, err %v: want the file refused as longer than 1 MiB", r, err)
	}
	if _, err := ReadAPIRequirements(strings.NewReader("plans: [{name: free, limits: [{rate: 5/1s}]}]\n#"+strings.Repeat("x", 1<<20)), "api.yaml"); err == nil {
		t.Error("a whole API's requirements longer than 1 MiB were read")
	}
	short := "rate: 100/1m\n#" + strings.Repeat("x", 1<<19) + "\nburst: 20\n"
	if r, err := ReadRequirements(strings.NewReader(short), "ok.yaml"); err != nil || r.Burst != 20 {
		t.Errorf("half a MiB: %+v, %v", r, err)
	}
}

// A rate's quantity is at most sluice.MaxQuantity, whatever its window:
// above it no limit can hold it, and a design of one would write a
// configuration for some other limit.
func TestRequirementsRefuseAQuantityAboveMaxQuantity(t *testing.T) {
	for _, rate := range []string{"1099511627777/1s", "1099511627777/month"} {
		err := Requirements{Rate: rate, MaxArrivals: testBudget}.Validate()
		if err == nil || !strings.Contains(err.Error(), "at most 1099511627776") {
			t.Errorf("%s: %v, want the quantity refused", rate, err)
		}
	}
}

// A burst is at most the quantity, as a whole API's limits say: a window
// never admits more than its quantity, so a burst above it asks for what
// no limit of the rate gives, and was silently designed as no burst cap.
func TestRequirementsRefuseABurstAboveTheQuantity(t *testing.T) {
	for _, text := range []string{"rate: 100/1m\nburst: 200\n", "rate: 100/month\nburst: 101\n"} {
		req, err := ReadRequirements(strings.NewReader(text), "r.yaml")
		if err == nil {
			err = req.Validate()
		}
		if err == nil || !strings.HasPrefix(err.Error(), "r.yaml:2:8: burst: ") {
			t.Errorf("%q: %v, want the burst refused at its line", text, err)
		}
	}
	if err := (Requirements{Rate: "100/1m", Burst: 100}).Validate(); err != nil {
		t.Errorf("a burst of the whole quantity: %v", err)
	}
}
