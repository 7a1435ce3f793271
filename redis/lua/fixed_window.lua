-- fixed_window.lua: sluice.AlgorithmFixedWindow (internal/algo/fixed_window.go).
-- t = start of the window the count belongs to, a = units admitted in it
-- (a string, see state.lua). Only window_start, start + w and differences
-- of times: exact for w up to 2^46 µs (sluice.MaxFixedWindow, arith.lua).

local fixed_window = {}
ALG[1] = fixed_window

-- Go twin: internal/algo.FixedWindow
function fixed_window.decide(c, st, now, cost, v, nxt)
  local q, w = c.q, c.w
  local start, count = window_start(now, w), math.max(st.a, 0)
  local last = clamp_time(st.t)
  if count > 0 and last >= start then
    start = window_start(last, w) -- the same window, or a clock step back
  else
    count = 0
  end
  local stop = start + w
  verdict(v, cost == 0 or count <= q - cost)
  local admitted = false
  if cost > q then
    v.retry = NEVER
  elseif not v.ok then
    v.retry = stop - now
  elseif cost > 0 then
    count = count + cost
    nxt.t, nxt.a, admitted = start, count, true
    v.charged = math.max(now, start)
  end
  v.rem = math.max(q - count, 0)
  if count > 0 then
    v.reset = stop - now
  end
  return v, admitted and nxt or nil
end

function fixed_window.write(c, st, nxt, g, ttl)
  put(c, g, nxt.t, nxt.a, 0, ttl)
end

-- mark is the undo mark of a write of nxt: the window's start.
function fixed_window.mark(c, nxt)
  return nxt.t
end

-- undo takes back cost units admitted in the window starting at mark, if
-- the key still counts that window.
function fixed_window.undo(c, st, mark, g)
  if st.t == tonumber(mark) then
    put(c, g, st.t, math.max(st.a - c.cost, 0), 0, nil)
  end
end
