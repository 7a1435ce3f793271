-- release.lua: gives back concurrency leases (sluice.Releaser). Each key's
-- lease of cost units stamped at its lease time loses one matching entry,
-- if one is left: an expired lease may already be gone. A lease stamped at
-- or before the key's last reset (reset.lua) is left alone: the book since
-- never held it, and its leases are all stamped after the reset. The key
-- keeps its TTL, which still covers what is left.
--
-- This script has no shebang line: unlike apply.lua's runs, its runs are
-- not refused before they start while Redis refuses writes. Out of memory,
-- Redis refuses a run at its first write, and only if that write may take
-- memory (HSET, SET, RESTORE; not HDEL or DEL); a replica refuses it at its
-- first write. A give-back whose first write deletes (the key's newest
-- lease) thus still runs on a full Redis, and frees memory there; one that
-- first rewrites a state fails, having written nothing.
--
-- KEYS[i]    the state key of a check with a lease to give back, i ≤ n =
--            #KEYS / 2
-- KEYS[n+i]  its reset key, in the same slot
-- ARGV[i]    CHECK_ARGS check arguments, then the lease stamp
--
-- Reply: the number of leases found and given back.

local n = #KEYS / 2
local released = 0
for i = 1, n do
  local off = (i - 1) * (CHECK_ARGS + 1)
  local c = parse_check(i, off)
  local at = tonumber(ARGV[off + CHECK_ARGS + 1])
  local reset = redis.call('GET', KEYS[n + i])
  if c.alg == CONCURRENCY and not (reset and at <= tonumber(reset)) then
    local st = load_state(c)
    if not st.fresh and ALG[c.alg].release(c, st, at, tostring(c.alg)) then
      released = released + 1
    end
  end
end
return released
