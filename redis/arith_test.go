package redis

import (
	"context"
	"math/big"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/redis/rueidis"

	"github.com/sluice-dev/sluice/internal/redistest"
)

// arithHarness runs arith.lua's helpers on triples (a, b, c) from ARGV and
// returns their results as exact decimal text.
const arithHarness = `
local op, out = ARGV[1], {}
for i = 2, #ARGV, 3 do
  local a, b, c = tonumber(ARGV[i]), tonumber(ARGV[i + 1]), tonumber(ARGV[i + 2])
  local x, y = 0, 0
  if op == 'divmod' then x, y = divmod(a, b)
  elseif op == 'floordiv' then x, y = floordiv(a, b)
  elseif op == 'ceildiv' then x = ceildiv(a, b)
  elseif op == 'window_start' then x = window_start(a, b)
  elseif op == 'muldivmod' then x, y = muldivmod(a, b, c)
  end
  out[#out + 1] = fmt(x)
  out[#out + 1] = fmt(y)
end
return out
`

// The scripts' integer helpers agree with math/big on their whole
// documented domain, edges included: Lua's doubles are exact only to 2^53,
// so a helper that leans on float division or multiplication would be off
// by one somewhere here.
func TestLuaArithmeticIsExact(t *testing.T) {
	src, err := luaFiles.ReadFile("lua/arith.lua")
	if err != nil {
		t.Fatal(err)
	}
	script := rueidis.NewLuaScript(string(src) + arithHarness)
	client := redistest.Standalone(t).Client(t)
	r := rand.New(rand.NewPCG(1, 2))

	const two45, two46, two52, two53 = int64(1) << 45, int64(1) << 46, int64(1) << 52, int64(1) << 53
	edges := []int64{0, 1, 2, 3, 7, 1e6, 86_400_000_000, two45 - 1, two45, two52 - 1, two52, two52 + 1, two53 - 2, two53 - 1, two53}
	pick := func(limit int64) int64 {
		switch r.IntN(4) {
		case 0:
			for {
				if e := edges[r.IntN(len(edges))]; e <= limit {
					return e
				}
			}
		case 1:
			return r.Int64N(1000)
		case 2:
			return limit - r.Int64N(1000)
		}
		return r.Int64N(limit + 1)
	}
	type triple struct{ a, b, c int64 }
	run := func(op string, cases []triple, want func(tr triple) (x, y *big.Int)) {
		t.Helper()
		args := []string{op}
		for _, tr := range cases {
			args = append(args, strconv.FormatInt(tr.a, 10), strconv.FormatInt(tr.b, 10), strconv.FormatInt(tr.c, 10))
		}
		got, err := script.Exec(context.Background(), client, nil, args).AsStrSlice()
		if err != nil {
			t.Fatalf("%s: %v", op, err)
		}
		for i, tr := range cases {
			x, y := want(tr)
			if got[2*i] != x.String() || got[2*i+1] != y.String() {
				t.Errorf("%s(%d, %d, %d) = %s, %s; want %s, %s", op, tr.a, tr.b, tr.c, got[2*i], got[2*i+1], x, y)
			}
		}
	}
	bi := func(v int64) *big.Int { return big.NewInt(v) }
	zero := bi(0)

	var cases []triple
	for range 3000 {
		cases = append(cases, triple{a: pick(two53), b: max(1, pick(two45))})
	}
	run("divmod", cases, func(tr triple) (*big.Int, *big.Int) {
		return new(big.Int).DivMod(bi(tr.a), bi(tr.b), new(big.Int))
	})
	for i := range cases {
		if r.IntN(2) == 0 {
			cases[i].a = -cases[i].a
		}
	}
	run("floordiv", cases, func(tr triple) (*big.Int, *big.Int) {
		return new(big.Int).DivMod(bi(tr.a), bi(tr.b), new(big.Int)) // Euclidean = floor for b > 0
	})
	run("ceildiv", cases, func(tr triple) (*big.Int, *big.Int) {
		q, m := new(big.Int).DivMod(bi(tr.a), bi(tr.b), new(big.Int))
		if m.Sign() != 0 {
			q.Add(q, bi(1))
		}
		return q, zero
	})
	for i := range cases { // times: |t| ≤ 2^52, so that t - w stays exact
		cases[i].a /= 2
	}
	run("window_start", cases, func(tr triple) (*big.Int, *big.Int) {
		_, m := new(big.Int).DivMod(bi(tr.a), bi(tr.b), new(big.Int))
		return new(big.Int).Sub(bi(tr.a), m), zero
	})

	cases = cases[:0]
	for range 3000 {
		a, b, c := pick(1<<41), pick(two46), max(1, pick(two46))
		// The domain: the quotient stays below 2^53.
		if new(big.Int).Div(new(big.Int).Mul(bi(a), bi(b)), bi(c)).Cmp(bi(two53)) >= 0 {
			continue
		}
		cases = append(cases, triple{a, b, c})
	}
	run("muldivmod", cases, func(tr triple) (*big.Int, *big.Int) {
		return new(big.Int).DivMod(new(big.Int).Mul(bi(tr.a), bi(tr.b)), bi(tr.c), new(big.Int))
	})
}
