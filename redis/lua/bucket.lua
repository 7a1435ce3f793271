-- bucket.lua: the bucket family, sluice.AlgorithmTokenBucket (4),
-- AlgorithmLeakyBucket (5, a meter, or a queue when the max wait mw > 0) and
-- AlgorithmGCRA (6), as in internal/algo/bucket.go. Amounts are in ticks: a unit
-- is rw ticks and rq ticks refill per µs (rq/rw = q/w in lowest terms), and
-- a full bucket, b·rw ticks, plus a queue's mw·rq stay ≤ 2^53, so every
-- amount below is exact.
--
-- Stored state (a string, see state.lua): t = when the bucket was last
-- seen (µs), a = ticks missing then and b = the rq they were written with:
-- the theoretical arrival time is TAT = t + ⌊a/b⌋ µs and fraction a mod b
-- ticks, which is how every bucket reads it, as a refill time that keeps
-- its meaning under other parameters (a reload, a degradation level). (Go's
-- State holds TAT itself, which for extreme limits passes 2^53 µs;
-- relative to t it never does.) A token or leaky bucket state with b = 0
-- is the form earlier versions wrote, a the ticks missing at t under the
-- limit now in force, and is read as they read it.

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
  if c.alg == GCRA or st.b > 0 then
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

-- A bucket's pending reservations (cross-slot, see refund.lua) ride in its
-- tag, after "<alg>:", as "<last>~<tokens>~<ticks>": last is the token of
-- the reservation that wrote the key last ("" when another write did),
-- tokens the pending reservations' tokens, oldest first (at most
-- MAX_PENDING), and ticks, for each non-empty set S of them (S as a bit
-- mask over tokens, 1 … 2^n-1), D_S: how many ticks more the bucket misses
-- than it would without the reservations of S. A reservation of need ticks
-- makes D_S∪{it} = D_S + need (D_{it} = need); an operation that every
-- world undergoes alike keeps each D_S ≤ the ticks missing (a bucket
-- refills the same way whatever it misses, but not past full: the world
-- without S reaches full D_S ticks before this one), so a write sets each
-- D_S to min(D_S, the ticks missing before its own). The refund of
-- reservation R then gives back D_{R} exactly, and leaves D'_S = D_S∪{R} -
-- D_{R}. A reservation's call that was admitted is never refunded: its
-- entry goes when its own D reaches 0 (nothing left to give back), or
-- when newer ones push it out. The ticks are those of the rate that wrote
-- them (b): a write under another rate (a reload, a degradation level)
-- forgets every pending reservation, whose refund then gives back the
-- bound of one no longer recorded, measured in time (see undo), or
-- nothing while the state's last write was under another rate than the
-- refund's.
local MAX_PENDING = 4

