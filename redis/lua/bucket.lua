-- bucket.lua: the bucket family, sluice.AlgorithmTokenBucket (4),
-- AlgorithmLeakyBucket (5, a meter, or a queue when the max wait mw > 0) and
-- AlgorithmGCRA (6), as in internal/algo/bucket.go. Amounts are in ticks: a unit
-- is rw ticks and rq ticks refill per µs (rq/rw = q/w in lowest terms), and
-- a full bucket, b·rw ticks, plus a queue's mw·rq stay ≤ 2^53, so every
-- amount below is exact.
--
-- Stored state (a string, see state.lua): t = when the bucket was last
-- seen (µs), a = ticks missing then. GCRA keeps the same two numbers plus b = the rq they were written
-- with: its theoretical arrival time is TAT = t + ⌊a/b⌋ µs and fraction
-- a mod b ticks. (Go's State holds TAT itself, which for extreme limits
-- passes 2^53 µs; relative to t it never does.)

local bucket = {}
ALG[4], ALG[5], ALG[GCRA] = bucket, bucket, bucket

-- load returns the time base ≥ now the bucket is seen at and the ticks
-- missing then (bucketLoad). A GCRA debt past limit, possible only after
-- the clock stepped back, is returned as far = {d, f}: missing = d·rq + f
-- ticks at now with d = TAT - now and 0 ≤ f < rq, which can pass 2^53 and
-- is only ever needed in closed forms.
-- Go twin: internal/algo.(*Params).bucketLoad (gcraLoad, levelLoad)
local function load(c, st, now, limit)
  if st.fresh then
    return now, 0
  end
  local rq = c.rq
  if c.alg == GCRA then
    local whole, frac = divmod(math.max(st.a, 0), math.max(st.b, 1))
    local d = clamp_time(st.t + whole) - now
    frac = math.min(frac, rq - 1)
    if d < 0 or d == 0 and frac == 0 then
      return now, 0 -- TAT passed
    end
    if frac > limit or d > floordiv(limit - frac, rq) then
      return now, nil, {d = d, f = frac}
    end
    return now, d * rq + frac
  end
  local missing = math.min(math.max(st.a, 0), limit)
  if missing == 0 then
    return now, 0
  end
  local last = clamp_time(st.t)
  local base = math.max(now, last)
  local elapsed = base - last
  if elapsed >= ceildiv(missing, rq) then
    return base, 0
  end
  return base, missing - elapsed * rq
end

-- view sets v's remaining and reset-after for a bucket of cap ticks seen
-- ahead µs from now, missing m ticks (far: the debt load returned instead).
-- Go twin: internal/algo.(*Params).view
local function view(c, v, cap, ahead, m, far)
  if far and m == nil then
    v.rem, v.reset = 0, far.d + (far.f > 0 and 1 or 0)
    return v
  end
  if m < cap then
    v.rem = divmod(cap - m, c.rw)
  end
  v.reset = ahead + ceildiv(m, c.rq)
  return v
end

-- Go twin: internal/algo.Bucket
function bucket.decide(c, st, now, cost, v, nxt)
  local b, rq, rw = c.b, c.rq, c.rw
  local cap = b * rw            -- ticks in a full bucket
  local limit = cap + c.mw * rq -- deepest admissible debt (queue)
  local base, missing, far = load(c, st, now, limit)
  local ahead = base - now

  if cost == 0 or cost > b then
    view(c, verdict(v, cost == 0), cap, ahead, missing, far)
    if cost > b then
      v.retry = NEVER
    end
    return v
  end
  local need = cost * rw -- cost ≤ b, so need ≤ cap ≤ 2^53
  if far then
    view(c, verdict(v, false), cap, ahead, nil, far)
    v.retry = far.d + ceildiv(far.f - (limit - need), rq)
    return v
  end
  if missing > limit - need then
    view(c, verdict(v, false), cap, ahead, missing, far)
    v.retry = ahead + ceildiv(missing - (limit - need), rq)
    return v
  end
  local after = missing + need
  local delay = 0
  if after > cap then
    delay = ahead + ceildiv(after - cap, rq)
    if delay > c.mw then
      -- Only after a clock step back (ahead > 0): the wait from now would
      -- pass the max wait although the wait from base does not.
      view(c, verdict(v, false), cap, ahead, missing, far)
      v.retry = delay - c.mw
      return v
    end
  end
  view(c, verdict(v, true), cap, ahead, after, far)
  v.delay = delay
  nxt.t, nxt.a, nxt.before = base, after, missing
  return v, nxt
end

function bucket.write(c, st, nxt, g, ttl)
  put(c, st, g, nxt.t, nxt.a, c.alg == GCRA and c.rq or 0, ttl)
end

-- mark is the undo mark of a write of nxt: "t0:m0", see undo.
function bucket.mark(c, nxt)
  return fmt(nxt.t) .. ':' .. fmt(nxt.before)
end

-- undo gives back the ticks of a reservation made at t0 (mark "t0:m0") on
-- a bucket then missing m0 ticks. A bucket refills at the same rate
-- whatever it misses, so the reservation's need = cost·rw ticks stay
-- missing on top of what the bucket would miss without it — except while
-- that bucket would have been full, when its refill went to the
-- reservation alone. That cannot start before t0 + m0/rq, so by the last
-- write t at most rq·(t-t0) - m0 of the need has refilled: undo the rest.
-- (Exact when the bucket stays busy; otherwise it gives back a little
-- less than it could, never more.) From t on, refill is the store's own.
function bucket.undo(c, st, mark, g)
  if c.alg == GCRA and st.b ~= c.rq then
    return -- written under another rate: its ticks are not ours
  end
  local colon = string.find(mark, ':', 1, true)
  local t0, m0 = tonumber(string.sub(mark, 1, colon - 1)), tonumber(string.sub(mark, colon + 1))
  local rq, need = c.rq, c.cost * c.rw
  local back = need
  local q0, r0 = divmod(m0, rq) -- m0 = q0·rq + r0
  local dt = st.t - t0
  if dt > q0 then
    if dt - q0 >= ceildiv(need + r0, rq) then
      back = 0
    else
      back = math.max(need - ((dt - q0) * rq - r0), 0)
    end
  end
  put(c, st, g, st.t, math.max(st.a - back, 0), st.b, nil)
end
