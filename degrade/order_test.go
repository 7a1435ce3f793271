package degrade_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/degrade"
)

// Transitions reach onChange one at a time, in the order they happened,
// so that a gauge set from them ends at the level in force: here a
// reading's step up to Elevated is still being reported when an operator
// pins Critical.
func TestOnChangeIsCalledInTheOrderOfTheTransitions(t *testing.T) {
	var (
		mu      sync.Mutex
		got     []string
		entered = make(chan struct{})
		release = make(chan struct{})
	)
	onChange := func(from, to degrade.Level, why string) {
		if to == degrade.Elevated {
			close(entered)
			<-release
		}
		mu.Lock()
		got = append(got, fmt.Sprintf("%v→%v", from, to))
		mu.Unlock()
	}
	cfg := degrade.Config{Rules: [3]degrade.Rule{{Enter: degrade.Thresholds{InFlight: 100}}}}
	c := degrade.NewController(cfg, nil, onChange)
	var wg sync.WaitGroup
	wg.Go(func() { c.Update(degrade.Signals{InFlight: 150}) })
	<-entered
	wg.Go(func() { c.Pin(degrade.Critical) })
	time.Sleep(50 * time.Millisecond) // the pin's report, were it not held back
	close(release)
	wg.Wait()
	want := []string{"normal→elevated", "elevated→critical"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("onChange saw %v, want %v", got, want)
	}
}

// onChange may call the controller, even to change it: the change it makes
// is reported after the one it is told of.
func TestOnChangeMayCallTheController(t *testing.T) {
	var got []string
	var c *degrade.Controller
	c = degrade.NewController(degrade.Config{}, nil, func(from, to degrade.Level, why string) {
		got = append(got, fmt.Sprintf("%v→%v at %v", from, to, c.Level()))
		if to == degrade.High {
			c.Pin(degrade.Critical)
		}
	})
	done := make(chan struct{})
	go func() { c.Pin(degrade.High); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Pin from onChange deadlocked")
	}
	want := []string{"normal→high at high", "high→critical at critical"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("onChange saw %v, want %v", got, want)
	}
}