-- pending returns the pending reservations of tag g (see above) of c's
-- algorithm: their tokens, D by set, and the last writer's token; nil for
-- a tag without any.
local function pending(c, g)
  if not g or g == c.g then
    return nil
  end
  local last, toks, ticks = string.match(g, '^%d+:([^~]*)~([^~]*)~(.*)$')
  if not last then
    return nil
  end
  local p = {last = last, toks = {}, d = {}}
  for tok in string.gmatch(toks, '[^,]+') do
    p.toks[#p.toks + 1] = tok
  end
  for v in string.gmatch(ticks, '[^,]+') do
    p.d[#p.d + 1] = tonumber(v)
  end
  if #p.toks == 0 or #p.d ~= 2 ^ #p.toks - 1 then
    return nil
  end
  return p
end

-- pending_tag returns the tag of c's algorithm that records p (see above),
-- or the algorithm alone when p is nil.
local function pending_tag(c, p)
  if not p then
    return c.g
  end
  local d = {}
  for i, v in ipairs(p.d) do
    d[i] = fmt(v)
  end
  return c.g .. ':' .. p.last .. '~' .. table.concat(p.toks, ',') .. '~' .. table.concat(d, ',')
end

-- pending_floor caps every D of p at m, the ticks missing after an
-- operation every world undergoes alike.
local function pending_floor(p, m)
  if p then
    for i, v in ipairs(p.d) do
      p.d[i] = math.min(v, math.max(m, 0))
    end
  end
end

-- pending_without returns p less its reservation number r, or nil when
-- none is left: refunded (the sets without r, relative to the world
-- without r), or else forgotten (those sets as they are; r's own refund,
-- if any comes, gives back nothing: see undo).
local function pending_without(p, r, refunded)
  local n = #p.toks
  if n == 1 then
    return nil
  end
  local q = {last = '', toks = {}, d = {}}
  local bit = 2 ^ (r - 1)
  for i = 1, n do
    if i ~= r then
      q.toks[#q.toks + 1] = p.toks[i]
    end
  end
  -- Set S of q (a mask over q.toks) is mask m of p: its bits below r as
  -- they are, the others one place up.
  for s = 1, 2 ^ (n - 1) - 1 do
    local low = s % bit
    local m = low + (s - low) * 2
    if refunded then
      q.d[s] = p.d[m + bit] - p.d[bit]
    else
      q.d[s] = p.d[m]
    end
  end
  return q
end

-- pending_prune returns p without the reservations whose own D is 0
-- (their refund would give back nothing, and without them no other D
-- changes), or nil when none is left.
local function pending_prune(p)
  for r = #p.toks, 1, -1 do
    if p.d[2 ^ (r - 1)] <= 0 then
      p = pending_without(p, r, false)
      if not p then
        return nil
      end
    end
  end
  return p
end

-- other_rate reports whether bucket state st was written under another
-- rate than c's (a token or leaky bucket state with b = 0 is read in c's
-- ticks, see the header): its ticks, and its pending record's, are not c's.
local function other_rate(c, st)
  return (c.alg == GCRA or st.b > 0) and st.b ~= c.rq
end

function bucket.write(c, st, nxt, g, ttl)
  local p = pending(c, st.g)
  if p and other_rate(c, st) then
    p = nil -- D in another rate's ticks, which no floor in c's can keep
  end
  if p or g ~= c.g then
    pending_floor(p, nxt.before)
    p = p and pending_prune(p)
    if g ~= c.g then -- a reservation, tagged with its token
      p = p or {toks = {}, d = {}}
      if #p.toks == MAX_PENDING then
        p = pending_without(p, 1, false) or {toks = {}, d = {}}
      end
      local n, need = #p.toks, nxt.a - nxt.before
      p.toks[n + 1] = string.sub(g, #c.g + 2)
      p.d[2 ^ n] = need
      for s = 1, 2 ^ n - 1 do
        p.d[2 ^ n + s] = p.d[s] + need
      end
      p.last = p.toks[n + 1]
    elseif p then
      p.last = ''
    end
    g = pending_tag(c, p)
  end
  put(c, st, g, nxt.t, nxt.a, c.rq, ttl)
end

-- reserved_last reports whether bucket state st was last written by the
-- reservation of token (and so holds nothing else since).
local function reserved_last(c, st, token)
  local p = pending(c, st.g)
  return p ~= nil and p.last == token
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
--
-- The refund of a cross-slot reservation (token) gives back its D instead
-- (see pending): exactly what the bucket misses because of it. One the
-- bucket no longer records (its D reached 0, more than MAX_PENDING newer
-- reservations pushed it out, admitted calls' among them, or the key was
-- written by an earlier version) gives back the bound above as if the
-- bucket had been full at t0 (m0 = 0): a difference between two worlds
-- that refill alike shrinks by at most rq ticks a tick, so the bucket
-- still misses at least need - rq·(t-t0) ticks because of it, whatever
-- was written and refunded since. (The mark's own m0 may count another
-- reservation refunded since, and give back too much.) That holds with t
-- the latest time the bucket has seen since t0, which the state does not
-- keep: after the clock stepped back, the last write's t may be earlier,
-- and the refund gives back up to min(need, rq·(the step)) ticks that had
-- refilled to the reservation alone (see docs/decisions.md).
function bucket.undo(c, st, mark, g, token)
  if other_rate(c, st) then
    return -- written under another rate: its ticks are not ours
  end
  local p = pending(c, st.g)
  local colon = string.find(mark, ':', 1, true)
  local t0, m0 = tonumber(string.sub(mark, 1, colon - 1)), tonumber(string.sub(mark, colon + 1))
  if token then
    for r, tok in ipairs(p and p.toks or {}) do
      if tok == token then
        local back = p.d[2 ^ (r - 1)]
        put(c, st, pending_tag(c, pending_without(p, r, true)), st.t, math.max(st.a - back, 0), st.b, nil)
        return
      end
    end
    m0 = 0
  end
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
  local left = math.max(st.a - back, 0)
  if p then
    pending_floor(p, left)
    p = pending_prune(p)
    if p then
      p.last = ''
    end
    g = pending_tag(c, p)
  end
  put(c, st, g, st.t, left, st.b, nil)
end
