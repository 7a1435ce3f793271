#!lua
-- lease_take.lua: takes quota leases for one call (see Leased), its keys
-- all in one slot. The call's checks are decided at their own cost,
-- all-or-nothing, exactly as apply.lua decides a call: if any is refused,
-- nothing is written and the checks that fit report their state as a peek
-- would. Otherwise each check also takes up to the units of lease it asks
-- for, as many as its state has left after its cost (as charge.lua takes),
-- in the same write: the state counts cost + lease units admitted now,
-- exactly as an apply.lua run of that cost would. A refusal is thus the
-- call's own, never the lease's. A state a refused call reads keeps its
-- key at least until its limit has it back at full quota (see outlive).
-- The first line, a shebang of no flags, has Redis refuse the run before it
-- starts when it could not take its writes, as apply.lua's does.
--
-- KEYS[i]  the state key of check i
-- ARGV[1]  the time (as in apply.lua), ARGV[2] the least TTL in ms
-- ARGV[3…] per key: CHECK_ARGS check arguments (its cost), then the units
--          of lease it asks for
--
-- Reply: the time used, then the words of every check, packed as in
-- apply.lua: its STATUS_WORDS, then the units of lease it took.

local now = script_now()
local minttl = math.max(tonumber(ARGV[2]), 1)
local cs, sts, vs, nxts, wants = {}, {}, {}, {}, {}
local blocked = false
for i = 1, #KEYS do
  local off = 2 + (i - 1) * (CHECK_ARGS + 1)
  local c = parse_check(i, off)
  local st = load_state(c)
  local v, nxt = c.fam.decide(c, st, now, c.cost, {}, {})
  cs[i], sts[i], vs[i], nxts[i], wants[i] = c, st, v, nxt, tonumber(ARGV[off + CHECK_ARGS + 1])
  if not v.ok and not c.shadow then
    blocked = true
  end
end
local out = {}
for i = 1, #KEYS do
  local c, st, v, nxt = cs[i], sts[i], vs[i], nxts[i]
  local took = 0
  if blocked or not v.ok then
    if v.ok and c.cost > 0 then
      v = c.fam.decide(bind(c, c.key, 0), st, now, 0, {}, {}) -- report as a peek
    end
    outlive(c.key, st, v, now, minttl)
  else
    local more = math.min(wants[i], v.rem)
    if more > 0 then
      local cost = c.cost + more
      local v2, nxt2 = c.fam.decide(bind(c, c.key, cost), st, now, cost, {}, {})
      if v2.ok and nxt2 then
        v, nxt, took = v2, nxt2, more
      else
        bind(c, c.key, cost - more)
      end
    end
    if c.cost + took > 0 and nxt then
      commit(c, st, nxt, v, c.g, minttl)
    end
  end
  push(out, v)
  out[#out + 1] = took
end
flush()
return {now, pack_words(out)}
