package degrade_test

import (
	"testing"

	"github.com/sluice-dev/sluice/degrade"
)

// The channel Reconfigured returns is closed by the next SetConfig, and by
// nothing else (a reading, a pin, a reset); the one asked for after it is
// open until the SetConfig after that. The zero Controller's too.
func TestReconfiguredIsClosedByTheNextSetConfig(t *testing.T) {
	for name, ctl := range map[string]*degrade.Controller{
		"NewController":       degrade.NewController(rules(), nil, nil),
		"the zero Controller": new(degrade.Controller),
	} {
		closed := func(ch <-chan struct{}) bool {
			select {
			case <-ch:
				return true
			default:
				return false
			}
		}
		ch := ctl.Reconfigured()
		ctl.Update(degrade.Signals{InFlight: 1000})
		ctl.Pin(degrade.High)
		ctl.Unpin()
		ctl.Reset()
		if closed(ch) {
			t.Fatalf("%s: closed before any SetConfig", name)
		}
		if again := ctl.Reconfigured(); again != ch {
			t.Errorf("%s: a second call before SetConfig returned another channel", name)
		}
		ctl.SetConfig(rules())
		if !closed(ch) {
			t.Fatalf("%s: open after SetConfig", name)
		}
		next := ctl.Reconfigured()
		if closed(next) {
			t.Fatalf("%s: the channel asked for after SetConfig is closed already", name)
		}
		ctl.SetConfig(rules())
		if !closed(next) {
			t.Errorf("%s: the next channel is open after the next SetConfig", name)
		}
	}
}
