-- charge.lua: charges a key with units admitted without Redis (by a
-- fallback while Redis could not be asked): it takes up to the check's
-- cost, as many units as the state has left now, and never refuses. It
-- decides through the algorithm's own decide (a peek, then the take), so
-- that the units are counted exactly as if they had been admitted now.
--
-- A charge with an id is taken once: the id's key records it for the id's
-- life, and a charge that finds it takes nothing and writes the key's life
-- again (a write, so that a WAIT after this run covers the one that took
-- it).
--
-- KEYS[1]  the state key of the check
-- KEYS[2]  with an id: the id's key (same slot as KEYS[1])
-- ARGV[1]  the time (as in apply.lua), ARGV[2] the least TTL in ms
-- ARGV[3…] CHECK_ARGS check arguments (the cost: the units to charge)
-- ARGV[3 + CHECK_ARGS]  with an id: the id's life in ms
--
-- Reply: the time used, then the units taken, or -1 when the id's charge
-- was taken before.

local now = script_now()
local minttl = math.max(tonumber(ARGV[2]), 1)
local idkey = KEYS[2]
if idkey then
  local life = ARGV[3 + CHECK_ARGS]
  if redis.call('SET', idkey, '1', 'NX', 'PX', life) == false then
    redis.call('PEXPIRE', idkey, life)
    return {now, -1}
  end
end
local c = parse_check(1, 2)
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
return {now, take}
