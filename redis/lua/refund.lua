-- refund.lua: takes back a reservation that apply.lua made in mode "r"
-- when another slot of the same call refused it, then reports each check
-- as a peek. A key still tagged with the reservation's token has not been
-- written since: its state before the reservation is restored exactly
-- (RESTORE of the DUMP, with its expiry time; or DEL if it did not exist).
-- A key written since gets the algorithm's undo: the reservation's units
-- are taken out of whatever the key holds now — a window's count or log
-- entry, or what a bucket misses because of the reservation, which the
-- bucket's tag records while the reservation is pending (see bucket.lua),
-- whatever was written and refunded in between, and in whatever order.
-- A key reset (reset.lua) at or after the reservation, or whose state was
-- created after it (born, see state.lua: the state that counted the
-- reservation was evicted, deleted or expired since), is left alone: the
-- state there now never counted the reservation, and taking its units out
-- would hand them out again beyond the limit. The call was refused: each
-- state keeps its key at least until its limit has it back at full quota
-- (see outlive), whatever expiry the DUMP restored.
-- Every write retags the key (apply with its algorithm alone, or for a
-- bucket its pending reservations; a reservation with its own token; an
-- undo likewise), so a DUMP is restored only when nothing at all happened
-- to the key since; a DUMP that holds another pending reservation's units
-- is fine, since that one's undo then applies to the restored state.
--
-- This script has no shebang line: unlike apply.lua's runs, its runs are
-- not refused before they start while Redis refuses writes. Out of memory,
-- Redis refuses a run at its first write, and only if that write may take
-- memory (HSET, SET, RESTORE; not HDEL or DEL); a replica refuses it at its
-- first write. A give-back whose first write deletes (a key the reservation
-- created, or a sliding log's newest entry taken back whole) thus still
-- runs on a full Redis, and frees memory there; one that first rewrites a
-- state fails, having written nothing.
--
-- KEYS[i]    the state key of a check that consumed, i ≤ n = #KEYS / 2
-- KEYS[n+i]  its reset key, in the same slot
-- ARGV[1]    the time (as in apply.lua), ARGV[2] the reservation's token,
--            ARGV[3] the time of the reservation's run (apply.lua's reply)
-- ARGV[4…]   per key: CHECK_ARGS check arguments, then the undo mark, the
--            DUMP and the PEXPIRETIME that apply.lua returned
--
-- Reply: the time used, then per key the STATUS_WORDS numbers of its peek.

local now = script_now()
local token = ARGV[2]
local at = tonumber(ARGV[3])
local out = {now}
local per = CHECK_ARGS + 3 -- check, mark, dump, expiry
local n = #KEYS / 2
for i = 1, n do
  local off = 3 + (i - 1) * per
  local c = parse_check(i, off)
  local mark, dump, expires = ARGV[off + CHECK_ARGS + 1], ARGV[off + CHECK_ARGS + 2], tonumber(ARGV[off + CHECK_ARGS + 3])
  local st = load_state(c)
  local g = st.g
  local reset = redis.call('GET', KEYS[n + i])
  if g == c.g .. ':' .. token or ALG[c.alg] == bucket and reserved_last(c, st, token) then
    if dump == '' then
      redis.call('DEL', c.key)
    else
      redis.call('RESTORE', c.key, fmt(math.max(expires, 0)), dump, 'REPLACE', 'ABSTTL')
    end
    forget(c.key)
  elseif alg_of(g) == c.alg and not (reset and at <= tonumber(reset)) and at >= born(st) then
    -- Retagging the key tells any other reservation whose DUMP holds these
    -- units that it may no longer restore it.
    ALG[c.alg].undo(c, st, mark, c.g, token)
  end
  local after = load_state(c)
  local v = ALG[c.alg].decide(c, after, now, 0, {}, {})
  outlive(c.key, after, v, now, 1) -- the call was refused, or failed
  push(out, v)
end
flush()
return out
