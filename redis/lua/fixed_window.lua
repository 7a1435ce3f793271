-- fixed_window.lua: sluice.AlgorithmFixedWindow (internal/algo/fixed_window.go).
-- t = start of the window the count belongs to, a = units admitted in it
-- (a string, see state.lua). Only a window's start and end and differences
-- of times: exact for w up to 2^46 µs (sluice.MaxFixedWindow, arith.lua),
-- and for calendar periods.

local fixed_window = {}
ALG[1] = fixed_window

-- fw_window returns the start and end of c's window that holds t: of w µs
-- from the epoch, or of its calendar period.
-- Go twin: internal/algo.(*Params).Window
local function fw_window(c, t)
  if c.period == 0 then
    local start = window_start(t, c.w)
    return start, start + c.w
  end
  return calendar_window(c.period, c.off, t)
end

-- Go twin: internal/algo.FixedWindow
function fixed_window.decide(c, st, now, cost, v, nxt)
  local q = c.q
  local start, stop = fw_window(c, now)
  local count = math.max(st.a, 0)
  local last = clamp_time(st.t)
  if count > 0 and last >= start then
    start, stop = fw_window(c, last) -- the same window, or a clock step back
  else
    count = 0
  end
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
  put(c, st, g, nxt.t, nxt.a, 0, ttl)
end

-- mark is the undo mark of a write of nxt: the window's start.
function fixed_window.mark(c, nxt)
  return nxt.t
end

-- undo takes back cost units admitted in the window starting at mark, if
-- the key still counts that window.
function fixed_window.undo(c, st, mark, g)
  if st.t == tonumber(mark) then
    put(c, st, g, st.t, math.max(st.a - c.cost, 0), 0, nil)
  end
end
