#!lua
-- apply.lua: decides one or more calls, each of whose checks live in one
-- Cluster slot. Each call is decided atomically and all-or-nothing exactly
-- as sluice.DecideBatch: if any enforcing (non-shadow) check is refused,
-- nothing is written and the checks that fit report their current state as
-- a peek would; otherwise every check that fits consumes its cost (a shadow
-- check that does not fit consumes nothing and reports its refusal). Calls
-- are decided one after another, in order, at the same time: a batch of
-- calls decides exactly as the same calls sent one by one at that instant.
-- A call that fails (a corrupt sliding log, say) reports its error and
-- leaves the others decided. A state a refused call reads keeps its key
-- at least until its limit has it back at full quota (see outlive).
--
-- In mode "a" the run reads the string states of all its keys with one
-- MGET up front and writes each key it changed once, at the end, with its
-- last state and TTL (write-back, see state.lua): a key several calls use
-- is read once and written once, and a run pays one MGET and one SET per
-- key rather than a GET and a SET per check. A call that fails while
-- deciding (as on a corrupt state) has written nothing.
--
-- The first line, a shebang of no flags, has Redis refuse the run before it
-- starts whenever it refuses writes: out of memory (maxmemory reached under
-- noeviction), a replica, a master that cannot save or has too few
-- replicas for min-replicas-to-write. A run that would write nothing, a
-- peek or a refusal, is refused then too, as a run that consumes is: the
-- store cannot decide, and a check of cost 0 (a failover probe) fails as
-- the next call would. On a Cluster, the run may touch keys of one slot
-- only, all of them in KEYS.
--
-- KEYS     the state keys of every check of every call, in order
-- ARGV[1]  the time in µs since sluice.Epoch, or "" for Redis's TIME
-- ARGV[2]  least TTL in ms of a key written (1; tests with their own
--          clock pass more, since Redis expires keys on its real clock)
-- ARGV[3]  mode: "a" apply; "r" reserve: apply, tagging what it writes
--          with ARGV[4] and returning what refund.lua needs to undo it;
--          "d" dry run: decide as if another slot had refused the call
-- ARGV[4]  the reservation's token (mode "r")
-- ARGV[5]  the number L of distinct limits, followed by LIMIT_ARGS
--          arguments per limit (see parse_limits)
-- then     the number of calls, and per call its number of checks, then
--          per check the index of its limit (1…L) and its cost; when every
--          call has one check, minus the number of calls, and per call its
--          check's limit and cost alone (20 fewer arguments in a run of 20)
--
-- Reply: the time used; the words of every call, packed as little-endian
-- IEEE 754 doubles (exact integers; one bulk string converts and parses far
-- faster than an integer reply per word): per call either, per check, its
-- STATUS_WORDS (see push in state.lua), or, when the call failed, -1 (a
-- status starts with a word ≥ 0); a call of no checks has no words. Then,
-- in the order of the calls, per failed call its error's message and, in
-- mode "r", per check of a decided call the undo mark, the key's DUMP
-- before the write ("" if it did not exist) and its PEXPIRETIME then, or
-- three "" when not written.

local now = script_now()
local minttl = math.max(tonumber(ARGV[2]), 1)
local mode = ARGV[3]
local g_suffix = ''
if mode == 'r' then
  g_suffix = ':' .. ARGV[4]
end
write_back = mode == 'a'

local limits = parse_limits(tonumber(ARGV[5]), 5)
for _, l in ipairs(limits) do
  if not l.hash then
    prefetch(KEYS) -- a hash key reads as no string state, harmlessly
    break
  end
end

-- Per position in a call, reused by every call of the run: scratch verdict
-- and next-state tables that decide fills, and (made by the first call of
-- several checks) the check's limit, cost, state and next state.
local V, N = {{}}, {{}}
local lims, costs, sts, nexts

