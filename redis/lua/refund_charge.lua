-- refund_charge.lua: takes back charges after the fact (sluice.Refunder).
-- Each key's check had its cost counted at the receipt's time
-- (Status.Charged); its algorithm's undo takes that cost out of the state
-- if the window that counted it still counts it. A key of another
-- algorithm, or never seen, is left alone, and so is a key reset
-- (reset.lua) at or after the receipt, or whose state was created after
-- it (born, see state.lua: the state that counted the charge was evicted,
-- deleted or expired since): the state there now never counted the
-- charge. An undo keeps the key's TTL.
--
-- This script has no shebang line: unlike apply.lua's runs, its runs are
-- not refused before they start while Redis refuses writes. Out of memory,
-- Redis refuses a run at its first write, and only if that write may take
-- memory (HSET, SET, RESTORE; not HDEL or DEL); a replica refuses it at its
-- first write. A give-back whose first write deletes (a sliding log's
-- newest entry, taken back whole) thus still runs on a full Redis, and
-- frees memory there; one that first rewrites a state fails, having written
-- nothing.
--
-- KEYS[i]    the state key of a check to refund, i ≤ n = #KEYS / 2
-- KEYS[n+i]  its reset key, in the same slot
-- ARGV       per key: CHECK_ARGS check arguments, then the receipt (µs
--            since Epoch)
--
-- Reply: the number of keys whose state the refund reached.

-- refund_mark returns the undo mark of a charge of check c counted at at:
-- the start of the window that counted it (fixed window, sliding counter)
-- or the log entry's time itself.
-- Go twin: internal/algo.Refund
local function refund_mark(c, at)
  if c.alg == 2 then
    return at
  elseif c.alg == 1 then
    local start = fw_window(c, clamp_time(at))
    return start
  end
  return window_start(clamp_time(at), c.w)
end

local n = #KEYS / 2
local reached = 0
for i = 1, n do
  local off = (i - 1) * (CHECK_ARGS + 1)
  local c = parse_check(i, off)
  local at = tonumber(ARGV[off + CHECK_ARGS + 1])
  local reset = redis.call('GET', KEYS[n + i])
  if not (reset and at <= tonumber(reset)) then
    local st = load_state(c)
    if (c.alg == 1 or c.alg == 2 or c.alg == 3) and not st.fresh and c.cost > 0 and at >= born(st) then
      ALG[c.alg].undo(c, st, refund_mark(c, at), c.g)
      reached = reached + 1
    end
  end
end
return reached
