-- reset.lua: forgets states (Store.Reset). Each state key is deleted, and
-- its reset key records when, so that the leases taken from the state it
-- held, which the fresh state never counted, are not given back to that
-- one (lease.lua gives back nothing taken at or before a reset). The reset
-- key lives as long as the state key would have, and at least as long as
-- such a give-back could still change a state (ARGV), unless it already
-- lives longer.
--
-- KEYS[i]    the state key of limit i, i ≤ n = #KEYS / 2
-- KEYS[n+i]  its reset key, in the same slot
-- ARGV[1]    the time (as in apply.lua)
-- ARGV[1+i]  the least life of KEYS[n+i] in ms; 0: the limit is never
--            leased, and no reset key is written
--
-- Reply: the number of state keys that existed, and the time of the reset
-- (µs since sluice.Epoch, the time its reset keys record).

local now = script_now()
local n = #KEYS / 2
local gone = 0
for i = 1, n do
  local ttl = redis.call('PTTL', KEYS[i])
  if ttl ~= -2 then
    redis.call('DEL', KEYS[i])
    gone = gone + 1
  end
  local least = tonumber(ARGV[1 + i])
  if least > 0 then
    local life = math.max(ttl, least, redis.call('PTTL', KEYS[n + i]))
    redis.call('SET', KEYS[n + i], string.format('%d', now), 'PX', string.format('%d', life))
  end
end
return {gone, now}
