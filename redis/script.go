package redis

import (
	"bytes"
	"embed"
	"fmt"
	"io/fs"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/rueidis"

	"github.com/sluice-dev/sluice"
)

//go:embed lua/*.lua
var luaFiles embed.FS

// The algorithm families, one Lua file each; a script holds the families
// its call uses. (Lua defines every function of a script on each run: a
// call of GCRA limits alone runs in about half the time when the script
// does not also carry the sliding log.)
const (
	familyFixedWindow = 1 << iota
	familySlidingLog  // and concurrency leases
	familySlidingCounter
	familyBucket // token bucket, leaky bucket, GCRA
	allFamilies  = 1<<iota - 1
)

var familyFiles = [...]string{"fixed_window.lua", "sliding_log.lua", "sliding_counter.lua", "bucket.lua"}

// family returns a's family bit.
func family(a sluice.Algorithm) int {
	switch a {
	case sluice.AlgorithmFixedWindow:
		return familyFixedWindow
	case sluice.AlgorithmSlidingLog, sluice.AlgorithmConcurrency:
		return familySlidingLog
	case sluice.AlgorithmSlidingCounter:
		return familySlidingCounter
	}
	return familyBucket
}

// scripts are the store's Lua scripts: apply.lua for each set of
// families, refund.lua, release.lua, charge.lua and refund_charge.lua with
// all of them.
type scripts struct {
	apply                   [allFamilies + 1]*rueidis.Lua
	applySrc, applySha      [allFamilies + 1]string // for WithReplicas
	refund, release, charge *rueidis.Lua
	chargeSrc, chargeSha    string // for WithReplicas
	refundCharge            *rueidis.Lua
}

// loadScripts builds the scripts from the embedded sources, once. An error
// means a Lua file is missing from the build: every call then fails with it
// (a broken build, never a condition of a running system).
var loadScripts = sync.OnceValues(func() (*scripts, error) {
	var sc scripts
	for families := 1; families <= allFamilies; families++ {
		src, err := luaSource(luaFiles, families, "apply.lua")
		if err != nil {
			return nil, err
		}
		sc.apply[families] = rueidis.NewLuaScript(src)
		sc.applySrc[families], sc.applySha[families] = src, sha1Hex(src)
	}
	refund, err := luaSource(luaFiles, allFamilies, "refund.lua")
	if err != nil {
		return nil, err
	}
	release, err := luaSource(luaFiles, allFamilies, "release.lua")
	if err != nil {
		return nil, err
	}
	charge, err := luaSource(luaFiles, allFamilies, "charge.lua")
	if err != nil {
		return nil, err
	}
	refundCharge, err := luaSource(luaFiles, allFamilies, "refund_charge.lua")
	if err != nil {
		return nil, err
	}
	sc.refundCharge = rueidis.NewLuaScript(refundCharge)
	sc.refund, sc.release = rueidis.NewLuaScript(refund), rueidis.NewLuaScript(release)
	sc.charge = rueidis.NewLuaScript(charge)
	sc.chargeSrc, sc.chargeSha = charge, sha1Hex(charge)
	return &sc, nil
})

// luaSource concatenates the shared files, the files of families and main,
// read from fsys's lua/ directory, into one script. A shebang line that
// begins main ("#!lua", see apply.lua) begins the script, which Redis reads
// its flags from.
func luaSource(fsys fs.FS, families int, main string) (string, error) {
	names := []string{"arith.lua", "state.lua"}
	for i, f := range familyFiles {
		if families&(1<<i) != 0 {
			names = append(names, f)
		}
	}
	srcs := make([][]byte, 0, len(names)+1)
	for _, name := range append(names, main) {
		src, err := fs.ReadFile(fsys, "lua/"+name)
		if err != nil {
			return "", fmt.Errorf("redis: embedded script missing from this build: %w", err)
		}
		srcs = append(srcs, src)
	}
	var b strings.Builder
	if last := srcs[len(srcs)-1]; bytes.HasPrefix(last, []byte("#!")) {
		line, rest, _ := bytes.Cut(last, []byte("\n"))
		b.Write(line)
		b.WriteByte('\n')
		srcs[len(srcs)-1] = rest
	}
	for _, src := range srcs {
		b.Write(src)
		b.WriteByte('\n')
	}
	return b.String(), nil
}

// Script modes (apply.lua's ARGV[3]).
const (
	modeApply   = "a" // decide and write
	modeReserve = "r" // decide and write, undoably
	modeDry     = "d" // decide as refused elsewhere: write no state
)

// checkArgs is the number of script arguments per check (CHECK_ARGS).
const checkArgs = limitArgs + 1

