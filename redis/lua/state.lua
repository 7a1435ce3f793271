-- state.lua: checks, stored state and writes, shared by every algorithm.
--
-- A limit's state for one subject lives at KEYS[i]
-- (redis.Key: sluice:{subject}:limit-name, the subject percent-encoded
-- after sluice:% when it is empty or holds a brace) and holds
--
--   g        the algorithm (sluice.Algorithm's number), followed by
--            ":token" while a cross-slot reservation may still be undone
--            (a bucket: ":" and its pending reservations, see bucket.lua)
--   born     string states only: when the state was created (µs since
--            sluice.Epoch), the first write to the key since it last held
--            none, or the earliest time of a write since if the clock
--            stepped back; MINTIME, before every time, when unknown (a
--            state an earlier version wrote; a hash records none, and its
--            born reads as unknown)
--   t, a, b  the algorithm's numbers (see each algorithm's file)
--   h, n     sliding log only: indices of its oldest entry and one past its
--            newest; the entries themselves are the fields "h" … "n-1"
--
-- The sliding log (and concurrency) keeps them as the fields of a hash. The
-- other algorithms keep one string: g (followed by ":" when it has no
-- token, so that it reads "<alg>:…" as every tag with a token does), "@",
-- born as a little-endian IEEE 754 double, "|", then t, a and b as three
-- more (exact for every integer up to 2^53; b is 0 where an algorithm has
-- no use for it), since Redis's Lua packs and unpacks doubles (struct) in
-- a fraction of the time it formats and parses decimal text. A receipt or
-- a lease taken before born was counted by a state the key no longer holds
-- (evicted, deleted, expired early): refunds and give-backs leave the
-- state alone. (The forms sluice wrote before are still read, with born
-- unknown: g, "|" and the three doubles, and the decimal text "g t a b".
-- An earlier version reads this form's tag as its algorithm and g with a
-- token as a reservation not its own.) Strings are read and written through the run's
-- string cache below: apply.lua reads every key of a run with one MGET and,
-- in mode "a", writes each key it changed once, at the end, with one SET
-- (PSETEX) and its TTL.
--
-- A key that does not exist, that holds another type, or whose g names
-- another algorithm, is a key never seen (sluice's zero State). Every write
-- sets g and the key's TTL.
--
-- The scripts keep Lua's allocations per check low, since they dominate
-- Redis's time for a batch: a check is its limit's table with the key and
-- cost of the moment (bind), a key never seen shares one table (FRESH), and
-- the algorithms fill the caller's verdict and next-state tables. They do
-- not alias globals (math.floor, struct.pack, …) as locals: every run
-- defines every function anew, and each local a function captures costs
-- more there (about 1 µs of a lone call's 19) than the lookups it saves.

local KEYS, ARGV = KEYS, ARGV

local ALG = {}    -- algorithm number → {decide, write, undo}
local GCRA = 6    -- sluice.AlgorithmGCRA
local CONCURRENCY = 7 -- sluice.AlgorithmConcurrency
local SLIDING_LOG = 2 -- sluice.AlgorithmSlidingLog

-- LIMIT_ARGS is the number of arguments of a limit: algorithm, quantity,
-- window (µs), burst, rq, rw, max wait (µs), shadow (1 or 0) and calendar
-- ("0", or a fixed window's calendar period and offset in µs as
-- "period:offset"). rq/rw is quantity/window in lowest terms (ticks).
local LIMIT_ARGS = 9

-- in_hash reports whether algorithm alg keeps its state in a hash.
local function in_hash(alg)
  return alg == SLIDING_LOG or alg == CONCURRENCY
end

-- num converts a small decimal argument (a limit's index, a cost, a count)
-- to a number, remembering the conversions of the run: tonumber parses with
-- strtod, several times the cost of a lookup of the (interned) text, and a
-- run's small arguments repeat.
local NUMS = {}
local function num(s)
  local v = NUMS[s]
  if v == nil then
    v = tonumber(s)
    NUMS[s] = v
  end
  return v
end

-- parse_limits reads count limits whose arguments start after ARGV[off]
-- (apply.lua's table of limits) into a list of tables of their numbers.
-- fam is the algorithm's family (ALG entry; nil when the script does not
-- carry it).
local function parse_limits(count, off)
  local limits = {}
  for j = 1, count do
    local o = off + (j - 1) * LIMIT_ARGS
    local alg = tonumber(ARGV[o + 1])
    local period, poff = 0, 0
    if ARGV[o + 9] ~= '0' then
      local p, f = string.match(ARGV[o + 9], '^(%d):(-?%d+)$')
      period, poff = tonumber(p), tonumber(f)
    end
    limits[j] = {
      alg = alg,
      q = tonumber(ARGV[o + 2]),
      w = tonumber(ARGV[o + 3]),
      b = tonumber(ARGV[o + 4]),
      rq = tonumber(ARGV[o + 5]),
      rw = tonumber(ARGV[o + 6]),
      mw = tonumber(ARGV[o + 7]),
      shadow = ARGV[o + 8] == '1',
      period = period, off = poff,
      g = ARGV[o + 1], -- the algorithm's tag, as written in g
      fam = ALG[alg],
      hash = in_hash(alg),
      key = '', cost = 0, -- set by bind
    }
  end
  return limits
end

-- bind makes limit l the check of key with cost, and returns it. Checks
-- are decided one at a time, so a check is its limit's table with the key
-- and cost of the moment: bind again before each use.
local function bind(l, key, cost)
  l.key, l.cost = key, cost
  return l
end

-- CHECK_ARGS is the number of arguments of a check in refund.lua and
-- release.lua: its limit's LIMIT_ARGS, then its cost.
local CHECK_ARGS = LIMIT_ARGS + 1

-- parse_check reads the check of KEYS[i] whose arguments start after
-- ARGV[off] (a table of its own).
local function parse_check(i, off)
  return bind(parse_limits(1, off)[1], KEYS[i], tonumber(ARGV[off + CHECK_ARGS]))
end

-- alg_of returns the algorithm number stored in g, or nil.
local function alg_of(g)
  if not g then
    return nil
  end
  return num(g) or tonumber(string.match(g, '^(%d+):'))
end

-- FRESH is the state of a key never seen, shared: never write to it.
local FRESH = {fresh = true, t = 0, a = 0, b = 0, h = 0, n = 0}
local FRESH_FOREIGN = {fresh = true, foreign = true, t = 0, a = 0, b = 0, h = 0, n = 0}

-- The run's string cache: cache[key] is the string a key holds as this run
-- last read or wrote it (false when it holds none), nil when not read yet;
-- pending[key] is the TTL (ms) of a state written in write-back mode and not
-- yet SET (flush SETs them, in the order of order). Keeping the text rather
-- than a table of numbers costs a key written but not read again nothing
-- beyond the text its SET needs. Write-back is apply.lua's mode "a" alone: a
-- reservation writes through, since its DUMP is taken before each write.
local cache, pending, order, norder = {}, {}, {}, 0
local write_back = false
local NONE = {}

-- The run's TTL extensions (see outlive): longer[key] is the least TTL (ms)
-- a state the run read and did not write must keep, or false once a later
-- write of the run gave the key its TTL (see put and commit), which one by
-- one would have replaced the extension; flush sets them, in the order of
-- lorder, after every write of the run.
local longer, lorder, nlonger = {}, {}, 0

-- parse_text returns the state of a string value (a GET or MGET reply).
local function parse_text(raw)
  if type(raw) ~= 'string' then
    return NONE -- no key (false), or not a string (an error)
  end
  local n = #raw
  if n >= 26 and string.byte(raw, n - 24) == 124 then -- "|": t, a, b packed
    local t, a, b = struct.unpack('<ddd', raw, n - 23)
    if t - t ~= 0 or a - a ~= 0 or b - b ~= 0 then
      return NONE -- not finite: corrupt
    end
    local g, born = string.sub(raw, 1, n - 25), MINTIME
    if n >= 36 and string.byte(raw, n - 33) == 64 then -- "@": g, then born packed
      born = struct.unpack('<d', raw, n - 32)
      if born - born ~= 0 then
        return NONE
      end
      g = string.sub(raw, 1, n - 34)
      if string.byte(g, #g) == 58 then -- ":" after a tag without a token
        g = string.sub(g, 1, #g - 1)
      end
    end
    return {g = g, alg = alg_of(g), born = born, t = t, a = a, b = b}
  end
  local g, t, a, b = string.match(raw, '^(%S+) (%S+) (%S+) (%S+)$') -- decimal text
  if not g then
    return NONE
  end
  return {g = g, alg = alg_of(g), born = MINTIME, t = tonumber(t) or 0, a = tonumber(a) or 0, b = tonumber(b) or 0}
end

-- prefetch reads the strings of keys into the cache, MGET by MGET.
local function prefetch(keys)
  local chunk = 1000
  for i = 1, #keys, chunk do
    local last = math.min(i + chunk - 1, #keys)
    local raw = redis.call('MGET', unpack(keys, i, last))
    for j = i, last do
      local k = keys[j]
      if cache[k] == nil then
        cache[k] = raw[j - i + 1] -- false: no key, or not a string
      end
    end
  end
end

-- ttl_text formats a TTL (ms), remembering the texts of the run: keys
-- decided at the same instant under the same limit share their TTL.
local TTLS = {}
local function ttl_text(ttl)
  local s = TTLS[ttl]
  if not s then
    s = fmt(ttl)
    TTLS[ttl] = s
  end
  return s
end

-- text is the stored form of a string state of check c: tag g (":" after
-- c's algorithm alone), "@", born, "|", then t, a and b packed.
local function text(c, g, born, t, a, b)
  if g == c.g then
    g = g .. ':'
  end
  return g .. '@' .. struct.pack('<d', born) .. '|' .. struct.pack('<ddd', t, a, b)
end

-- flush_key SETs key's pending write, if any.
local function flush_key(key)
  local ttl = pending[key]
  if ttl then
    redis.call('PSETEX', key, ttl_text(ttl), cache[key]) -- SET … PX, one argument fewer
    pending[key] = nil
  end
end

-- flush SETs every pending write, then gives each key the run extends its
-- TTL (at the end of a run of any script that calls outlive). PEXPIRE …
-- GT never shortens a TTL, and changes nothing (nor is replicated) where
-- the key lives that long already or no longer exists; it comes after the
-- writes, as Redis refuses writes for want of memory at a script's first
-- write only.
local function flush()
  for i = 1, norder do
    flush_key(order[i])
  end
  for i = 1, nlonger do
    local key = lorder[i]
    local ttl = longer[key]
    if ttl then
      redis.call('PEXPIRE', key, ttl_text(ttl), 'GT')
    end
  end
end

-- forget drops what the cache knows of key, after a write that bypassed
-- it (a hash, DEL, RESTORE).
local function forget(key)
  cache[key], pending[key] = nil, nil
end

-- load_state returns check c's stored state: its tag g (nil when none),
-- numbers t, a, b, h, n (0 when absent) and the flags fresh (a key never
-- seen) and foreign (the key holds something else, to be deleted before a
-- hash is written; a string write replaces whatever was there). The
-- returned table is shared: never write to it.
local function load_state(c)
  local key = c.key
  if not c.hash then
    local raw = cache[key]
    if raw == nil then
      raw = redis.pcall('GET', key)
      if type(raw) ~= 'string' then
        raw = false -- no key (false), or not a string (an error)
      end
      cache[key] = raw
    end
    if not raw then
      return FRESH
    end
    local st = parse_text(raw)
    if st.alg ~= c.alg then
      return FRESH
    end
    return st
  end
  flush_key(key) -- a string this run wrote is what the key holds
  local f = redis.pcall('HMGET', key, 'g', 't', 'a', 'b', 'h', 'n')
  if f.err then
    return FRESH_FOREIGN -- not a hash
  end
  local g = f[1] or nil
  if alg_of(g) ~= c.alg then
    if g ~= nil then
      return FRESH_FOREIGN
    end
    return FRESH
  end
  return {
    g = g, t = tonumber(f[2]) or 0, a = tonumber(f[3]) or 0, b = tonumber(f[4]) or 0,
    h = tonumber(f[5]) or 0, n = tonumber(f[6]) or 0,
  }
end

-- NOW is the run's time once script_now has read it, nil before: every
-- script that may write a key that holds no state reads it first.
local NOW = nil

-- born returns the born of state st as a write now records it: now for
-- a key never seen, which the write creates; else st's own, MINTIME when
-- unknown (a hash records none), which every time is at or after, before
-- sluice.Epoch too; or, when st's is known and the run has read its time,
-- that time if earlier (the clock stepped back), so that every receipt a
-- state gives is at or after its born.
local function born(st)
  if st.fresh then
    return NOW
  end
  local b = st.born or MINTIME
  local known = b > MINTIME
  if known and NOW ~= nil and NOW < b then
    return NOW
  end
  return b
end

-- put writes the next state of check c's algorithm kept in a string,
-- whose state was st: tag g, numbers t, a and b, with a TTL of ttl ms, or
-- keeping the key's TTL when ttl is nil. In write-back mode a write with
-- a TTL only updates the cache (flush SETs it). A write with a TTL drops
-- the extension an earlier call of the run gave the key (see outlive): the
-- calls of a run leave the key's TTL as they would one by one.
local function put(c, st, g, t, a, b, ttl)
  local key, s = c.key, text(c, g, born(st), t, a, b)
  cache[key] = s
  if ttl and longer[key] then
    longer[key] = false
  end
  if write_back and ttl then
    if not pending[key] then
      norder = norder + 1
      order[norder] = key
    end
    pending[key] = ttl
    return
  end
  pending[key] = nil
  if ttl then
    redis.call('PSETEX', key, ttl_text(ttl), s)
  else
    redis.call('SET', key, s, 'KEEPTTL')
  end
end

-- verdict resets v to a Status in integer µs: allowed, remaining,
-- reset-after, retry-after (NEVER: no wait suffices), delay and a
-- concurrency lease's stamp; it returns v.
local function verdict(v, ok)
  v.ok, v.rem, v.reset, v.retry, v.delay, v.lease, v.charged = ok, 0, 0, 0, 0, 0, 0
  return v
end

-- commit writes check c's next state through its algorithm, tags it with g
-- and gives the key a TTL of the status's reset-after rounded up to whole
-- ms, at least minttl ms (1 in production): by then the state is worth a
-- fresh one.
local function commit(c, st, nxt, v, g, minttl)
  local reset, ttl = v.reset, 0
  if reset < TWO52 then
    ttl = math.floor((reset + 999) / 1000) -- exact below 2^53, see divmod
  else
    ttl = ceildiv(reset, 1000)
  end
  if ttl < minttl then
    ttl = minttl
  end
  if not c.hash then
    c.fam.write(c, st, nxt, g, ttl)
    return
  end
  flush_key(c.key)
  if st.foreign then
    redis.call('DEL', c.key)
  end
  c.fam.write(c, st, nxt, g)
  redis.call('PEXPIRE', c.key, fmt(ttl))
  if longer[c.key] then
    longer[c.key] = false -- as put's write
  end
  forget(c.key)
end

-- outlive makes key, whose state st the run read at now and does not write
-- (its check refused, or the call it is part of), live until the state is
-- back at full quota under the limit that checked it, as v says, without
-- shortening its TTL: a limit reloaded with a longer window counts the
-- state beyond the TTL its last write gave it, and counts it only while
-- the key holds it. The TTL runs to the last whole millisecond at or before
-- that time (at least minttl): no later than the expiry the write gave the
-- key (its reset-after rounded up), so that a refusal under the limit that
-- wrote the state leaves its TTL as it was. A key never seen, or holding
-- another algorithm's state, is left alone. flush applies it.
local function outlive(key, st, v, now, minttl)
  if st.fresh then
    return
  end
  local reset, ttl = v.reset, 0
  if reset < TWO52 then
    ttl = math.floor((now % 1000 + reset) / 1000) -- ⌊(now + reset)/1000⌋ - ⌊now/1000⌋
  else
    ttl = ceildiv(reset, 1000)
  end
  if ttl <= 0 then
    return -- back at full quota within the millisecond
  end
  if ttl < minttl then
    ttl = minttl
  end
  local old = longer[key]
  if old == nil then
    nlonger = nlonger + 1
    lorder[nlonger] = key
  elseif old and old >= ttl then
    return
  end
  longer[key] = ttl
end

-- push appends v's STATUS_WORDS reply words to out: remaining·2 + allowed
-- (1/0), reset-after (µs), then, when allowed, the delay (µs), a concurrency
-- lease's stamp or a window's or log's receipt (all but one are 0; see
-- Status.Charged), and when refused
-- the retry-after (µs; NEVER: no wait suffices).
local STATUS_WORDS = 3
local function push(out, v)
  local n = #out
  if v.ok then
    out[n + 1], out[n + 2], out[n + 3] = v.rem * 2 + 1, v.reset, v.delay + v.lease + v.charged
  else
    out[n + 1], out[n + 2], out[n + 3] = v.rem * 2, v.reset, v.retry
  end
end

-- pack_words packs the numbers of list w as little-endian doubles, a
-- thousand per struct.pack (unpack's limit is the C stack).
local function pack_words(w)
  local n = #w
  if n <= 1000 then
    return struct.pack('<' .. string.rep('d', n), unpack(w))
  end
  local parts = {}
  for i = 1, n, 1000 do
    local j = math.min(i + 999, n)
    parts[#parts + 1] = struct.pack('<' .. string.rep('d', j - i + 1), unpack(w, i, j))
  end
  return table.concat(parts)
end

-- script_now returns the time of the script: ARGV[1] when a test passes
-- one, else Redis's own clock, in µs since sluice.Epoch (2020-01-01 UTC,
-- 1577836800 s after the Unix epoch).
local function script_now()
  local now = tonumber(ARGV[1])
  if now then
    NOW = now
    return now
  end
  local t = redis.call('TIME')
  NOW = (tonumber(t[1]) - 1577836800) * 1000000 + tonumber(t[2])
  return NOW
end
