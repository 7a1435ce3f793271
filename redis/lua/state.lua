-- state.lua: checks, stored state and writes, shared by every algorithm.
--
-- A limit's state for one subject lives at KEYS[i]
-- (sluice:{subject}:limit-name) and holds
--
--   g        the algorithm (sluice.Algorithm's number), followed by
--            ":token" while a cross-slot reservation may still be undone
--   t, a, b  the algorithm's numbers (see each algorithm's file)
--   h, n     sliding log only: indices of its oldest entry and one past its
--            newest; the entries themselves are the fields "h" … "n-1"
--
-- The sliding log (and concurrency) keeps them as the fields of a hash. The
-- other algorithms keep one string "g t a b" (decimal integers; b is 0 where
-- an algorithm has no use for it): one GET to read it and one SET with its
-- TTL to write it, where a hash takes a read, a write and a PEXPIRE.
--
-- A key that does not exist, that holds another type, or whose g names
-- another algorithm, is a key never seen (sluice's zero State). Every write
-- sets g and the key's TTL.

local ALG = {}    -- algorithm number → {decide, write, undo}
local GCRA = 6    -- sluice.AlgorithmGCRA
local CONCURRENCY = 7 -- sluice.AlgorithmConcurrency
local SLIDING_LOG = 2 -- sluice.AlgorithmSlidingLog

-- LIMIT_ARGS is the number of arguments of a limit: algorithm, quantity,
-- window (µs), burst, rq, rw, max wait (µs) and shadow (1 or 0). rq/rw is
-- quantity/window in lowest terms (ticks).
local LIMIT_ARGS = 8

-- parse_limits reads count limits whose arguments start after ARGV[off]
-- (apply.lua's table of limits) into a list of tables of their numbers.
local function parse_limits(count, off)
  local limits = {}
  for j = 1, count do
    local o = off + (j - 1) * LIMIT_ARGS
    limits[j] = {
      alg = tonumber(ARGV[o + 1]),
      q = tonumber(ARGV[o + 2]),
      w = tonumber(ARGV[o + 3]),
      b = tonumber(ARGV[o + 4]),
      rq = tonumber(ARGV[o + 5]),
      rw = tonumber(ARGV[o + 6]),
      mw = tonumber(ARGV[o + 7]),
      shadow = ARGV[o + 8] == '1',
      g = ARGV[o + 1], -- the algorithm's tag, as written in g
      rq_text = ARGV[o + 5],
    }
  end
  return limits
end

-- check_of returns the check of KEYS[i] under limit l with cost.
local function check_of(i, l, cost)
  return {
    key = KEYS[i], alg = l.alg, q = l.q, w = l.w, b = l.b, rq = l.rq, rw = l.rw,
    mw = l.mw, cost = cost, shadow = l.shadow, g = l.g, rq_text = l.rq_text,
  }
end

-- CHECK_ARGS is the number of arguments of a check in refund.lua and
-- release.lua: its limit's LIMIT_ARGS, then its cost.
local CHECK_ARGS = LIMIT_ARGS + 1

-- parse_check reads the check of KEYS[i] whose arguments start after
-- ARGV[off].
local function parse_check(i, off)
  return check_of(i, parse_limits(1, off)[1], tonumber(ARGV[off + CHECK_ARGS]))
end

-- alg_of returns the algorithm number stored in g, or nil.
local function alg_of(g)
  if not g then
    return nil
  end
  return tonumber(g) or tonumber(string.match(g, '^(%d+):'))
end

-- in_hash reports whether algorithm alg keeps its state in a hash.
local function in_hash(alg)
  return alg == SLIDING_LOG or alg == CONCURRENCY
end

-- load_state returns check c's stored state: its tag g (nil when none),
-- numbers t, a, b, h, n (0 when absent) and the flags fresh (a key never
-- seen) and foreign (the key holds something else, to be deleted before a
-- hash is written; a string write replaces whatever was there).
local function load_state(c)
  local f, foreign
  if in_hash(c.alg) then
    f = redis.pcall('HMGET', c.key, 'g', 't', 'a', 'b', 'h', 'n')
    if f.err then
      f, foreign = {}, true -- not a hash
    end
  else
    local raw = redis.pcall('GET', c.key)
    if type(raw) == 'string' then
      f = {string.match(raw, '^(%S+) (%S+) (%S+) (%S+)$')}
    else
      f = {} -- no key (false), or not a string (an error)
    end
  end
  local g = f[1] or nil
  if alg_of(g) ~= c.alg then
    return {fresh = true, foreign = foreign or g ~= nil, g = g, t = 0, a = 0, b = 0, h = 0, n = 0}
  end
  return {
    g = g, t = tonumber(f[2]) or 0, a = tonumber(f[3]) or 0, b = tonumber(f[4]) or 0,
    h = tonumber(f[5]) or 0, n = tonumber(f[6]) or 0,
  }
end

-- put writes the state of an algorithm kept in a string: tag g, numbers t
-- and a, and b already formatted, with a TTL of ttl ms (formatted), or
-- keeping the key's TTL when ttl is nil.
local function put(key, g, t, a, b, ttl)
  local text = g .. ' ' .. fmt(t) .. ' ' .. fmt(a) .. ' ' .. b
  if ttl then
    redis.call('SET', key, text, 'PX', ttl)
  else
    redis.call('SET', key, text, 'KEEPTTL')
  end
end

-- verdict returns a Status in integer µs: allowed, remaining, reset-after,
-- retry-after (NEVER: no wait suffices), delay and a concurrency lease's
-- stamp.
local function verdict(ok)
  return {ok = ok, rem = 0, reset = 0, retry = 0, delay = 0, lease = 0}
end

-- commit writes check c's next state through its algorithm, tags it with g
-- and gives the key a TTL of the status's reset-after rounded up to whole
-- ms, at least minttl ms (1 in production): by then the state is worth a
-- fresh one. It returns the algorithm's undo mark.
local function commit(c, st, nxt, v, g, minttl)
  local ttl = fmt(math.max(ceildiv(v.reset, 1000), minttl, 1))
  if not in_hash(c.alg) then
    return ALG[c.alg].write(c, st, nxt, g, ttl)
  end
  if st.foreign then
    redis.call('DEL', c.key)
  end
  local mark = ALG[c.alg].write(c, st, nxt, g)
  redis.call('PEXPIRE', c.key, ttl)
  return mark
end

-- push appends v's STATUS_WORDS numbers to out.
local STATUS_WORDS = 6
local function push(out, v)
  local retry = v.retry
  if v.ok then
    retry = 0
  end
  local n = #out
  out[n + 1] = v.ok and 1 or 0
  out[n + 2] = v.rem
  out[n + 3] = v.reset
  out[n + 4] = retry
  out[n + 5] = v.delay
  out[n + 6] = v.lease
end

-- script_now returns the time of the script: ARGV[1] when a test passes
-- one, else Redis's own clock, in µs since sluice.Epoch (2020-01-01 UTC,
-- 1577836800 s after the Unix epoch).
local function script_now()
  local now = tonumber(ARGV[1])
  if now then
    return now
  end
  local t = redis.call('TIME')
  return (tonumber(t[1]) - 1577836800) * 1000000 + tonumber(t[2])
end
