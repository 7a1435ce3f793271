-- apply.lua: decides every check of one call that lives in one Cluster slot,
-- atomically and all-or-nothing exactly as sluice.DecideBatch: if any
-- enforcing (non-shadow) check is refused, nothing is written and the checks
-- that fit report their current state as a peek would; otherwise every
-- check that fits consumes its cost (a shadow check that does not fit
-- consumes nothing and reports its refusal).
--
-- KEYS[i]  the state key of check i
-- ARGV[1]  the time in µs since sluice.Epoch, or "" for Redis's TIME
-- ARGV[2]  least TTL in ms of a key written (1; tests with their own
--          clock pass more, since Redis expires keys on its real clock)
-- ARGV[3]  mode: "a" apply; "r" reserve: apply, tagging what it writes
--          with ARGV[4] and returning what refund.lua needs to undo it;
--          "d" dry run: decide as if another slot had refused the call
-- ARGV[4]  the reservation's token (mode "r")
-- ARGV[5…] CHECK_ARGS arguments per check (see parse_check)
--
-- Reply: the time used, then per check allowed (1/0), remaining,
-- reset-after (µs), retry-after (µs; -1: never), delay (µs) and the
-- lease's stamp (µs since Epoch; concurrency only, else 0); in mode
-- "r" then per check the undo mark, the key's DUMP before the write ("" if
-- it did not exist) and its PEXPIRETIME then, or three "" when not written.

local now = script_now()
local minttl = tonumber(ARGV[2])
local mode = ARGV[3]
local n = #KEYS
local checks, states, verdicts, nexts = {}, {}, {}, {}
local blocked = mode == 'd'
for i = 1, n do
  local c = parse_check(i, 4 + (i - 1) * CHECK_ARGS)
  local st = load_state(c)
  local v, nxt = ALG[c.alg].decide(c, st, now, c.cost)
  checks[i], states[i], verdicts[i], nexts[i] = c, st, v, nxt
  if not v.ok and not c.shadow then
    blocked = true
  end
end

local g_suffix = ''
if mode == 'r' then
  g_suffix = ':' .. ARGV[4]
end
local out, undo = {now}, {}
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
      mark = commit(c, states[i], nexts[i], v, tostring(c.alg) .. g_suffix, minttl)
    end
  end
  push(out, v)
  undo[#undo + 1], undo[#undo + 2], undo[#undo + 3] = mark, dump, expires
end
if mode == 'r' then
  for _, x in ipairs(undo) do
    out[#out + 1] = x
  end
end
return out
