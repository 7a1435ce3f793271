-- reset.lua: forgets states (Store.Reset). Each state key is deleted (a
-- DEL even of a key gone), and its reset key records when, so that the
-- receipts and leases the state held, which the fresh state never
-- counted, are neither refunded
-- (refund_charge.lua) nor given back (lease.lua, release.lua) into the
-- one the key builds since: nothing taken at or before a reset is. The
-- reset's time is no earlier than any time the deleted state counted, as
-- the memory store notes it (memory's noteReset), as far as the state
-- records it: the latest of the script's time, the time of a reset the key
-- still records, and the latest time the deleted state records (see
-- held_until: a log's newest entry, stamped a µs after the one before and
-- maybe ahead of the clock; a string state's creation, a fixed window's
-- last charge or a sliding counter's window start, ahead of a clock that
-- stepped back since). A
-- concurrency limit's lease book is replaced by a book holding one entry
-- of no units at that time (memory's seedLeases): its next lease is
-- stamped at least a µs after it, so that no lease taken since has the
-- stamp of one from before. The reset key lives as long as the state key
-- would have, and at least as long as such a refund or give-back could
-- still change a state (ARGV), unless it already lives longer; the book
-- with no lease lives as long as the reset key.
--
-- This script has no shebang line: Redis full under noeviction refuses a
-- run at its first write only if that write may take memory (see
-- release.lua), and lets the writes after it through. Its first write is
-- the first key's DEL, sent whether or not the key holds a state, so that
-- a reset goes through on a full Redis, and frees memory there.
--
-- KEYS[i]      the state key of limit i, i ≤ n = #KEYS / 2
-- KEYS[n+i]    its reset key, in the same slot
-- ARGV[1]      the time (as in apply.lua)
-- ARGV[1+i]    the least life of KEYS[n+i] in ms; 0: nothing taken before
--              a reset reaches the limit's fresh state, and no reset key is
--              written
-- ARGV[1+n+i]  the tag of limit i's lease book (a concurrency limit), or ""
--
-- Reply: the number of state keys that held a state, and the time of the
-- reset (µs since sluice.Epoch, the latest its reset keys record).

-- held_until returns whether the key holds a state (a lease book with no
-- lease, see above, does not) and the latest time the state records having
-- counted, which the reset must not precede (nil: none). A log's newest
-- entry is exact. A state in a string records no time of its latest
-- decision but a fixed window's, whose t is its last charge's receipt
-- (an earlier version's: its window's start): its born (when it was
-- created) and that t, or a sliding counter's window start (a bucket's t
-- is not such a time, GCRA's lies ahead of it), are the latest times it
-- records.
-- (The memory store's counterparts, no algorithm's twin: its shard's
-- newestLease for a lease book, its clock's notBefore, the store's latest
-- time, which a state does not keep.)
local function held_until(key)
  local f = redis.pcall('HMGET', key, 'h', 'n', 'a')
  if f.err then -- a string state
    local st = parse_text(redis.call('GET', key))
    local latest = st.born
    if latest and (st.alg == 1 or st.alg == 3) then
      latest = math.max(latest, clamp_time(st.t))
    end
    return true, latest
  end
  local h, n = tonumber(f[1]) or 0, tonumber(f[2]) or 0
  if n <= h then
    return false, nil
  end
  return tonumber(f[3]) ~= 0, entry(key, n - 1)
end

local now = script_now()
local n = #KEYS / 2
local gone, last = 0, now
for i = 1, n do
  local ttl = redis.call('PTTL', KEYS[i])
  local at = now
  if ttl ~= -2 then
    local held, latest = held_until(KEYS[i])
    if held then
      gone = gone + 1
    end
    if latest then
      at = math.max(at, latest)
    end
  end
  redis.call('DEL', KEYS[i])
  local least = tonumber(ARGV[1 + i])
  if least > 0 then
    local before = redis.call('GET', KEYS[n + i])
    if before then
      at = math.max(at, tonumber(before))
    end
    local life = math.max(ttl, least, redis.call('PTTL', KEYS[n + i]))
    redis.call('SET', KEYS[n + i], fmt(at), 'PX', fmt(life))
    local tag = ARGV[1 + n + i]
    if tag ~= '' then
      redis.call('HSET', KEYS[i], 'g', tag, '0', entry_text(at, 0), 'h', '0', 'n', '1', 'a', '0')
      redis.call('PEXPIRE', KEYS[i], fmt(life))
    end
  end
  last = math.max(last, at)
end
return {gone, last}
