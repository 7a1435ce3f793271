-- sliding_counter.lua: sluice.AlgorithmSlidingCounter (internal/algo/
-- sliding_counter.go). t = start of the current aligned window, a = units
-- admitted in it, b = units admitted in the window before (a string, see
-- state.lua). The estimate
-- ⌊b·(w-e)/w⌋ multiplies up to 2^40 by 2^45: muldivmod keeps it exact.

local sliding_counter = {}
ALG[3] = sliding_counter

-- fades returns the smallest offset e in [0, w] into a window at which
-- ⌊n·(w-e)/w⌋ ≤ k, for n, k ≥ 0. For n > k,
-- w - e = ⌊((k+1)·w - 1)/n⌋, which is below w.
-- Go twin: internal/algo.counterFades
local function fades(n, k, w)
  if n <= k then
    return 0
  end
  local quo, rem = muldivmod(k + 1, w, n)
  local span = quo
  if rem == 0 then
    span = quo - 1
  end
  if span >= w then
    return 0
  end
  return w - span
end

-- counter_retry returns the earliest time a check of cost ≤ q fits.
-- Go twin: internal/algo.counterRetry
local function counter_retry(c, start, curr, prev, cost)
  local q, w = c.q, c.w
  local k = q - curr - cost
  if k >= 0 then
    local e = fades(math.min(prev, q), k, w)
    if e < w then
      return start + e
    end
  end
  return start + w + fades(math.min(curr, q), q - cost, w)
end

-- Go twin: internal/algo.SlidingCounter
function sliding_counter.decide(c, st, now, cost, v, nxt)
  local q, w = c.q, c.w
  local start, curr, prev = window_start(now, w), math.max(st.a, 0), math.max(st.b, 0)
  local last = window_start(clamp_time(st.t), w)
  if curr == 0 and prev == 0 then
    -- the zero State: nothing recorded, nothing to hold time back
  elseif start <= last then
    start = last -- the same window, or a clock step back
  elseif start == last + w then
    prev, curr = curr, 0
  else
    prev, curr = 0, 0
  end
  local e = math.max(now, start) - start
  local used = muldivmod(math.min(prev, q), w - e, w) + curr
  verdict(v, cost == 0 or used <= q - cost)
  local admitted = false
  if cost > q then
    v.retry = NEVER
  elseif not v.ok then
    v.retry = counter_retry(c, start, curr, prev, cost) - now
  elseif cost > 0 then
    curr = curr + cost
    used = used + cost
    nxt.t, nxt.a, nxt.b, admitted = start, curr, prev, true
    v.charged = math.max(now, start)
  end
  v.rem = math.max(q - used, 0)
  -- Full again once the estimate is 0: a count weighs at most q (a state
  -- written under a larger quantity is clamped to this one's).
  if curr > 0 then
    v.reset = start + w + fades(math.min(curr, q), 0, w) - now
  elseif used > 0 then
    v.reset = start + fades(math.min(prev, q), 0, w) - now
  end
  return v, admitted and nxt or nil
end

function sliding_counter.write(c, st, nxt, g, ttl)
  put(c, st, g, nxt.t, nxt.a, nxt.b, ttl)
end

-- mark is the undo mark of a write of nxt: the window's start.
function sliding_counter.mark(c, nxt)
  return nxt.t
end

-- undo takes back cost units admitted in the window starting at mark: from
-- the current count while that window is current, from the previous count
-- once it is the previous one.
function sliding_counter.undo(c, st, mark, g)
  mark = tonumber(mark)
  if st.t == mark then
    put(c, st, g, st.t, math.max(st.a - c.cost, 0), st.b, nil)
  elseif st.t == mark + c.w then
    put(c, st, g, st.t, st.a, math.max(st.b - c.cost, 0), nil)
  end
end
