package redis_test

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/redistest"
	"github.com/sluice-dev/sluice/redis"
)

// crashLimit is the limit of the kill -9 test: a fixed window of 4 s, so
// that a lease's units come back with the window.
var crashLimit = sluice.FixedWindow(1000, 4*time.Second)

const crashMaxUnits = 50

// TestLeaseHolderProcess is the process TestLeasedInstanceKilledMidLease
// kills: it spends 40 units on a key, leasing, prints what it spent and
// holds, and waits to be killed. It does nothing in a normal test run.
func TestLeaseHolderProcess(t *testing.T) {
	addr, key := os.Getenv("SLUICE_LEASE_HOLDER_REDIS"), os.Getenv("SLUICE_LEASE_HOLDER_KEY")
	if addr == "" {
		return // run only as TestLeasedInstanceKilledMidLease's child
	}
	st, err := redis.Dial(redis.Options{Addrs: []string{addr}, Timeout: testTimeout})
	if err != nil {
		t.Fatal(err)
	}
	l := redis.NewLeased(st, st, 2, redis.LeaseOptions{Mode: redis.LeaseAuto, MaxUnits: crashMaxUnits, Idle: time.Hour})
	spent := spendN(t, l, sluice.Check{Key: key, Limit: crashLimit, Cost: 1}, 40)
	fmt.Printf("spent=%d held=%d\n", spent, settled(t, l).Held)
	select {} // until killed
}

// An instance killed with -9 while it holds a lease loses exactly the
// units it held, at most lease_max_units, until the window ends: the
// shared state has counted them and nobody spends them; the next window
// has the whole quota.
func TestLeasedInstanceKilledMidLease(t *testing.T) {
	t.Parallel()
	srv := redistest.Standalone(t)
	// Start early in a window, so that the child's work and the checks
	// below fall in the same one.
	w := crashLimit.Window()
	if left := w - time.Duration(sluice.MicrosSinceEpoch(time.Now())%w.Microseconds())*time.Microsecond; left < 3*time.Second {
		time.Sleep(left + 10*time.Millisecond)
	}
	key := fmt.Sprintf("crash-%d", time.Now().UnixNano())
	c := exec.Command(os.Args[0], "-test.run=^TestLeaseHolderProcess$", "-test.count=1")
	c.Env = append(os.Environ(), "SLUICE_LEASE_HOLDER_REDIS="+srv.Addr, "SLUICE_LEASE_HOLDER_KEY="+key)
	c.Stderr = os.Stderr
	out, err := c.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	defer c.Process.Kill()
	sc := bufio.NewScanner(out)
	var spent, held int64 = -1, -1
	for sc.Scan() {
		if line := sc.Text(); strings.HasPrefix(line, "spent=") {
			for _, f := range strings.Fields(line) {
				k, v, _ := strings.Cut(f, "=")
				n, _ := strconv.ParseInt(v, 10, 64)
				if k == "spent" {
					spent = n
				} else {
					held = n
				}
			}
			break
		}
	}
	if spent != 40 || held < 1 || held > crashMaxUnits {
		t.Fatalf("the holder spent %d and holds %d units, want 40 and 1–%d", spent, held, crashMaxUnits)
	}
	if err := c.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	c.Wait()
	check := sluice.Check{Key: key, Limit: crashLimit}
	if got, want := peek(t, srv, check), crashLimit.Quantity()-spent-held; got != want {
		t.Fatalf("after kill -9 Redis has %d left, want %d: the %d spent and the %d held counted, nothing more", got, want, spent, held)
	}
	// Another instance may admit exactly what is left, and no more.
	st := redis.New(srv.Client(t), redis.WithTimeout(testTimeout))
	other := redis.NewLeased(st, st, 2, redis.LeaseOptions{Mode: redis.LeaseAuto})
	defer other.Close()
	left := crashLimit.Quantity() - spent - held
	if n := spendN(t, other, sluice.Check{Key: key, Limit: crashLimit, Cost: 1}, int(left)+100); int64(n) != left {
		t.Fatalf("the other instance admitted %d, want the %d left", n, left)
	}
	deadline := time.Now().Add(w + time.Second)
	for peek(t, srv, check) != crashLimit.Quantity() {
		if time.Now().After(deadline) {
			t.Fatal("the held units did not come back with the next window")
		}
		time.Sleep(50 * time.Millisecond)
	}
}
