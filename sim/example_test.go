package sim_test

import (
	"context"
	"fmt"

	"github.com/sluice-dev/sluice/sim"
)

// The boundary burst through a fixed window and the exact log: the fixed
// window admits twice the limit within one minute, the log never more.
func ExampleSimulate() {
	resp, err := sim.Simulate(context.Background(), sim.Request{
		Pattern:     &sim.Pattern{Name: sim.PatternBoundaryBurst},
		Limit:       "100/1m",
		Algorithms:  []string{"fixed-window", "sliding-window-log"},
		Chart:       "svg",
		MaxArrivals: 200_000,
	})
	if err != nil {
		panic(err)
	}
	for _, a := range resp.Result.Algorithms {
		fmt.Printf("%s: admitted %d, worst minute %d of %d\n", a.Label, a.Admitted, a.WorstWindow, resp.Result.Quantity)
	}
	fmt.Println("chart:", string(resp.Chart[:5]))
	// Output:
	// fixed-window: admitted 1000, worst minute 200 of 100
	// sliding-window-log: admitted 500, worst minute 100 of 100
	// chart: <?xml
}

// Requirements in, a recommendation and a config out.
func ExampleDesign() {
	a, err := sim.Design(context.Background(), sim.Requirements{Rate: "100/1m", Burst: 20, Precision: "strict"})
	if err != nil {
		panic(err)
	}
	r := a.Recommendation
	fmt.Printf("%s %d per %s, burst %d, %s store\n", r.Algorithm, r.Quantity, r.Window, r.Burst, r.Store)
	fmt.Print(a.Config)
	// Output:
	// gcra 81 per 1m, burst 20, memory store
	// # sluice configuration written by `sluice design` for 100/1m per key (precision strict, 1000 keys, 1 instance).
	// store:
	//   type: memory
	// identity:
	//   unknown_keys: ip   # a key not listed under keys: counts by its client's address, so a made-up key is no fresh quota
	// plans:
	//   default:
	//     limits:
	//       - name: per-minute
	//         algorithm: gcra
	//         quantity: 81
	//         window: 1m
	//         burst: 20
	// default_plan: default
}
