-- lease.lua: gives back the unspent units of quota leases (see Leased).
-- A lease is units an apply.lua run admitted at once for an instance to
-- spend without asking; what it did not spend comes back here through the
-- algorithm's own undo, exactly as refund.lua takes back a reservation: a
-- window gives the units back only while it still counts the window the
-- lease was taken in (from its previous count once the sliding counter has
-- moved on), a bucket only what has not refilled since the take (the
-- take's mark says it missed nothing before: see leasePlan.mark). A key
-- written since under another algorithm, or gone, is left alone, and so is
-- a key reset (reset.lua) at or after the take, or whose state was created
-- after it (born, see state.lua: the state that counted the lease was
-- evicted, deleted or expired since): the state there now never counted
-- the lease. The key keeps its TTL.
--
-- This script has no shebang line: unlike apply.lua's runs, its runs are
-- not refused before they start while Redis refuses writes. Out of memory,
-- Redis refuses a run at its first write, and only if that write may take
-- memory (HSET, SET, RESTORE; not HDEL or DEL); a replica refuses it at its
-- first write. A give-back whose first write deletes (a sliding log's
-- newest entry, given back whole) thus still runs on a full Redis, and
-- frees memory there; one that first rewrites a state fails, having written
-- nothing.
--
-- KEYS[i]    the state key of a lease, i ≤ n = #KEYS / 2
-- KEYS[n+i]  its reset key, in the same slot
-- ARGV       per key: CHECK_ARGS check arguments (the cost: the units to
--            give back), the undo mark of the take, then the time of the
--            take (µs since sluice.Epoch, as apply.lua's time)
--
-- Reply: the units not given back because the state there now never
-- counted their take (a reset, or a state created since).

local n = #KEYS / 2
local forgotten = 0
for i = 1, n do
  local off = (i - 1) * (CHECK_ARGS + 2)
  local c = parse_check(i, off)
  local taken = tonumber(ARGV[off + CHECK_ARGS + 2])
  local reset = redis.call('GET', KEYS[n + i])
  local st = load_state(c)
  if reset and taken <= tonumber(reset) or not st.fresh and taken < born(st) then
    forgotten = forgotten + c.cost
  elseif not st.fresh and c.cost > 0 then
    ALG[c.alg].undo(c, st, ARGV[off + CHECK_ARGS + 1], c.g)
  end
end
return forgotten