-- apply_call decides the n checks whose keys start after KEYS[koff] and
-- whose (limit, cost) pairs start after ARGV[aoff], appending the call's
-- status words to out and its undo words (mode "r") to extra.
-- Go twin: sluice.DecideBatch (the all-or-nothing rule; each check by internal/algo.Decide)
local function apply_call(koff, aoff, n, out, extra)
  if n == 1 and mode == 'a' then
    -- A lone check: it consumes if it fits, and nothing else can block it.
    local l, cost = limits[num(ARGV[aoff + 1])], num(ARGV[aoff + 2])
    l.key, l.cost = KEYS[koff + 1], cost -- bind
    local st, v, nx = load_state(l), V[1], N[1]
    local _, nxt = l.fam.decide(l, st, now, cost, v, nx)
    if cost > 0 and v.ok then
      commit(l, st, nxt, v, l.g, minttl)
    elseif not v.ok then
      outlive(l.key, st, v, now, minttl)
    end
    push(out, v)
    return
  end
  if not lims then
    lims, costs, sts, nexts = {}, {}, {}, {}
  end
  local blocked = mode == 'd'
  for i = 1, n do
    local o = aoff + 2 * i - 1
    local l, cost = limits[num(ARGV[o])], num(ARGV[o + 1])
    l.key, l.cost = KEYS[koff + i], cost -- bind
    local st = load_state(l)
    local v = V[i]
    if not v then
      v = {}
      V[i], N[i] = v, {}
    end
    local _, nxt = l.fam.decide(l, st, now, cost, v, N[i])
    lims[i], costs[i], sts[i], nexts[i] = l, cost, st, nxt
    if not v.ok and not l.shadow then
      blocked = true
    end
  end
  local undo = mode == 'r' and {}
  for i = 1, n do
    local cost, v = costs[i], V[i]
    local mark, dump, expires = '', '', ''
    if cost > 0 and v.ok then
      local c = bind(lims[i], KEYS[koff + i], cost)
      if blocked then
        c.fam.decide(c, sts[i], now, 0, v, N[i]) -- report as a peek
      elseif mode == 'r' then
        dump = redis.call('DUMP', c.key) or ''
        expires = redis.call('PEXPIRETIME', c.key)
        mark = c.fam.mark(c, nexts[i])
        commit(c, sts[i], nexts[i], v, c.g .. g_suffix, minttl)
      else
        commit(c, sts[i], nexts[i], v, c.g, minttl)
      end
    end
    if blocked or not v.ok then
      outlive(KEYS[koff + i], sts[i], v, now, minttl)
    end
    push(out, v)
    if undo then
      undo[#undo + 1], undo[#undo + 2], undo[#undo + 3] = mark, dump, expires
    end
  end
  if mode == 'r' then
    for _, x in ipairs(undo) do
      extra[#extra + 1] = x
    end
  end
end

-- The calls are decided in one protected loop (a pcall per call costs more
-- than the decision of a small one): when call number `call` fails, its
-- partial reply gives way to its error and the loop resumes after it.
local out, extra = {}, {}
local calls_at = 6 + #limits * LIMIT_ARGS
local ncalls = tonumber(ARGV[calls_at])
local single = ncalls < 0 -- every call has one check, its count left out
if single then
  ncalls = -ncalls
end
local call, koff, aoff, base = 1, 0, calls_at + 1, 0

-- shape returns the number of checks of the call whose arguments start at
-- ARGV[aoff] and the offset its (limit, cost) pairs start after.
local function shape(aoff)
  if single then
    return 1, aoff - 1
  end
  return num(ARGV[aoff]), aoff
end

local function apply_calls()
  while call <= ncalls do
    local n, at = shape(aoff)
    base = #out
    apply_call(koff, at, n, out, extra)
    call, koff, aoff = call + 1, koff + n, at + 1 + 2 * n
  end
end

while call <= ncalls do
  local ok, err = pcall(apply_calls)
  if not ok then
    for j = #out, base + 1, -1 do
      out[j] = nil -- drop the failed call's partial reply
    end
    if type(err) == 'table' then
      err = err.err
    end
    out[base + 1] = -1
    extra[#extra + 1] = tostring(err)
    local n, at = shape(aoff)
    call, koff, aoff = call + 1, koff + n, at + 1 + 2 * n
  end
end
flush()
local reply = {now, pack_words(out)}
for i = 1, #extra do
  reply[i + 2] = extra[i]
end
return reply
