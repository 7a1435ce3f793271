-- apply.lua: decides one or more calls, each of whose checks live in one
-- Cluster slot. Each call is decided atomically and all-or-nothing exactly
-- as sluice.DecideBatch: if any enforcing (non-shadow) check is refused,
-- nothing is written and the checks that fit report their current state as
-- a peek would; otherwise every check that fits consumes its cost (a shadow
-- check that does not fit consumes nothing and reports its refusal). Calls
-- are decided one after another, in order, at the same time: a batch of
-- calls decides exactly as the same calls sent one by one at that instant.
-- A call that fails (a key holding a foreign type, say) reports its error
-- and leaves the others decided.
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
--          per check the index of its limit (1…L) and its cost
--
-- Reply: the time used, then per call either 1 followed by, per check,
-- allowed (1/0), remaining, reset-after (µs), retry-after (µs; -1: never),
-- delay (µs) and the lease's stamp (µs since Epoch; concurrency only, else
-- 0) — in mode "r" then per check the undo mark, the key's DUMP before the
-- write ("" if it did not exist) and its PEXPIRETIME then, or three "" when
-- not written — or, when the call failed, the error's message alone.

local now = script_now()
local minttl = tonumber(ARGV[2])
local mode = ARGV[3]
local g_suffix = ''
if mode == 'r' then
  g_suffix = ':' .. ARGV[4]
end

local limits = parse_limits(tonumber(ARGV[5]), 5)

-- apply_call decides the n checks whose keys start after KEYS[koff] and
-- whose (limit, cost) pairs start after ARGV[aoff], appending the call's
-- reply words to out.
local function apply_call(koff, aoff, n, out)
  local checks, states, verdicts, nexts = {}, {}, {}, {}
  local blocked = mode == 'd'
  for i = 1, n do
    local o = aoff + 2 * i - 1
    local c = check_of(koff + i, limits[tonumber(ARGV[o])], tonumber(ARGV[o + 1]))
    local st = load_state(c)
    local v, nxt = ALG[c.alg].decide(c, st, now, c.cost)
    checks[i], states[i], verdicts[i], nexts[i] = c, st, v, nxt
    if not v.ok and not c.shadow then
      blocked = true
    end
  end
  out[#out + 1] = 1
  local undo = mode == 'r' and {}
  for i = 1, n do
    local c, v = checks[i], verdicts[i]
    local mark, dump, expires = '', '', ''
    if c.cost > 0 and v.ok then
      if blocked then
        v = ALG[c.alg].decide(c, states[i], now, 0) -- report as a peek
      else
        if mode == 'r' then
          dump = redis.call('DUMP', c.key) or ''
          expires = redis.call('PEXPIRETIME', c.key)
        end
        mark = commit(c, states[i], nexts[i], v, c.g .. g_suffix, minttl)
      end
    end
    push(out, v)
    if undo then
      undo[#undo + 1], undo[#undo + 2], undo[#undo + 3] = mark, dump, expires
    end
  end
  if mode == 'r' then
    for _, x in ipairs(undo) do
      out[#out + 1] = x
    end
  end
end

local out = {now}
local calls_at = 6 + #limits * LIMIT_ARGS
local koff, aoff = 0, calls_at + 1
for _ = 1, tonumber(ARGV[calls_at]) do
  local n = tonumber(ARGV[aoff])
  local base = #out
  local ok, err = pcall(apply_call, koff, aoff, n, out)
  if not ok then
    for j = #out, base + 1, -1 do
      out[j] = nil -- drop the failed call's partial reply
    end
    if type(err) == 'table' then
      err = err.err
    end
    out[base + 1] = tostring(err)
  end
  koff, aoff = koff + n, aoff + 1 + 2 * n
end
return out