// statusWords is the number of reply words per check status
// (STATUS_WORDS).
const statusWords = 3

// limitArgs is the number of script arguments per limit in apply.lua's
// table of limits (LIMIT_ARGS).
const limitArgs = 9

// validateCheck reports whether the scripts can decide c: a valid limit,
// whose every amount, time and wait sluice keeps exact in Lua's numbers
// (see sluice.MaxQuantity).
func validateCheck(c *sluice.Check) error {
	if err := c.Limit.Err(); err != nil {
		return fmt.Errorf("redis store: %w: %w", sluice.ErrInvalidCheck, err)
	}
	return nil
}

// decidable reports whether apply.lua can decide c as sluice.Limit.Decide
// would: a check validateCheck accepts, of a cost of at least 0.
func decidable(c *sluice.Check) error {
	if c.Cost < 0 {
		return fmt.Errorf("redis store: %w: negative cost %d", sluice.ErrInvalidCheck, c.Cost)
	}
	return validateCheck(c)
}

// appendLimitArgs appends l's script arguments: algorithm, quantity, window
// (µs), burst, rq, rw (the rate q/w in lowest terms, as ticks), max wait
// (µs), shadow and calendar ("0", or "period:offset µs").
func appendLimitArgs(args []string, l *sluice.Limit) []string {
	q, w, b := l.Quantity(), int64(l.Window()/time.Microsecond), l.Burst()
	mw := int64(l.MaxWait() / time.Microsecond)
	g := gcd(q, w)
	shadow, calendar := "0", "0"
	if l.Shadow() {
		shadow = "1"
	}
	if p := l.Period(); p != 0 {
		calendar = strconv.Itoa(int(p)) + ":" + strconv.FormatInt(int64(l.Offset()/time.Microsecond), 10)
	}
	return append(args,
		strconv.Itoa(int(l.Algorithm())),
		strconv.FormatInt(q, 10),
		strconv.FormatInt(w, 10),
		strconv.FormatInt(b, 10),
		strconv.FormatInt(q/g, 10),
		strconv.FormatInt(w/g, 10),
		strconv.FormatInt(mw, 10),
		shadow,
		calendar,
	)
}

// appendCheckArgs appends c's script arguments as refund.lua and
// release.lua read them (CHECK_ARGS): its limit's arguments, then its cost.
func appendCheckArgs(args []string, c *sluice.Check) ([]string, error) {
	if err := validateCheck(c); err != nil {
		return args, err
	}
	return append(appendLimitArgs(args, &c.Limit), strconv.FormatInt(c.Cost, 10)), nil
}

func gcd(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// readStatus decodes the status words of one check of algorithm alg
// starting at msgs[i] (refund.lua's reply).
func readStatus(msgs []rueidis.RedisMessage, i int, alg sluice.Algorithm) (sluice.Status, error) {
	var w [statusWords]int64
	for j := range w {
		n, err := msgs[i+j].AsInt64()
		if err != nil {
			return sluice.Status{}, fmt.Errorf("reply word %d: %w", i+j, err)
		}
		w[j] = n
	}
	return statusOf(w, alg), nil
}

// statusOf decodes the status words w of a check of algorithm alg (see
// push in lua/state.lua): remaining·2 + allowed, reset-after (µs), then,
// when allowed, the delay (µs), a concurrency lease's stamp or a window's
// or log's receipt (Status.Charged), the retry-after (µs; -1: never) when
// refused.
func statusOf(w [statusWords]int64, alg sluice.Algorithm) sluice.Status {
	st := sluice.Status{
		Allowed:    w[0]&1 == 1,
		Remaining:  w[0] >> 1,
		ResetAfter: micros(w[1]),
	}
	switch {
	case !st.Allowed && w[2] < 0:
		st.RetryAfter = sluice.Never
	case !st.Allowed:
		st.RetryAfter = micros(w[2])
	case alg == sluice.AlgorithmConcurrency:
		st.Lease = w[2]
	case alg == sluice.AlgorithmFixedWindow, alg == sluice.AlgorithmSlidingCounter, alg == sluice.AlgorithmSlidingLog:
		st.Charged = w[2]
	default:
		st.Delay = micros(w[2])
	}
	return st
}

// micros converts µs to a Duration as sluice does: zero for zero or less,
// saturating at sluice.Never.
func micros(us int64) time.Duration {
	if us <= 0 {
		return 0
	}
	if us > math.MaxInt64/int64(time.Microsecond) {
		return sluice.Never
	}
	return time.Duration(us) * time.Microsecond
}
