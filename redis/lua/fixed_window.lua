-- fixed_window.lua: sluice.AlgorithmFixedWindow (internal/algo/fixed_window.go).
-- t = the time of the last charge (its receipt; an earlier version's state:
-- its window's start), a = units admitted in the window of c that holds t
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

-- fw_counted returns the start of c's window that holds t, a state's t:
-- the window its count belongs to.
local function fw_counted(c, t)
  local start = fw_window(c, clamp_time(t))
  return start
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
    v.charged = math.max(now, start)
    nxt.t, nxt.a, admitted = v.charged, count, true
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

-- mark is the undo mark of a write of nxt: the start of its window.
function fixed_window.mark(c, nxt)
  return fw_counted(c, nxt.t)
end

-- undo takes back cost units admitted in the window starting at mark, if
-- the key still counts that window (its t falls in it).
-- Go twin: internal/algo.Refund
function fixed_window.undo(c, st, mark, g)
  if fw_counted(c, st.t) == tonumber(mark) then
    put(c, st, g, st.t, math.max(st.a - c.cost, 0), 0, nil)
  end
end
