-- sliding_log.lua: sluice.AlgorithmSlidingLog and AlgorithmConcurrency,
-- whose leases are the same log with the window as lease time (internal/algo/
-- sliding_log.go).
--
-- The log lives in the state's hash: field "i" (i = h … n-1) holds entry i
-- as "at:units", oldest first, and a holds the units of all entries. A
-- decision reads the newest entry, the expired entries at the head (which
-- an admission then deletes) and, only for a refusal's retry-after, the
-- entries up to the one whose expiry frees enough. A sliding log admission
-- at the same instant as the newest entry adds its units to that entry:
-- the same decisions as a separate entry, in less memory. Leases stay
-- separate entries, since each is given back on its own.

local sliding_log = {}
ALG[2], ALG[CONCURRENCY] = sliding_log, sliding_log

local CHUNK = 64 -- entries read per HMGET, deleted per HDEL

local function parse_entry(s)
  local p = string.find(s, ':', 1, true)
  return tonumber(string.sub(s, 1, p - 1)), tonumber(string.sub(s, p + 1))
end

local function entry(key, i)
  return parse_entry(redis.call('HGET', key, fmt(i)))
end

local function entry_text(at, units)
  return fmt(at) .. ':' .. fmt(units)
end

-- log_retry returns the time at which the oldest entries from index h on
-- holding at least excess units have all left the window (logRetry).
-- Go twin: internal/algo.logRetry
local function log_retry(c, h, n, excess)
  local freed = 0
  local i = h
  while i < n do
    local fields = {}
    for j = i, math.min(i + CHUNK, n) - 1 do
      fields[#fields + 1] = fmt(j)
    end
    local got = redis.call('HMGET', c.key, unpack(fields))
    for _, s in ipairs(got) do
      local at, units = parse_entry(s)
      freed = freed + math.max(units, 0)
      if freed >= excess then
        return clamp_time(at) + c.w
      end
    end
    i = i + CHUNK
  end
  return MAXTIME
end

-- Go twin: internal/algo.SlidingLog
function sliding_log.decide(c, st, now, cost, v)
  local q, w = c.q, c.w
  local h, n = st.h, st.n
  local eff, stamp, newest, last, lastUnits = now, now, nil, nil, 0
  if n > h then
    newest, lastUnits = entry(c.key, n - 1)
    last = clamp_time(newest)
    if c.alg == CONCURRENCY then
      stamp = math.max(now, last + 1) -- every lease held has a stamp of its own
    else
      eff = math.max(now, last)
      stamp = eff
    end
  end
  -- Entries at or before eff - w have expired.
  local head, used = h, math.max(st.a, 0)
  if n > h and last <= eff - w then
    head, used = n, 0
  else
    while head < n do
      local at, units = newest, lastUnits
      if head < n - 1 then
        at, units = entry(c.key, head)
      end
      if at > eff - w then
        break
      end
      used = used - math.max(units, 0)
      head = head + 1
    end
  end

  verdict(v, cost == 0 or used <= q - cost)
  local nxt
  if cost > q then
    v.retry = NEVER
  elseif not v.ok then
    v.retry = log_retry(c, head, n, used + cost - q) - now
  elseif cost > 0 then
    nxt = {h = head, at = stamp, units = cost, used = used + cost}
    if c.alg ~= CONCURRENCY and n > head and last == stamp then
      nxt.merge = lastUnits + cost
    end
    if c.alg == CONCURRENCY then
      v.lease = stamp
    else
      v.charged = stamp
    end
    used = used + cost
    last = stamp
  end
  v.rem = math.max(q - used, 0)
  if used > 0 then
    v.reset = last + w - now
  end
  return v, nxt
end

function sliding_log.write(c, st, nxt, g)
  local key, n = c.key, st.n
  local i = st.h
  while i < nxt.h do -- forget the expired entries
    local fields = {}
    for j = i, math.min(i + CHUNK, nxt.h) - 1 do
      fields[#fields + 1] = fmt(j)
    end
    redis.call('HDEL', key, unpack(fields))
    i = i + CHUNK
  end
  local field, text = fmt(n), entry_text(nxt.at, nxt.units)
  if nxt.merge then
    field, text = fmt(n - 1), entry_text(nxt.at, nxt.merge)
  else
    n = n + 1
  end
  redis.call('HSET', key, field, text, 'g', g, 'h', fmt(nxt.h), 'n', fmt(n), 'a', fmt(nxt.used))
end

-- mark is the undo mark of a write of nxt: the new entry's stamp.
function sliding_log.mark(c, nxt)
  return nxt.at
end

-- remove takes units, at most all it holds, out of the newest entry stamped
-- at (refundLog in internal/algo) — for a lease (exact), only an entry of
-- exactly those units, which it deletes — closing the gap an emptied entry
-- leaves and deleting the key when the log is empty. It reports whether it
-- found the entry.
local function remove(c, st, at, units, exact, g)
  local key, h, n = c.key, st.h, st.n
  local i, found, taken, left = n - 1, nil, 0, 0
  while i >= h do
    local e, u = entry(key, i)
    if e < at then
      break -- entries are in time order: no such entry is left
    end
    if e == at and (u == units or not exact) then
      found, taken = i, math.min(units, u)
      left = u - taken
      break
    end
    i = i - 1
  end
  if not found then
    return false
  end
  local total = math.max(st.a - taken, 0)
  if left > 0 then
    redis.call('HSET', key, fmt(found), entry_text(at, left), 'g', g, 'a', fmt(total))
    return true
  end
  for j = found, n - 2 do
    redis.call('HSET', key, fmt(j), redis.call('HGET', key, fmt(j + 1)))
  end
  redis.call('HDEL', key, fmt(n - 1))
  if h == n - 1 then
    redis.call('DEL', key) -- the log is empty: a key never seen
  else
    redis.call('HSET', key, 'g', g, 'n', fmt(n - 1), 'a', fmt(total))
  end
  return true
end

-- undo takes the cost units stamped mark back out of the log.
function sliding_log.undo(c, st, mark, g)
  remove(c, st, tonumber(mark), c.cost, c.alg == CONCURRENCY, g)
end

-- release gives back the lease of cost units stamped at (Limit.Release).
-- Go twin: internal/algo.Release
function sliding_log.release(c, st, at, g)
  return remove(c, st, at, c.cost, true, g)
end
