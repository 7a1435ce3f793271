-- charge.lua: charges each key with units admitted without Redis (by a
-- fallback while Redis could not be asked): it takes up to the check's cost,
-- as many units as the state has left now, and never refuses. It decides
-- through each algorithm's own decide (a peek, then the take), so that the
-- units are counted exactly as if they had been admitted now.
--
-- KEYS[i]  the state key of check i
-- ARGV[1]  the time (as in apply.lua), ARGV[2] the least TTL in ms
-- ARGV[3…] per key: CHECK_ARGS check arguments (the cost: the units to charge)
--
-- Reply: the time used, then per key the units taken.

local now = script_now()
local minttl = math.max(tonumber(ARGV[2]), 1)
local out = {now}
for i = 1, #KEYS do
  local c = parse_check(i, 2 + (i - 1) * CHECK_ARGS)
  local want = c.cost
  local st = load_state(c)
  local peek = c.fam.decide(bind(c, c.key, 0), st, now, 0, {}, {})
  local take = math.min(want, peek.rem)
  if take > 0 then
    local v, nxt = c.fam.decide(bind(c, c.key, take), st, now, take, {}, {})
    if v.ok and nxt then
      commit(c, st, nxt, v, c.g, minttl)
    else
      take = 0
    end
  else
    take = 0
  end
  out[#out + 1] = take
end
return out
