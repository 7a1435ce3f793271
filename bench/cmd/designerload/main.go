// Command designerload measures how the designer's load reaches the
// decision API: a sluice server in its own process answers POST /v1/check
// at a paced rate, alternately alone and while 4 × its designer's
// concurrency cap of clients ask for simulations at once, and the p99s are
// compared (target: loaded ≤ 2 × quiet). Run it from the bench directory,
// alone on the machine:
//
//	flock /tmp/sluice-bench.lock go run ./cmd/designerload
//
// Flags set the load; -serve is internal (the server process).
package main

import (
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/sluice-dev/sluice/bench"
)

func main() {
	serve := flag.String("serve", "", "internal: run the sluice server for this configuration file")
	rate := flag.Float64("rate", 2000, "decision API calls per second (paced)")
	conns := flag.Int("conns", 16, "decision API connections")
	d := flag.Duration("time", 3*time.Second, "measurement per phase")
	rounds := flag.Int("rounds", 8, "rounds of a quiet and a loaded phase, interleaved")
	runners := flag.Int("runners", 0, "designer clients in a loaded phase (0: 4 × the server's cap, one per core)")
	body := flag.String("body", bench.DesignerHeavyAccepted, "the designer request (JSON)")
	flag.Parse()
	if *serve != "" {
		if err := bench.ServeSluice(*serve); err != nil {
			fmt.Fprintf(os.Stderr, "designerload: serve: %v\n", err)
			os.Exit(1)
		}
		return
	}
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintf(os.Stderr, "designerload: %v\n", err)
		os.Exit(1)
	}
	fmt.Printf("Command: `flock /tmp/sluice-bench.lock go run ./cmd/designerload -rate %.0f -conns %d -time %v -rounds %d -runners %d` (in bench/; the Go code is bench/designerbench.go). Load average before: %s.\n\n",
		*rate, *conns, *d, *rounds, *runners, bench.LoadAvg())
	t, err := bench.RunDesigner(os.Stdout, bench.DesignerOptions{Self: self, Rate: *rate, Conns: *conns, Time: *d,
		Rounds: *rounds, Runners: *runners, Body: *body})
	if err != nil {
		fmt.Fprintf(os.Stderr, "designerload: %v\n", err)
		os.Exit(1)
	}
	fmt.Printf("Load average after: %s.\n", bench.LoadAvg())
	if !t.Pass {
		os.Exit(2)
	}
}
